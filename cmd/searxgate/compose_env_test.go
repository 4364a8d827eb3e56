package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/searxgate/searxgate/internal/redistest"
	"github.com/searxgate/searxgate/sim"
)

// readEnvFile reads a compose .env file as compose does: NAME=value lines,
// # comments, a value's surrounding quotes removed, an unquoted value's
// " #" comment cut off.
func readEnvFile(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		name, v, ok := strings.Cut(l, "=")
		if !ok {
			t.Fatalf("%s: %q is not NAME=value", path, l)
		}
		v = strings.TrimSpace(v)
		switch {
		case len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0]:
			v = v[1 : len(v)-1]
		default:
			if i := strings.Index(v, " #"); i >= 0 {
				v = strings.TrimSpace(v[:i])
			}
		}
		vars[strings.TrimSpace(name)] = v
	}
	return vars
}

// interpolation is one variable compose substitutes: $NAME or ${NAME},
// with an operator (:-, -, :?, ?, :+, +) and its word.
var interpolation = regexp.MustCompile(`\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)`)

// errRequired is what a ${NAME:?why} or ${NAME?why} says when it stops
// compose.
var errRequired = errors.New("required variable")

// composeInterpolate substitutes s's variables from vars as compose does
// (the compose specification's interpolation): $$ is $; ${NAME:-word} is
// word when NAME is unset or empty, ${NAME-word} when unset; ${NAME:?why}
// fails when NAME is unset or empty, ${NAME?why} when unset; ${NAME:+word}
// is word when NAME is set and not empty, ${NAME+word} when set; $NAME
// and ${NAME} are its value ("" when unset). A word holding another
// ${...} is not read (compose.yaml has none).
func composeInterpolate(s string, vars map[string]string) (string, error) {
	var errs []error
	out := interpolation.ReplaceAllStringFunc(s, func(m string) string {
		if m == "$$" {
			return "$"
		}
		sub := interpolation.FindStringSubmatch(m)
		name, op, word := sub[1], sub[2], sub[3]
		if name == "" {
			name = sub[4]
		}
		v, set := vars[name]
		empty := v == ""
		unsetOr := func(colon bool) bool { return !set || (colon && empty) }
		switch op {
		case "":
			return v
		case ":-", "-":
			if unsetOr(op == ":-") {
				w, err := composeInterpolate(word, vars)
				errs = append(errs, err)
				return w
			}
			return v
		case ":?", "?":
			if unsetOr(op == ":?") {
				errs = append(errs, fmt.Errorf("%w %s is missing a value: %s", errRequired, name, word))
			}
			return v
		default: // ":+", "+"
			if unsetOr(op == ":+") {
				return ""
			}
			w, err := composeInterpolate(word, vars)
			errs = append(errs, err)
			return w
		}
	})
	return out, errors.Join(errs...)
}

// resolveEnvironment is a service's environment, interpolated.
func resolveEnvironment(env map[string]string, vars map[string]string) (map[string]string, error) {
	out := map[string]string{}
	var errs []error
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range env {
			if !yield(k) {
				return
			}
		}
	}) {
		v, err := composeInterpolate(env[k], vars)
		errs = append(errs, err)
		out[k] = v
	}
	return out, errors.Join(errs...)
}

// imageEnv is the ENV the Containerfile gives the image.
func imageEnv(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("../../Containerfile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^ENV ((?:[^\n]*\\\n)*[^\n]*)$`).FindStringSubmatch(string(b))
	if m == nil {
		t.Fatal("the Containerfile has no ENV")
	}
	env := map[string]string{}
	for _, kv := range strings.Fields(strings.ReplaceAll(m[1], "\\\n", " ")) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			t.Fatalf("the Containerfile's ENV has %q", kv)
		}
		env[k] = v
	}
	return env
}

