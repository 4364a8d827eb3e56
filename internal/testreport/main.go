// Command testreport runs `go test -json ...` and prints what plain
// `go test` prints (each package's result, a failing test's output, build
// errors), then one "SKIP: package Test: reason" line for every test that
// skipped itself and for every "SKIP: reason" line a test logged when it
// left out part of itself (the accessibility checks without axe-core).
// make test gathers those lines into its closing list. It exits with go
// test's code.
//
//	go run ./internal/testreport go test -json -race ./...
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: testreport go test -json [flags] [packages]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	skips := report(out, os.Stdout)
	err = cmd.Wait()
	for _, s := range skips {
		fmt.Println(s)
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		os.Exit(exit.ExitCode())
	case err != nil:
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
}

// event is one line of go test -json.
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

// report reads go test -json from r, writes plain go test's output to w,
// and returns the skip lines.
func report(r io.Reader, w io.Writer) []string {
	outputs := map[string][]string{} // a test's output lines, by package and test
	var skips []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			fmt.Fprintln(w, sc.Text()) // not an event: pass it on
			continue
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "output", "build-output":
			if e.Test == "" {
				// Package-level lines: results, panics, build errors; the
				// -json-only "=== RUN"-style lines are left out.
				if !strings.HasPrefix(e.Output, "=== ") && !strings.HasPrefix(e.Output, "PASS\n") {
					fmt.Fprint(w, e.Output)
				}
				continue
			}
			outputs[key] = append(outputs[key], e.Output)
			if why, ok := strings.CutPrefix(logText(e.Output), "SKIP: "); ok {
				skips = append(skips, fmt.Sprintf("SKIP: %s %s: %s", e.Package, e.Test, why))
			}
		case "fail":
			if e.Test != "" {
				fmt.Fprint(w, strings.Join(outputs[key], ""))
			}
			delete(outputs, key)
		case "skip":
			if e.Test != "" {
				skips = append(skips, fmt.Sprintf("SKIP: %s %s: %s", e.Package, e.Test, skipReason(outputs[key])))
			}
			delete(outputs, key)
		case "pass":
			delete(outputs, key)
		}
	}
	return skips
}

// skipReason is what a skipped test logged, on one line: its log lines
// without the run and result markers and the file:line prefixes.
func skipReason(lines []string) string {
	var parts []string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- ") {
			continue
		}
		parts = append(parts, logText(l))
	}
	if len(parts) == 0 {
		return "no reason given"
	}
	return strings.Join(parts, " ")
}

// logText is a test's log line without its indent and file:line prefix.
func logText(l string) string {
	l = strings.TrimSpace(l)
	if pos, rest, ok := strings.Cut(l, ": "); ok && strings.Contains(pos, ".go:") && !strings.Contains(pos, " ") {
		return rest
	}
	return l
}
