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

// local rewrites the docs' default addresses (searxgate on 127.0.0.1:8888,
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
// the docs' examples run against it as written: the searches, the
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

	docs := docExamples(t)
	d.docSearches(t, docs, seen)
	d.docRead(t, docs, seen)
	d.docAdmin(t, docs)
}

// docExamples are the README's and docs/'s text, joined.
func docExamples(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, text := range docFiles(t) {
		b.WriteString(text)
		b.WriteString("\n")
	}
	return b.String()
}

// demoEnvNames are the variables the demo writes to out/demo/env.
var demoEnvNames = []string{"SEARXGATE", "SEARXGATE_ADMIN_TOKEN", "DEMO_INSTANCE", "DEMO_INSTANCE_ID", "DEMO_PAGE"}

// env is what `make demo` writes to its env file for this demo.
func (d *demo) env() map[string]string {
	inst := d.sims[4] // sim-05, as the Makefile picks it
	return map[string]string{
		"SEARXGATE":             "http://" + d.g.addr,
		"SEARXGATE_ADMIN_TOKEN": d.token,
		"DEMO_INSTANCE":         inst,
		"DEMO_INSTANCE_ID":      url.QueryEscape(inst),
		"DEMO_PAGE":             inst + "sim/page/sim-05/hello/1",
	}
}

// expand replaces $NAME and ${NAME} of the demo's env file in s, and the
// default addresses (searxgate on 127.0.0.1:8888) with this demo's.
func (d *demo) expand(t *testing.T, s string) string {
	t.Helper()
	for k, v := range d.env() {
		s = strings.ReplaceAll(s, "${"+k+"}", v)
		s = regexp.MustCompile(`\$`+k+`\b`).ReplaceAllLiteralString(s, v)
	}
	return d.local(t, s)
}

// exampleCurl is one curl line of the docs: flags, a form body, a method
// and the URL, each quoted or not.
var exampleCurl = regexp.MustCompile(`^curl(?: -si?)?( -H "\$T")?(?: -d "?([^" ]+)"?)?(?: -X ([A-Z]+))? ["']?((?:http://127\.0\.0\.1:8888|\$SEARXGATE)[^"' ]*)["']?`)

// docCurls are the docs' curl lines against searxgate, in sh blocks.
func docCurls(docs string) []string {
	var lines []string
	for _, block := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(docs, -1) {
		for _, l := range strings.Split(block[1], "\n") {
			if l = strings.TrimSpace(l); exampleCurl.MatchString(l) {
				lines = append(lines, l)
			}
		}
	}
	return lines
}

// docSearches runs the docs' curl searches (those without a token).
func (d *demo) docSearches(t *testing.T, docs string, seen func(string, []byte)) {
	t.Helper()
	n := 0
	for _, l := range docCurls(docs) {
		m := exampleCurl.FindStringSubmatch(l)
		if m[1] != "" || !strings.Contains(m[4], "/search?") {
			continue
		}
		n++
		path := strings.TrimPrefix(d.expand(t, m[4]), "http://"+d.g.addr)
		a := d.g.get(t, path, nil)
		if a.status != 200 {
			t.Errorf("the docs' %s: %d %.300s", l, a.status, a.body)
		}
		seen(l, a.body)
	}
	if n < 2 {
		t.Errorf("the docs have %d curl searches, want the README's and the fan-out one", n)
	}
}

// docRead calls web_url_read with the docs' example arguments.
func (d *demo) docRead(t *testing.T, docs string, seen func(string, []byte)) {
	t.Helper()
	m := regexp.MustCompile("`(\\{\"url\": [^`]*)`").FindStringSubmatch(docs)
	if m == nil {
		t.Fatal("the docs have no web_url_read example")
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(d.expand(t, m[1])), &args); err != nil {
		t.Fatalf("the docs' web_url_read example %s: %v", m[1], err)
	}
	s := connectMCP(t, d.g, nil)
	res := callTool(t, s, mcp.ToolRead, args)
	if text := resultText(res); res.IsError || !strings.Contains(text, "Paragraph") {
		t.Errorf("the docs' web_url_read %s: %v %.500s", m[1], res.IsError, text)
	}
	search := callTool(t, s, mcp.ToolSearch, map[string]any{"query": "hello", "response_format": "json"})
	seen("MCP search", []byte(resultText(search)))
}

