package sim

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunCLIErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "bogus"},
		{[]string{"--n", "x"}, "invalid value"},
		{[]string{"--n", "0"}, "--n must be"},
		{[]string{"--n", "1001"}, "--n must be"},
		{[]string{"--port", "65530", "--n", "10"}, "--port 65530"},
		{[]string{"--port", "-5"}, "--port"},
		{[]string{"--control-port", "70000"}, "--control-port"},
		{[]string{"--port", "19000", "--control-port", "19003", "--n", "5"}, "one of the instances' ports"},
		{[]string{"--mix", "chaos"}, `"chaos" (known: healthy, hostile, mixed)`},
		{[]string{"--latency-scale", "0"}, "--latency-scale"},
		{[]string{"--host", "0.0.0.0"}, "not a loopback"},
		{[]string{"serve"}, `unexpected argument "serve"`},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr strings.Builder
			err := RunCLI(context.Background(), tc.args, &stdout, &stderr)
			if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrUsage mentioning %q", err, tc.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("printed %q", stdout.String())
			}
		})
	}
	// The help goes to stdout, its flags written with two dashes.
	for _, h := range []string{"-h", "--help"} {
		var stdout strings.Builder
		if err := RunCLI(context.Background(), []string{h}, &stdout, io.Discard); err != nil ||
			!strings.Contains(stdout.String(), "\n  --write-directory string\n") || strings.Contains(stdout.String(), "\n  -w") {
			t.Errorf("%s: %v, usage %q", h, err, stdout.String())
		}
	}
}

func TestRunCLI(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "instances.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := RunCLI(ctx, []string{"--n", "6", "--mix", "healthy", "--seed", "2", "--port", "0",
			"--write-directory", dir, "--control-port", "0", "--latency-scale", "0.01"}, pw, io.Discard)
		pw.CloseWithError(err)
		done <- err
	}()
	var control string
	urls := map[string]bool{}
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		switch {
		case f[0] == "control":
			control = f[1]
		case strings.HasPrefix(f[0], "sim-"):
			urls[f[1]] = true
		}
		if strings.HasPrefix(sc.Text(), "serving 6 instances") {
			break
		}
	}
	if len(urls) != 6 || control == "" {
		t.Fatalf("printed %d instances, control %q", len(urls), control)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()

	b, err := os.ReadFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Instances map[string]json.RawMessage `json:"instances"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	for u := range urls {
		if _, ok := file.Instances[u]; !ok {
			t.Errorf("directory lacks %s", u)
		}
	}

	var first string
	for u := range urls {
		first = u
		break
	}
	if a := get(t, first+"search?q=cli+test&format=json", nil); a.status != 200 {
		t.Errorf("search on %s: %d %v", first, a.status, a.err)
	}
	var truth map[string]Truth
	if err := json.Unmarshal(get(t, control+"truth", nil).body, &truth); err != nil {
		t.Fatal(err)
	}
	if truth[first].Searches != 1 || len(truth) != 6 {
		t.Errorf("control truth: %+v", truth[first])
	}

	cancel()
	if err := <-done; err != nil {
		t.Errorf("RunCLI: %v", err)
	}
	if a := get(t, first+"healthz", nil); a.err == nil {
		t.Error("instance still answers after RunCLI returned")
	}
}
