package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestReadmeSettings: the README's settings table and --help agree. Every
// flag --help lists has one row, with its variable and its default (the
// data folder's default depends on the machine, so only its row is
// required); every row is a flag --help lists.
func TestReadmeSettings(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "\n## Settings\n")
	if !ok {
		t.Fatal("README.md has no Settings section")
	}
	table, _, _ = strings.Cut(table, "\n## ")
	type row struct{ env, def string }
	rows := map[string]row{}
	rowRe := regexp.MustCompile("(?m)^\\| `--([a-z0-9-]+)` \\| `([A-Z0-9_]+)` \\| ([^|]*) \\|")
	for _, m := range rowRe.FindAllStringSubmatch(table, -1) {
		if _, dup := rows[m[1]]; dup {
			t.Errorf("README lists --%s twice", m[1])
		}
		rows[m[1]] = row{m[2], strings.TrimSpace(m[3])}
	}

	var out bytes.Buffer
	if code := Main(context.Background(), []string{"--help"}, &out, &out, env(nil)); code != 0 {
		t.Fatalf("--help: exit %d", code)
	}
	helpRe := regexp.MustCompile(`(?m)^  --([a-z0-9-]+)[^\n]*\n(?:      [^\n]*\n)*?      env ([A-Z0-9_]+), default ([^\n]*)$`)
	flags := helpRe.FindAllStringSubmatch(out.String(), -1)
	if len(flags) < 10 {
		t.Fatalf("read only %d flags from --help", len(flags))
	}
	inHelp := map[string]bool{}
	for _, f := range flags {
		name, envVar, def := f[1], f[2], f[3]
		inHelp[name] = true
		r, ok := rows[name]
		switch {
		case !ok:
			t.Errorf("README's settings table has no row for --%s (%s)", name, envVar)
			continue
		case r.env != envVar:
			t.Errorf("README gives --%s the variable %s; --help says %s", name, r.env, envVar)
		}
		if name == "data" {
			continue
		}
		if def == "not set" {
			if strings.HasPrefix(r.def, "`") {
				t.Errorf("README gives --%s the default %s; --help says it is not set", name, r.def)
			}
		} else if !strings.HasPrefix(r.def, "`"+def+"`") && !sameDuration(r.def, def) {
			t.Errorf("README gives --%s the default %s; --help says %s", name, r.def, def)
		}
	}
	for name := range rows {
		if !inHelp[name] {
			t.Errorf("README's settings table lists --%s, which --help does not", name)
		}
	}
}

// sameDuration reports whether a README default ("`1h` ...") and a --help
// default ("1h0m0s") are the same duration.
func sameDuration(readme, help string) bool {
	_, v, _ := strings.Cut(readme, "`")
	v, _, _ = strings.Cut(v, "`")
	a, err1 := time.ParseDuration(v)
	b, err2 := time.ParseDuration(help)
	return err1 == nil && err2 == nil && a == b
}