// docAdmin runs the docs' instance API lines, in order, with the demo's
// token.
func (d *demo) docAdmin(t *testing.T, docs string) {
	t.Helper()
	if !strings.Contains(docs, `T="Authorization: Bearer $SEARXGATE_ADMIN_TOKEN"`) {
		t.Fatal("the docs have no instance API example with the demo's token")
	}
	n := 0
	for _, l := range docCurls(docs) {
		m := exampleCurl.FindStringSubmatch(l)
		if !strings.Contains(m[4], "/api/") {
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
			body = strings.NewReader(d.expand(t, m[2]))
			h["Content-Type"] = "application/x-www-form-urlencoded"
			if method == "" {
				method = http.MethodPost
			}
		}
		if method == "" {
			method = http.MethodGet
		}
		path := strings.TrimPrefix(d.expand(t, m[4]), "http://"+d.g.addr)
		if a := d.g.do(t, method, path, body, h); a.status/100 != 2 {
			t.Errorf("the docs' %s: %d %.300s", l, a.status, a.body)
		}
	}
	if n < 5 {
		t.Errorf("read %d curl lines of the docs' instance API example", n)
	}
}

// TestDemoEnvFile: the demo writes every variable the docs' examples
// read, starts clean unless DEMO_KEEP is set, and make clean removes it.
func TestDemoEnvFile(t *testing.T) {
	b, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	mk := string(b)
	_, recipe, _ := strings.Cut(mk, "\ndemo:")
	recipe, _, _ = strings.Cut(recipe, "\n\n")
	for _, name := range demoEnvNames {
		if !strings.Contains(recipe, `echo "`+name+`=`) {
			t.Errorf("the demo does not write %s to its env file", name)
		}
	}
	used := regexp.MustCompile(`\$\{?([A-Z][A-Z_]*)`).FindAllStringSubmatch(docExamples(t), -1)
	for _, m := range used {
		if (strings.HasPrefix(m[1], "DEMO_") || m[1] == "SEARXGATE") && !slices.Contains(demoEnvNames, m[1]) {
			t.Errorf("the docs read $%s, which the demo's env file does not hold", m[1])
		}
	}
	if !strings.Contains(recipe, `if [ -z "$(DEMO_KEEP)" ]; then rm -rf $(DEMO_DIR)/data;`) {
		t.Error("the demo does not start clean: its recipe keeps $(DEMO_DIR)/data without DEMO_KEEP")
	}
	if !regexp.MustCompile(`(?m)^clean:.*\n\trm -rf [^\n]*\bout/demo\b`).MatchString(mk) {
		t.Error("make clean does not remove out/demo")
	}
}

// TestDemoShowsEverything: the demo's pages show what a SearXNG page can:
// a result count, an answer, an infobox, a correction, an engine that
// failed beside the results, each category's own results, and the
// categories and engines of the instances' /config to an agent.
func TestDemoShowsEverything(t *testing.T) {
	d := startDemo(t)
	var page struct {
		Count       int64             `json:"number_of_results"`
		Answers     []json.RawMessage `json:"answers"`
		Corrections []string          `json:"corrections"`
		Infoboxes   []json.RawMessage `json:"infoboxes"`
		Results     []struct {
			Title    string `json:"title"`
			Category string `json:"category"`
		} `json:"results"`
		Unresponsive [][2]string `json:"unresponsive_engines"`
	}
	read := func(path string) {
		t.Helper()
		page.Unresponsive = nil
		a := d.g.get(t, path, nil)
		if err := json.Unmarshal(a.body, &page); a.status != 200 || err != nil {
			t.Fatalf("%s: %d %v %.300s", path, a.status, err, a.body)
		}
	}
	read("/search?q=helo+world&format=json")
	if page.Count == 0 || len(page.Answers) == 0 || len(page.Infoboxes) == 0 || !slices.Contains(page.Corrections, "hello world") {
		t.Errorf("helo world: count %d, answers %d, infoboxes %d, corrections %q", page.Count, len(page.Answers), len(page.Infoboxes), page.Corrections)
	}
	failed := false
	for _, q := range []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"} {
		read("/search?format=json&fanout=3&q=" + q)
		failed = failed || len(page.Unresponsive) > 0
	}
	if !failed {
		t.Error("no demo answer names an engine that failed")
	}
	for _, cat := range []string{"news", "videos", "it", "science"} {
		read("/search?q=hello&format=json&categories=" + cat)
		if len(page.Results) == 0 || page.Results[0].Category != cat || strings.Contains(page.Results[0].Title, "result") {
			t.Errorf("the %s tab answers like the general one: %+v", cat, page.Results)
		}
	}
	html := string(d.g.get(t, "/search?q=helo+world", nil).body)
	for _, want := range []string{"hello world", `class="answer"`, `class="infobox"`, "helo world"} {
		if !strings.Contains(html, want) {
			t.Errorf("the demo's results page lacks %q", want)
		}
	}
	if !regexp.MustCompile(`[0-9],[0-9]{3}`).MatchString(html) {
		t.Error("the demo's results page shows no result count")
	}
	s := connectMCP(t, d.g, nil)
	info := resultText(callTool(t, s, mcp.ToolInfo, map[string]any{"includeEngines": true, "category": "it"}))
	if !strings.Contains(info, "github") || !strings.Contains(info, `"it"`) {
		t.Errorf("instance info for the it category names no engine: %.800s", info)
	}
}
