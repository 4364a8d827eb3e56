package main

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/searxgate/searxgate/mcp"
)

// demo is `make demo`, as the Makefile runs it, in this process: the sim
// fleet and searxgate on it, on ports the system picks.
type demo struct {
	g     *gateway
	sims  []string // the fleet's instance URLs, in order (sim-01 first)
	token string   // its admin token
	base  int      // the Makefile's first fleet port (DEMO_SIM_PORT)
}

// makeVar is the default the Makefile gives the variable name.
func makeVar(t *testing.T, mk, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + name + `\s*\?=\s*(\S+)`).FindStringSubmatch(mk)
	if m == nil {
		t.Fatalf("the Makefile sets no %s", name)
	}
	return m[1]
}

// demoArgs are the arguments of the Makefile's demo recipe line that runs
// `$(BIN) <cmd>`, its variables replaced by vars.
func demoArgs(t *testing.T, mk, cmd string, vars map[string]string) []string {
	t.Helper()
	_, recipe, ok := strings.Cut(mk, "\ndemo:")
	if !ok {
		t.Fatal("the Makefile has no demo target")
	}
	recipe, _, _ = strings.Cut(recipe, "\n\n")
	m := regexp.MustCompile(`\$\(BIN\) ` + cmd + ` ([^>&;\n]*)`).FindStringSubmatch(recipe)
	if m == nil {
		t.Fatalf("the demo recipe does not run $(BIN) %s", cmd)
	}
	line := m[1]
	for k, v := range vars {
		line = strings.ReplaceAll(line, "$("+k+")", v)
	}
	if strings.Contains(line, "$(") {
		t.Fatalf("the demo's %s line has a variable this test does not know: %s", cmd, line)
	}
	return strings.Fields(line)
}

// startDemo runs the demo until the test ends.
func startDemo(t *testing.T) *demo {
	t.Helper()
	b, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	mk := string(b)
	dir := t.TempDir()
	vars := map[string]string{
		"DEMO_N": makeVar(t, mk, "DEMO_N"), "DEMO_SIM_PORT": "0", "DEMO_PORT": "0", "DEMO_DIR": dir,
		"DEMO_ADMIN_TOKEN": makeVar(t, mk, "DEMO_ADMIN_TOKEN"),
	}
	base, err := strconv.Atoi(makeVar(t, mk, "DEMO_SIM_PORT"))
	if err != nil {
		t.Fatal(err)
	}
	simArgs := demoArgs(t, mk, "sim", vars)
	serveArgs := demoArgs(t, mk, "serve", vars)

	ctx, cancel := context.WithCancel(context.Background())
	out := &logBuffer{}
	done := make(chan int, 1)
	go func() { done <- Main(ctx, append([]string{"sim"}, simArgs...), out, io.Discard, env(nil)) }()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("the demo's fleet exited %d", code)
		}
	})
	waitFor(t, 30*time.Second, "the demo's fleet serving", func() bool { return strings.Contains(out.String(), "\nserving ") })
	var sims []string
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Split(l, "\t"); len(f) == 3 && strings.HasPrefix(f[0], "sim-") {
			sims = append(sims, f[1])
		}
	}
	if n, _ := strconv.Atoi(vars["DEMO_N"]); len(sims) != n {
		t.Fatalf("the fleet lists %d instances, want %s:\n%s", len(sims), vars["DEMO_N"], out.String())
	}

	cfg, err := parseConfig(serveArgs, env(nil), io.Discard)
	if err != nil {
		t.Fatalf("the demo's serve flags %q: %v", serveArgs, err)
	}
	cfg.resolver = &failResolver{} // nothing is looked up: a name in the demo would fail
	g, err := runGateway(t, cfg, testLog())
	if err != nil {
		t.Fatal(err)
	}
	<-g.app.checked
	return &demo{g: g, sims: sims, token: vars["DEMO_ADMIN_TOKEN"], base: base}
}