// TestInterpolateAsCompose: the substitution the next test relies on
// follows compose's rules.
func TestInterpolateAsCompose(t *testing.T) {
	vars := map[string]string{"SET": "x", "EMPTY": ""}
	for _, c := range []struct{ in, want, err string }{
		{"${SET}", "x", ""}, {"$SET/y", "x/y", ""}, {"${UNSET}", "", ""}, {"$$SET", "$SET", ""},
		{"${SET:-d}", "x", ""}, {"${EMPTY:-d}", "d", ""}, {"${UNSET:-d}", "d", ""},
		{"${EMPTY-d}", "", ""}, {"${UNSET-d}", "d", ""},
		{"${SET:?why}", "x", ""}, {"${EMPTY:?why not}", "", "EMPTY is missing a value: why not"},
		{"${UNSET?why}", "", "UNSET is missing a value: why"}, {"${EMPTY?why}", "", ""},
		{"${SET:+w}", "w", ""}, {"${EMPTY:+w}", "", ""}, {"${EMPTY+w}", "w", ""}, {"${UNSET+w}", "", ""},
	} {
		got, err := composeInterpolate(c.in, vars)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.in, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want %q", c.in, err, c.err)
		case c.err == "" && got != c.want:
			t.Errorf("%s = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestComposeEnvironmentStarts: the searxgate service of compose.yaml,
// with .env.example filled in where it says so, starts and serves. As it
// comes, .env.example leaves the required settings empty, and compose
// stops, naming each. Filled in, the service's environment is resolved
// as `docker compose config` would, over the image's ENV, and the binary
// is started with exactly that environment, but for what only compose's
// network has, rewritten to loopback: its SearXNG (a sim instance), its
// Valkey (a redis-server), the public list (a sim fleet's), the listen
// address and the data folder. It answers /healthz and searches from
// the own instance, which it asks for JSON, its health check passes, it warns of no variable and
// logs no error, and it is still running: no restart loop.
func TestComposeEnvironmentStarts(t *testing.T) {
	t.Parallel() // it waits on real time: see parallelWaits
	b, err := os.ReadFile(filepath.Join(deployDir, "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var f composeFile
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	vars := readEnvFile(t, filepath.Join(deployDir, ".env.example"))

	required := map[string][]string{"searxgate": {"SEARXGATE_CONTACT", "SEARXGATE_SECRET"}, "searxng": {"SEARXNG_SECRET"}}
	for svc, names := range required {
		_, err := resolveEnvironment(f.Services[svc].Environment, vars)
		for _, n := range names {
			if err == nil || !strings.Contains(err.Error(), n+" is missing a value") {
				t.Errorf("service %s with .env.example as it comes: %v; want compose to stop on the empty %s", svc, err, n)
			}
		}
	}
	vars["SEARXGATE_CONTACT"] = "you@example.org"
	vars["SEARXGATE_SECRET"] = "5f4dcc3b5aa765d61d8327deb882cf99a1b2c3d4e5f60718293a4b5c6d7e8f90"
	vars["SEARXNG_SECRET"] = "0123456789abcdef0123456789abcdef"
	if _, err := resolveEnvironment(f.Services["searxng"].Environment, vars); err != nil {
		t.Errorf("service searxng with .env filled in: %v", err)
	}
	composed, err := resolveEnvironment(f.Services["searxgate"].Environment, vars)
	if err != nil {
		t.Fatalf("service searxgate with .env filled in: %v", err)
	}
	env := imageEnv(t)
	for k, v := range composed {
		env[k] = v
	}
	if env["SEARXGATE_OWN_PASS_IP"] != "true" {
		t.Errorf("SEARXGATE_OWN_PASS_IP=%q: searxng/limiter.toml passes searxgate, compose must say so", env["SEARXGATE_OWN_PASS_IP"])
	}

	srv := redistest.Start(t)
	fleet, dir := startFleet(t, 71, []sim.InstanceConfig{
		{ID: "searxng", Behaviour: sim.Fast, Latency: -1, JSON: true},
		{ID: "public", Behaviour: sim.Fast, Latency: -1, JSON: true},
	})
	own := fleet.Instance("searxng").URL()
	port := freePort(t)
	data := t.TempDir()
	for _, r := range []struct{ name, was, is string }{
		{"SEARXGATE_INSTANCE", "http://searxng:8080/", own},
		{"SEARXGATE_REDIS", "redis://valkey:6379/1", strings.TrimSuffix(srv.URL(), "/0") + "/1"},
		{"SEARXGATE_DIRECTORY", DefaultDirectory, dir},
		{"SEARXGATE_LISTEN", "0.0.0.0:8888", "127.0.0.1:" + port},
		{"SEARXGATE_DATA", "/data", data},
	} {
		if env[r.name] != r.was {
			t.Fatalf("%s=%q, want %q (what this test rewrites to loopback)", r.name, env[r.name], r.was)
		}
		env[r.name] = r.is
	}
	var environ []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range env {
			if !yield(k) {
				return
			}
		}
	}) {
		environ = append(environ, k+"="+env[k])
	}

	p := waitServing(t, launchEnv(t, environ))
	if a, err := p.do("GET", "/healthz", "", nil); err != nil || a.status != 200 {
		t.Fatalf("/healthz: %v %d", err, a.status)
	}
	for _, q := range []string{"compose as written", "and asked for json"} {
		a := p.mustSearch(t, q)
		if by := a.header.Get("X-Searxgate-Instance"); by != own {
			t.Errorf("the search was answered by %s, want the own instance %s", by, own)
		}
	}
	// The first search reads the formats it offers off its results page;
	// passing searxgate (SEARXGATE_OWN_PASS_IP), it is asked for JSON next.
	if tr := fleet.Instance("searxng").Truth(); tr.Formats["json"] == 0 {
		t.Errorf("the own instance was asked for no JSON (formats %v): compose's SearXNG enables it and passes searxgate", tr.Formats)
	}
	hc := exec.Command(searxgateBinary(t), "healthcheck")
	hc.Env = environ
	if out, err := hc.CombinedOutput(); err != nil {
		t.Errorf("searxgate healthcheck, compose's health check: %v\n%s", err, out)
	}
	select {
	case <-p.exited:
		t.Fatalf("searxgate exited (%v): compose would restart it in a loop", p.state)
	default:
	}
	log := p.stderr.String()
	for _, bad := range []string{"level=ERROR", "is no setting of searxgate"} {
		if strings.Contains(log, bad) {
			t.Errorf("searxgate's log says %q:\n%s", bad, log)
		}
	}
	if !strings.Contains(log, "redis answers") {
		t.Errorf("searxgate does not share through Valkey:\n%s", log)
	}
}

// freePort is a loopback port free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	_ = ln.Close()
	return port
}
