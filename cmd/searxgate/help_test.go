package main

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestHelp: --help, -h, help and serve --help print the same help to
// stdout: every subcommand Main knows, and every flag of serve written as
// --flag value with its environment variable and its default.
func TestHelp(t *testing.T) {
	run := func(args ...string) (code int, stdout, stderr string) {
		var out, errb bytes.Buffer
		code = Main(context.Background(), args, &out, &errb, env(map[string]string{"SEARXGATE_LISTEN": "0.0.0.0:1"}))
		return code, out.String(), errb.String()
	}
	code, help, stderr := run("--help")
	if code != 0 || stderr != "" {
		t.Fatalf("--help: exit %d, stderr %q", code, stderr)
	}
	for _, args := range [][]string{{"-h"}, {"help"}, {"serve", "--help"}, {"serve", "-h"}, {"--deadline", "2s", "--help"}} {
		if code, out, stderr := run(args...); code != 0 || out != help || stderr != "" {
			t.Errorf("%q: exit %d, stderr %q, and not the same help as --help:\n%s", args, code, stderr, out)
		}
	}

	for _, cmd := range mainCommands(t) {
		if !strings.Contains(help, "searxgate "+cmd) && !strings.Contains(help, "searxgate ["+cmd+"]") {
			t.Errorf("Main knows the subcommand %q but --help does not list it (add it to commands)", cmd)
		}
	}

	def := defaultConfig()
	for _, o := range def.options() {
		head := "\n  --" + o.name
		if p := placeholder(o); p != "" {
			head += " " + p
		}
		if !strings.Contains(help, head+"\n") {
			t.Errorf("--help has no line %q", strings.TrimSpace(head))
		}
		d := valueText(o.ptr)
		if d == "" {
			d = "not set"
		}
		if want := "env " + envName(o.name) + ", default " + d + "\n"; !strings.Contains(help, want) {
			t.Errorf("--help does not say %q for --%s", strings.TrimSpace(want), o.name)
		}
	}
	for _, want := range []string{"\n  --listen host:port\n", "default 127.0.0.1:8888\n", "\n  --deadline duration\n", "default 4s\n",
		"\n  --allow-private\n", "\n  --budget-20s n\n", "env SEARXGATE_CONTACT, default not set\n"} {
		if !strings.Contains(help, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
	// The environment does not change the defaults shown.
	if strings.Contains(help, "0.0.0.0:1") {
		t.Error("--help shows a value from the environment as a default")
	}
	if m := regexp.MustCompile(`(?m)^\s+-[a-z]`).FindString(help); m != "" {
		t.Errorf("--help writes a flag with one dash: %q", m)
	}
	for i, l := range strings.Split(help, "\n") {
		if len(l) > 100 {
			t.Errorf("line %d of --help is %d wide: %q", i+1, len(l), l)
		}
	}

	// A wrong flag is one line on stderr that points to --help, not the
	// whole help.
	code, out, stderr := run("--nope")
	if code != 2 || out != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "-nope") || !strings.Contains(stderr, "searxgate --help") {
		t.Errorf("--nope: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	code, out, stderr = run("bogus")
	if code != 2 || out != "" || !strings.Contains(stderr, `"bogus"`) || !strings.Contains(stderr, "searxgate --help") {
		t.Errorf("bogus: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

// mainCommands reads the subcommands Main dispatches on from main.go's
// switch, so that a new one cannot be left out of --help.
func mainCommands(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "Main" {
			continue
		}
		ast.Inspect(fn, func(n ast.Node) bool {
			if cc, ok := n.(*ast.CaseClause); ok {
				for _, e := range cc.List {
					if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						s, _ := strconv.Unquote(lit.Value)
						if !strings.HasPrefix(s, "-") {
							cmds = append(cmds, s)
						}
					}
				}
			}
			return true
		})
	}
	if len(cmds) < 3 {
		t.Fatalf("found only %q in Main's switch", cmds)
	}
	return cmds
}
