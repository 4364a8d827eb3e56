package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/searxgate/searxgate/proxy"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestConfigFlagsOverEnv(t *testing.T) {
	c, err := parseConfig([]string{"--deadline", "2s", "--instance", "https://own.example/"},
		env(map[string]string{
			"SEARXGATE_DEADLINE": "9s", "SEARXGATE_CACHE_TTL": "5m", "SEARXGATE_ALLOW_PRIVATE": "true",
			"SEARXGATE_INSTANCE": "https://a.example/, https://b.example/",
		}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Deadline != 2*time.Second {
		t.Errorf("deadline %v: the flag did not win over the environment", c.Deadline)
	}
	if c.CacheTTL != 5*time.Minute || !c.AllowPrivate {
		t.Errorf("cache-ttl %v, allow-private %v: the environment was not read", c.CacheTTL, c.AllowPrivate)
	}
	if !slices.Equal(c.Instances, []string{"https://own.example/"}) {
		t.Errorf("instances %v: --instance must replace SEARXGATE_INSTANCE", c.Instances)
	}

	c, err = parseConfig(nil, env(map[string]string{"SEARXGATE_INSTANCE": "https://a.example/, https://b.example/"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Instances, []string{"https://a.example/", "https://b.example/"}) {
		t.Errorf("instances from the environment: %v", c.Instances)
	}
	if d := defaultConfig(); c.Listen != d.Listen || c.Deadline != 4*time.Second || c.Budget20s != 10 || c.Budget10m != 100 {
		t.Errorf("defaults changed: %+v", c)
	}
	if c.OwnBudget20s != 0 || c.OwnBudget10m != 0 || c.OwnMaxInFlight != 8 || c.Queue != 256 || ownBudget(c) != nil {
		t.Errorf("own-instance defaults: budgets %d/%d (%v), in flight %d, queue %d; want none, 8, 256",
			c.OwnBudget20s, c.OwnBudget10m, ownBudget(c), c.OwnMaxInFlight, c.Queue)
	}
}

// TestOwnInstanceSettings: the own-instance flags and their variables reach
// the proxy's and the pool's settings; a window left at 0 is no window.
func TestOwnInstanceSettings(t *testing.T) {
	c, err := parseConfig([]string{"--own-budget-20s", "30", "--own-max-in-flight", "16"},
		env(map[string]string{"SEARXGATE_OWN_BUDGET_20S": "5", "SEARXGATE_QUEUE": "64"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.OwnBudget20s != 30 || c.OwnMaxInFlight != 16 || c.Queue != 64 {
		t.Fatalf("own budget %d, in flight %d, queue %d", c.OwnBudget20s, c.OwnMaxInFlight, c.Queue)
	}
	if got := ownBudget(c); !slices.Equal(got, []proxy.Window{{Max: 30, Per: 20 * time.Second}}) {
		t.Errorf("own budget %v, want 30 per 20s only", got)
	}
	c.OwnBudget10m = 200
	if got := ownBudget(c); len(got) != 2 || got[1] != (proxy.Window{Max: 200, Per: 10 * time.Minute}) {
		t.Errorf("own budget %v, want 30 per 20s and 200 per 10m", got)
	}
}

func TestConfigErrorsNameFlagAndEnv(t *testing.T) {
	cases := []struct {
		args []string
		env  map[string]string
		want []string
	}{
		{[]string{"--deadline", "1h"}, nil, []string{"--deadline", "SEARXGATE_DEADLINE"}},
		{nil, map[string]string{"SEARXGATE_DEADLINE": "soon"}, []string{"SEARXGATE_DEADLINE", "duration"}},
		{[]string{"--listen", "nowhere"}, nil, []string{"--listen", "SEARXGATE_LISTEN"}},
		{[]string{"--instance", "ftp://x.example/"}, nil, []string{"--instance", "SEARXGATE_INSTANCE"}},
		{[]string{"--strategy", "fastest"}, nil, []string{"--strategy", "SEARXGATE_STRATEGY"}},
		{[]string{"--budget-20s", "-1"}, nil, []string{"--budget-20s", "SEARXGATE_BUDGET_20S"}},
		{[]string{"--own-budget-20s", "-1"}, nil, []string{"--own-budget-20s", "SEARXGATE_OWN_BUDGET_20S"}},
		{nil, map[string]string{"SEARXGATE_OWN_BUDGET_10M": "20000"}, []string{"--own-budget-10m", "SEARXGATE_OWN_BUDGET_10M"}},
		{[]string{"--own-max-in-flight", "0"}, nil, []string{"--own-max-in-flight", "SEARXGATE_OWN_MAX_IN_FLIGHT"}},
		{[]string{"--queue", "0"}, nil, []string{"--queue", "SEARXGATE_QUEUE"}},
		{[]string{"--fanout", "4"}, nil, []string{"--fanout", "SEARXGATE_FANOUT", "--max-fanout"}},
		{[]string{"--max-fanout", "0"}, nil, []string{"--max-fanout", "SEARXGATE_MAX_FANOUT"}},
		{[]string{"--reader-queue-mib", "4"}, nil, []string{"--reader-queue-mib (SEARXGATE_READER_QUEUE_MIB)", "4 is outside 5 (one PDF of the largest size read) to 256"}},
		{nil, map[string]string{"SEARXGATE_READER_QUEUE_MIB": "1024"}, []string{"--reader-queue-mib (SEARXGATE_READER_QUEUE_MIB)", "1024 is outside"}},
		{nil, map[string]string{"SEARXGATE_QUEUE": "many"}, []string{"SEARXGATE_QUEUE", "whole number"}},
		{[]string{"--log-format", "xml"}, nil, []string{"--log-format", "SEARXGATE_LOG_FORMAT"}},
		{[]string{"--json-shape", "2026"}, nil, []string{"--json-shape (SEARXGATE_JSON_SHAPE)", `"2026"`, "classic or current"}},
		{nil, map[string]string{"SEARXGATE_JSON_SHAPE": "objects"}, []string{"--json-shape (SEARXGATE_JSON_SHAPE)", "classic or current"}},
		{[]string{"--public-url", "example.org"}, nil, []string{"--public-url", "SEARXGATE_PUBLIC_URL"}},
		{[]string{"stray"}, nil, []string{"unexpected argument"}},
		// The operator's first minutes: a value of the wrong kind says the
		// kind with an example; a port out of range is caught before
		// anything starts; an unknown flag is written with two dashes.
		{[]string{"--deadline", "4"}, nil, []string{"--deadline (SEARXGATE_DEADLINE)", `"4"`, "a duration, e.g. 4s"}},
		{nil, map[string]string{"SEARXGATE_DEADLINE": "4"}, []string{"SEARXGATE_DEADLINE", "(--deadline)", "a duration, e.g. 4s"}},
		{[]string{"--queue", "lots"}, nil, []string{"--queue (SEARXGATE_QUEUE)", "whole number"}},
		{[]string{"--access-log=maybe"}, nil, []string{"--access-log (SEARXGATE_ACCESS_LOG)", "true or false"}},
		{[]string{"--listen", ":99999"}, nil, []string{"--listen (SEARXGATE_LISTEN)", `"99999"`, "65535"}},
		{[]string{"--listen", "127.0.0.1:http"}, nil, []string{"--listen (SEARXGATE_LISTEN)", "65535"}},
		{[]string{"--listen", "8888"}, nil, []string{"--listen (SEARXGATE_LISTEN)", "e.g. 127.0.0.1:8888"}},
		{[]string{"--nope"}, nil, []string{"--nope", "searxgate --help"}},
		{[]string{"--directory", "http://127.0.0.1:19000/instances.json"}, nil, []string{"--directory (SEARXGATE_DIRECTORY)", "--allow-private"}},
		{[]string{"--directory", "http://localhost/instances.json"}, nil, []string{"--directory (SEARXGATE_DIRECTORY)", "--allow-private"}},
	}
	for _, c := range cases {
		_, err := parseConfig(c.args, env(c.env), io.Discard)
		if err == nil {
			t.Errorf("%v %v: no error", c.args, c.env)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v %v: error %q does not say %q", c.args, c.env, err, w)
			}
		}
	}
	// The JSON shape is classic unless set, by flag or variable.
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{{nil, nil, "classic"}, {[]string{"--json-shape", "current"}, nil, "current"}, {nil, map[string]string{"SEARXGATE_JSON_SHAPE": "current"}, "current"}} {
		if cfg, err := parseConfig(c.args, env(c.env), io.Discard); err != nil || cfg.JSONShape != c.want {
			t.Errorf("%v %v: shape %q (%v), want %q", c.args, c.env, cfg.JSONShape, err, c.want)
		}
	}
	// With --allow-private the same list is fine.
	if _, err := parseConfig([]string{"--directory", "http://127.0.0.1:19000/instances.json", "--allow-private"}, env(nil), io.Discard); err != nil {
		t.Errorf("a loopback list with --allow-private: %v", err)
	}

	// Every problem is reported at once.
	_, err := parseConfig([]string{"--deadline", "1h", "--max-attempts", "99"}, env(nil), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--deadline") || !strings.Contains(err.Error(), "--max-attempts") {
		t.Errorf("two bad flags: %v", err)
	}
}

// TestStartErrorsNameTheSetting: what stops searxgate at start names the
// setting that fixes it: an own instance on a private address without
// --allow-private, a --data that is not a folder it can make, a port in
// use (--listen), a list file that does not exist (--directory, none).
func TestStartErrorsNameTheSetting(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	missing := filepath.Join(t.TempDir(), "instances.json")
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"private instance", []string{"--instance", "http://127.0.0.1:9/", "--data", t.TempDir()},
			[]string{"--instance (SEARXGATE_INSTANCE)", "not a public address: 127.0.0.1", "--allow-private", "SEARXGATE_ALLOW_PRIVATE=true"}},
		{"data is a file", []string{"--data", filepath.Join(notDir, "data")},
			[]string{"--data (SEARXGATE_DATA)", "cannot make the folder"}},
		{"port in use", []string{"--listen", taken.Addr().String(), "--data", t.TempDir()},
			[]string{"--listen (SEARXGATE_LISTEN): " + taken.Addr().String() + " is in use by another program", "another address with --listen, e.g. --listen 127.0.0.1:"}},
		{"missing list file", []string{"--directory", missing, "--data", t.TempDir()},
			[]string{"--directory (SEARXGATE_DIRECTORY): the instance list file " + missing + " does not exist", "--directory none to search only your own instances"}},
	} {
		cfg, err := parseConfig(append([]string{"--listen", "127.0.0.1:0", "--directory", "none"}, c.args...), env(nil), io.Discard)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		app, err := NewApp(context.Background(), cfg, slog.New(slog.DiscardHandler))
		if err == nil {
			app.closeOpened()
			_ = app.ln.Close()
			t.Errorf("%s: searxgate started", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", c.name, err, w)
			}
		}
	}
}

// TestServingLine: the start-up line says, in one line, where searxgate
// serves, which instances it searches and where its data lives.
func TestServingLine(t *testing.T) {
	data := t.TempDir()
	cfg, err := parseConfig([]string{"--listen", "127.0.0.1:0", "--directory", "none", "--allow-private",
		"--instance", "http://127.0.0.1:9/", "--data", data}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var buf strings.Builder
	g, err := runGateway(t, cfg, slog.New(slog.NewTextHandler(&buf, nil)))
	if err != nil {
		t.Fatal(err)
	}
	<-g.app.checked
	if err := g.stop(); err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(buf.String(), "\n") {
		if strings.Contains(l, `msg="searxgate is serving"`) {
			line = l
		}
	}
	for _, want := range []string{"addr=http://" + g.addr + "/",
		`instances="1 of your own first (http://127.0.0.1:9/), then no public ones (--directory none)"`,
		"data=" + filepath.Join(data, "searxgate.db")} {
		if !strings.Contains(line, want) {
			t.Errorf("the serving line %q does not say %q", line, want)
		}
	}
}

// TestMCPHelp: searxgate mcp --help writes its flags with two dashes, as
// serve's help does, and never shows a token from the environment.
func TestMCPHelp(t *testing.T) {
	var out, errb strings.Builder
	code := mcpCommand(context.Background(), []string{"--help"}, io.NopCloser(strings.NewReader("")), nopWriteCloser{&out}, &errb,
		env(map[string]string{"SEARXGATE_MCP_TOKEN": "s3cret-token", "SEARXGATE_GATEWAY": "http://127.0.0.1:1"}))
	help := errb.String()
	if code != 0 || out.Len() != 0 {
		t.Fatalf("exit %d, stdout %q", code, out.String())
	}
	for _, want := range []string{"\n  --gateway string\n", "\n  --mcp-token string\n", "(default http://127.0.0.1:8888)"} {
		if !strings.Contains(help, want) {
			t.Errorf("mcp --help lacks %q:\n%s", want, help)
		}
	}
	if strings.Contains(help, "s3cret-token") || strings.Contains(help, "127.0.0.1:1\n") {
		t.Errorf("mcp --help shows a value from the environment:\n%s", help)
	}
	errb.Reset()
	if code := mcpCommand(context.Background(), []string{"--nope"}, io.NopCloser(strings.NewReader("")), nopWriteCloser{&out}, &errb, env(nil)); code != 2 ||
		!strings.Contains(errb.String(), "--nope") || !strings.Contains(errb.String(), "searxgate mcp --help") {
		t.Errorf("--nope: exit %d, stderr %q", code, errb.String())
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// TestUnknownVarsWarned: a SEARXGATE_* variable no setting reads is
// warned about, naming the nearest known one; known ones, other
// variables and ones the environment leaves empty are not.
func TestUnknownVarsWarned(t *testing.T) {
	set := map[string]string{
		"SEARXGATE_CONTATC":    "me@example.org",
		"SEARXGATE_INSTANCES":  "http://127.0.0.1:9/",
		"SEARXGATE_OWN_PASSIP": "true",
		"SEARXGATE_ZZZZZZZZZZ": "1",
		"SEARXGATE_EMPTY_ONE":  "",
		"SEARXGATE_CONTACT":    "me@example.org",
		"SEARXGATE_GATEWAY":    "http://127.0.0.1:8888",
		"SEARXNG_SECRET":       "x",
	}
	var environ []string
	for k, v := range set {
		environ = append(environ, k+"="+v)
	}
	got := unknownVars(environ, env(set))
	want := []string{
		"SEARXGATE_CONTATC is no setting of searxgate and is ignored: did you mean SEARXGATE_CONTACT?",
		"SEARXGATE_INSTANCES is no setting of searxgate and is ignored: did you mean SEARXGATE_INSTANCE?",
		"SEARXGATE_OWN_PASSIP is no setting of searxgate and is ignored: did you mean SEARXGATE_OWN_PASS_IP?",
		"SEARXGATE_ZZZZZZZZZZ is no setting of searxgate and is ignored (searxgate --help lists them)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestServeWarnsOfUnknownVars: serve logs the warning at start, before
// anything else can stop it.
func TestServeWarnsOfUnknownVars(t *testing.T) {
	t.Setenv("SEARXGATE_CONTATC", "me@example.org")
	var stderr strings.Builder
	missing := filepath.Join(t.TempDir(), "instances.json")
	code := Main(context.Background(), []string{"serve", "--listen", "127.0.0.1:0", "--data", t.TempDir(), "--directory", missing}, io.Discard, &stderr, os.Getenv)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (the list file is missing)\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "level=WARN msg=\"SEARXGATE_CONTATC is no setting of searxgate and is ignored: did you mean SEARXGATE_CONTACT?\"") {
		t.Errorf("no warning of the mistyped variable:\n%s", stderr.String())
	}
}
