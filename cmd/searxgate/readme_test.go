package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// docFiles are the README and every page under docs/, by path from the
// repository's root, with their text.
func docFiles(t *testing.T) map[string]string {
	t.Helper()
	files := map[string]string{}
	paths, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(paths, "../../README.md", "../../BENCHMARKS.md") {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[strings.TrimPrefix(p, "../../")] = string(b)
	}
	return files
}

// TestSettingsDoc: docs/settings.md is what `searxgate help settings`
// writes from the flag definitions (go generate ./cmd/searxgate makes it).
func TestSettingsDoc(t *testing.T) {
	b, err := os.ReadFile("../../docs/settings.md")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if code := Main(context.Background(), []string{"help", "settings"}, &out, &out, env(nil)); code != 0 {
		t.Fatalf("help settings: exit %d", code)
	}
	if out.String() != string(b) {
		t.Error("docs/settings.md is not what the flags say: run go generate ./cmd/searxgate")
	}
	for _, o := range settingOptions() {
		if !strings.Contains(out.String(), "| `--"+o.name+"` | `"+envName(o.name)+"` |") {
			t.Errorf("the settings page has no row for --%s", o.name)
		}
	}
}

// TestReadmeShort: the README stays a first page, 15 KB at most, with the
// two commands that work on a fresh machine.
func TestReadmeShort(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 15*1024 {
		t.Errorf("README.md is %d bytes, over 15 KB: move what is not the first page to docs/", len(b))
	}
	for _, cmd := range []string{"```sh\nmake run\n```", "```sh\nmake test\n```"} {
		if !bytes.Contains(b, []byte(cmd)) {
			t.Errorf("README.md lacks %q", cmd)
		}
	}
}

// foreignFlags are the flags the docs name of other programs: each may
// appear only in a paragraph that names its program.
var foreignFlags = map[string]string{
	"--now": "systemctl", "--transport": "claude", "--header": "claude",
	"--offline": "systemd-analyze", "--name": "podman", "--runtime": "podman",
	"--cgroup-manager": "podman", "--format": "podman", "--prefix": "npm",
	"--save": "redis-server", "--bind": "redis-server", "--appendonly": "redis-server",
	"--maxmemory": "redis-server", "--maxmemory-policy": "redis-server",
	"--latency": "wrk",
}

// pendingFlags are flags a page names wrongly, waiting for that page's
// own fix: page and flag, each named here so the exception is seen.
var pendingFlags = map[string]string{
	"docs/parity.md --formats": "no such flag: the format row of parity.md is being rewritten",
}

// programFlags are every flag of every subcommand, read from their help.
func programFlags(t *testing.T) map[string]bool {
	t.Helper()
	flags := map[string]bool{"--help": true}
	for _, o := range settingOptions() {
		flags["--"+o.name] = true
	}
	re := regexp.MustCompile(`(?m)^  (--[a-z0-9-]+)`)
	for _, sub := range []string{"mcp", "healthcheck", "sim"} {
		var out bytes.Buffer
		Main(context.Background(), []string{sub, "--help"}, &out, &out, env(nil))
		m := re.FindAllStringSubmatch(out.String(), -1)
		if len(m) < 2 {
			t.Fatalf("%s --help lists %d flags:\n%s", sub, len(m), out.String())
		}
		for _, f := range m {
			flags[f[1]] = true
		}
	}
	return flags
}

// TestDocsNameRealSettings: every --flag and SEARXGATE_* variable the
// README and docs/ name is one the program has (another program's flag
// only beside that program's name).
func TestDocsNameRealSettings(t *testing.T) {
	flags := programFlags(t)
	vars := map[string]bool{
		"SEARXGATE_GATEWAY": true, // searxgate mcp's
		"SEARXGATE_CONTATC": true, // the typo in the unknown-variable warning's example
	}
	for _, o := range settingOptions() {
		vars[envName(o.name)] = true
	}
	flagRe := regexp.MustCompile(`(?:^|[^a-zA-Z0-9-])(--[a-z][a-z0-9-]*)`)
	varRe := regexp.MustCompile(`SEARXGATE_[A-Z0-9_]+`)
	for path, text := range docFiles(t) {
		for _, para := range strings.Split(text, "\n\n") {
			for _, m := range flagRe.FindAllStringSubmatch(para, -1) {
				f := m[1]
				if flags[f] || pendingFlags[path+" "+f] != "" {
					continue
				}
				if tool, ok := foreignFlags[f]; ok && strings.Contains(para, tool) {
					continue
				}
				t.Errorf("%s names %s, which is no flag of searxgate:\n%.300s", path, f, para)
			}
			for _, v := range varRe.FindAllString(para, -1) {
				if !vars[v] {
					t.Errorf("%s names %s, which is no variable of searxgate", path, v)
				}
			}
		}
	}
	for k := range pendingFlags {
		path, f, _ := strings.Cut(k, " ")
		if !strings.Contains(docFiles(t)[path], f) {
			t.Errorf("pendingFlags lists %s in %s, which no longer names it: drop the exception", f, path)
		}
	}
}

// slug is the anchor GitHub gives a heading.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestDocsLinks: every relative link in the README and docs/ names a file
// that exists, and an anchor a heading of it.
func TestDocsLinks(t *testing.T) {
	files := docFiles(t)
	linkRe := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headRe := regexp.MustCompile(`(?m)^#+ (.+)$`)
	fence := regexp.MustCompile("(?s)```.*?```")
	n := 0
	for path, text := range files {
		for _, m := range linkRe.FindAllStringSubmatch(fence.ReplaceAllString(text, ""), -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			n++
			target, frag, _ := strings.Cut(link, "#")
			file := path
			if target != "" {
				file = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(path), target)))
				if _, err := os.Stat("../../" + file); err != nil {
					t.Errorf("%s links to %s, which does not exist", path, link)
					continue
				}
			}
			if frag == "" {
				continue
			}
			body, ok := files[file]
			if !ok {
				t.Errorf("%s links to an anchor of %s, which is not a page checked here", path, link)
				continue
			}
			found := false
			for _, h := range headRe.FindAllStringSubmatch(fence.ReplaceAllString(body, ""), -1) {
				found = found || slug(strings.ReplaceAll(h[1], "`", "")) == frag
			}
			if !found {
				t.Errorf("%s links to %s: %s has no such heading", path, link, file)
			}
		}
	}
	if n < 20 {
		t.Errorf("read %d relative links, fewer than the docs hold", n)
	}
}

// settingOptions are serve's options with their defaults.
func settingOptions() []option {
	c := defaultConfig()
	return c.options()
}