// local rewrites the README's demo addresses (searxgate on 127.0.0.1:8888,
// the fleet from DEMO_SIM_PORT on) to this demo's.
func (d *demo) local(t *testing.T, s string) string {
	t.Helper()
	s = strings.ReplaceAll(s, "127.0.0.1:8888", d.g.addr)
	s = strings.ReplaceAll(s, "127.0.0.1%3A8888", url.QueryEscape(d.g.addr))
	return regexp.MustCompile(`127\.0\.0\.1(:|%3A)(\d+)`).ReplaceAllStringFunc(s, func(m string) string {
		sep := ":"
		if strings.Contains(m, "%3A") {
			sep = "%3A"
		}
		p, _ := strconv.Atoi(m[strings.LastIndex(m, sep)+len(sep):])
		i := p - d.base
		if i < 0 || i >= len(d.sims) {
			return m // not the fleet's
		}
		u, _ := url.Parse(d.sims[i])
		if sep == "%3A" {
			return url.QueryEscape(u.Host)
		}
		return u.Host
	})
}

// anyURL finds what looks like an absolute or scheme-relative URL in a
// page, a JSON answer or a feed; xmlns names the namespace, not a link.
var anyURL = regexp.MustCompile(`(?i)(xmlns(?::[a-z]+)?=["'])?((?:https?:)?//[^\s"'<>\\)]+)`)

// fixedLinks are the links searxgate's own pages carry in every
// deployment, written by web/, never fetched: SearXNG's documentation and
// source in /config's brand and on /about. (No result on loopback gets a
// Wayback Machine link: it cannot hold a copy of one.)
var fixedLinks = []string{"https://docs.searxng.org/", "https://github.com/searxng/searxng"}

// offLoopback returns the URLs in body whose host is not on loopback.
func offLoopback(body string) []string {
	var bad []string
	for _, m := range anyURL.FindAllStringSubmatch(html.UnescapeString(body), -1) {
		if m[1] != "" || slices.Contains(fixedLinks, m[2]) {
			continue
		}
		raw := m[2]
		if strings.HasPrefix(raw, "//") {
			raw = "http:" + raw
		}
		u, err := url.Parse(raw)
		if err != nil {
			bad = append(bad, m[2])
			continue
		}
		if h := u.Hostname(); h != "127.0.0.1" && h != "localhost" && h != "::1" {
			bad = append(bad, m[2])
		}
	}
	return bad
}

// TestDemoStaysOnLoopback: every URL the demo shows (its pages, JSON,
// feeds, suggestions, status, MCP answers) is on loopback; the images it
// shows come through the image proxy and load; its suggestions answer;
// the README's examples run against it as written: the searches, the
// page web_url_read reads, the instance API with its token and URLs in
// its pool.
func TestDemoStaysOnLoopback(t *testing.T) {
	d := startDemo(t)
	g := d.g
	seen := func(what string, body []byte) {
		t.Helper()
		if bad := offLoopback(string(body)); len(bad) > 0 {
			t.Errorf("%s shows URLs off loopback: %q", what, bad)
		}
	}
	var images []string
	imgSrc := regexp.MustCompile(`<img[^>]* src="([^"]+)"`)
	for _, path := range []string{
		"/", "/search?q=hello", "/search?q=hello&format=json", "/search?q=hello&pageno=2",
		"/search?q=hello&categories=images", "/search?q=hello&categories=images&format=json",
		"/search?q=hello&format=rss", "/search?q=hello&format=csv", "/search?q=hello&format=json&fanout=3",
		"/autocompleter?q=hello", "/config", "/opensearch.xml", "/preferences", "/about",
		"/status", "/status.json", "/api/instances", "/healthz",
	} {
		a := g.get(t, path, nil)
		if a.status != 200 {
			t.Errorf("%s: %d %.300s", path, a.status, a.body)
			continue
		}
		seen(path, a.body)
		if strings.HasPrefix(a.header.Get("Content-Type"), "text/html") {
			for _, m := range imgSrc.FindAllStringSubmatch(string(a.body), -1) {
				images = append(images, html.UnescapeString(m[1]))
			}
		}
	}
	if len(images) < 5 {
		t.Errorf("the demo's pages show %d images, want its thumbnails and its images tab", len(images))
	}
	for _, src := range images {
		if !strings.HasPrefix(src, "/") {
			t.Errorf("an image not through the image proxy: %s", src)
			continue
		}
		if a := g.get(t, src, nil); a.status != 200 || !strings.HasPrefix(a.header.Get("Content-Type"), "image/") {
			t.Errorf("image %s: %d %s", src, a.status, a.header.Get("Content-Type"))
		}
	}
	var sugs []any
	if err := json.Unmarshal(g.get(t, "/autocompleter?q=hello", nil).body, &sugs); err != nil || len(sugs) < 2 {
		t.Errorf("/autocompleter: %v %v", sugs, err)
	} else if list, _ := sugs[1].([]any); len(list) == 0 {
		t.Errorf("/autocompleter has no suggestion: %v", sugs)
	}

	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	d.readmeSearches(t, string(readme), seen)
	d.readmeRead(t, string(readme), seen)
	d.readmeAdmin(t, string(readme))
}

// readmeSearches runs the README's curl searches.
func (d *demo) readmeSearches(t *testing.T, readme string, seen func(string, []byte)) {
	t.Helper()
	n := 0
	for _, m := range regexp.MustCompile(`curl (?:-si )?'(http://127\.0\.0\.1:8888/search\?[^']+)'`).FindAllStringSubmatch(readme, -1) {
		n++
		u := d.local(t, m[1])
		path := strings.TrimPrefix(u, "http://"+d.g.addr)
		a := d.g.get(t, path, nil)
		if a.status != 200 {
			t.Errorf("the README's %s: %d %.300s", m[1], a.status, a.body)
		}
		seen(m[1], a.body)
	}
	if n == 0 {
		t.Error("the README has no curl search")
	}
}

// readmeRead calls web_url_read with the README's example arguments.
func (d *demo) readmeRead(t *testing.T, readme string, seen func(string, []byte)) {
	t.Helper()
	m := regexp.MustCompile("`(\\{\"url\": [^`]*)`").FindStringSubmatch(readme)
	if m == nil {
		t.Fatal("the README has no web_url_read example")
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(d.local(t, m[1])), &args); err != nil {
		t.Fatalf("the README's web_url_read example %s: %v", m[1], err)
	}
	s := connectMCP(t, d.g, nil)
	res := callTool(t, s, mcp.ToolRead, args)
	if text := resultText(res); res.IsError || !strings.Contains(text, "Paragraph") {
		t.Errorf("the README's web_url_read %s: %v %.500s", m[1], res.IsError, text)
	}
	search := callTool(t, s, mcp.ToolSearch, map[string]any{"query": "hello", "response_format": "json"})
	seen("MCP search", []byte(resultText(search)))
}

// readmeAdmin runs the README's instance API block, line by line.
func (d *demo) readmeAdmin(t *testing.T, readme string) {
	t.Helper()
	_, block, ok := strings.Cut(readme, "T=\"Authorization: Bearer ${SEARXGATE_ADMIN_TOKEN:-demo}\"")
	if !ok {
		t.Fatal("the README has no instance API example with the demo's token")
	}
	block, _, _ = strings.Cut(block, "```")
	if !strings.Contains(readme, "Bearer ${SEARXGATE_ADMIN_TOKEN:-"+d.token+"}") {
		t.Errorf("the README's admin token is not the demo's (%s)", d.token)
	}
	curl := regexp.MustCompile(`^curl -s( -H "\$T")?(?: -d (\S+))?(?: -X ([A-Z]+))? (http://\S+)`)
	n := 0
	for _, l := range strings.Split(block, "\n") {
		m := curl.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		n++
		method := m[3]
		var body io.Reader
		h := map[string]string{}
		if m[1] != "" {
			h["Authorization"] = "Bearer " + d.token
		}
		if m[2] != "" {
			body = strings.NewReader(d.local(t, m[2]))
			h["Content-Type"] = "application/x-www-form-urlencoded"
			if method == "" {
				method = http.MethodPost
			}
		}
		if method == "" {
			method = http.MethodGet
		}
		path := strings.TrimPrefix(d.local(t, m[4]), "http://"+d.g.addr)
		if a := d.g.do(t, method, path, body, h); a.status/100 != 2 {
			t.Errorf("the README's %s: %d %.300s", strings.TrimSpace(l), a.status, a.body)
		}
	}
	if n < 5 {
		t.Errorf("read %d curl lines of the README's instance API example", n)
	}
}
