package web

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/searxgate/searxgate/results"
	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/proxy"
)

func TestRoutes(t *testing.T) {
	fs := &fakeSearch{answer: jsonAnswer(simpleAnswer, "https://up.example/")}
	_, c := serve(t, Config{Search: fs, Version: "1.2.3"})
	tests := []struct {
		method, uri, body string
		headers           []string
		status            int
		ctype             string
		contains          string
	}{
		{"GET", "/", "", nil, 200, "text/html", `rel="search"`},
		{"GET", "/?q=hello&format=json", "", nil, 308, "text/html", `href="/search?q=hello&amp;format=json"`},
		{"GET", "/search?q=hello", "", nil, 200, "text/html", "Hello world"},
		{"POST", "/search", "q=hello&format=json", nil, 200, "application/json", `"results"`},
		{"GET", "/search?q=hello&format=csv", "", nil, 200, "application/csv", "Hello world"},
		{"GET", "/search?q=hello&format=rss", "", nil, 200, "text/xml; charset=utf-8", "<item>"},
		{"GET", "/search?q=&format=json", "", nil, 400, "application/json", `"error":"No query"`},
		{"GET", "/search?q=x&format=json&pageno=0", "", nil, 400, "application/json", `Invalid value \"0\" for parameter pageno`},
		{"GET", "/search?q=x&pageno=zz", "", nil, 400, "text/html", "Invalid value"},
		{"GET", "/search?q=x&format=yaml", "", nil, 200, "text/html", "Hello world"},
		{"PUT", "/search?q=x", "", nil, 405, "text/plain", "Method Not Allowed"},
		{"GET", "/healthz", "", nil, 200, "text/plain", "OK"},
		{"GET", "/nowhere", "", nil, 404, "text/html", "no page at this address"},
		{"GET", "/nowhere", "", []string{"Accept", "*/*"}, 404, "text/html", "no page at this address"},
		{"GET", "/nowhere", "", []string{"Accept", "text/html"}, 404, "text/html", "no page at this address"},
		{"GET", "/nowhere", "", []string{"Accept", "application/json"}, 404, "text/plain", "Not Found"},
		{"GET", "/nowhere", "", []string{"Accept", "application/json, text/html;q=0"}, 404, "text/plain", "Not Found"},
		{"GET", "/robots.txt", "", nil, 200, "text/plain", "Disallow: /*?*q=*"},
		{"GET", "/static/style.css", "", nil, 200, "text/css", "prefers-color-scheme:dark"},
		{"GET", "/static/favicon.svg", "", nil, 200, "image/svg+xml", "<svg"},
		{"GET", "/config", "", nil, 200, "application/json", `"instance_name":"searxgate"`},
		{"POST", "/config", "", nil, 405, "text/plain", ""},
		{"GET", "/opensearch.xml", "", nil, 200, "application/opensearchdescription+xml", "OpenSearchDescription"},
		{"GET", "/autocompleter?q=hel", "", nil, 200, "application/x-suggestions+json", `["hel",[]]`},
		{"GET", "/status", "", nil, 200, "text/html", "Client searches"},
		{"GET", "/status.json", "", nil, 200, "application/json", `"instances":[]`},
		{"GET", "/metrics", "", nil, 200, "text/plain; version=0.0.4", `searxgate_build_info{version="1.2.3"} 1`},
		{"GET", "/api/instances", "", nil, 200, "application/json", "[]"},
		{"POST", "/api/pool/reset", "", nil, 403, "application/json", "--admin-token"},
		{"GET", "/api/pool/reset", "", nil, 405, "text/plain", ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.uri, func(t *testing.T) {
			r := c.do(tt.method, tt.uri, tt.body, tt.headers...)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.body)
			}
			if !strings.HasPrefix(r.header["Content-Type"], tt.ctype) {
				t.Errorf("Content-Type %q, want %q…", r.header["Content-Type"], tt.ctype)
			}
			if !strings.Contains(r.body, tt.contains) {
				t.Errorf("body does not contain %q:\n%.600s", tt.contains, r.body)
			}
			// Security headers on every response, whatever its status.
			for h, want := range map[string]string{
				"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY",
			} {
				if r.header[h] != want {
					t.Errorf("%s = %q, want %q", h, r.header[h], want)
				}
			}
			csp := r.header["Content-Security-Policy"]
			for _, want := range []string{"default-src 'none'", "frame-ancestors 'none'", "style-src 'self'", "img-src 'self' data:;", "script-src 'self';", "connect-src 'self';"} {
				if !strings.Contains(csp, want) {
					t.Errorf("CSP %q lacks %q", csp, want)
				}
			}
			// Only searxgate's own script file: no inline code, no eval.
			if strings.Contains(csp, "unsafe-") || strings.Contains(csp, "script-src 'self' ") || strings.Contains(csp, "data: blob:") {
				t.Errorf("CSP %q allows inline code, eval or scripts of another origin", csp)
			}
		})
	}
}

func TestSearchPassesTheRequestAndTellsWhoAnswered(t *testing.T) {
	fs := &fakeSearch{answer: jsonAnswer(simpleAnswer, "https://up.example/")}
	_, c := serve(t, Config{Search: fs})
	r := c.get("/search?q=hello&categories=news&time_range=week&safesearch=2&pageno=2&language=de")
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	got := fs.last()
	if got.Query != "hello" || got.PageNo != 2 || got.TimeRange != "week" || got.SafeSearch != "2" || got.Language != "de" ||
		len(got.Categories) != 1 || got.Categories[0] != "news" {
		t.Fatalf("request passed as %+v", got)
	}
	if r.header[HeaderInstance] != "https://up.example/" || r.header[HeaderCache] != "miss" || r.header[HeaderAttempts] != "1" {
		t.Errorf("headers %v", r.header)
	}
	for _, want := range []string{
		`Answered by <a href="/status">up.example</a> in 123 ms`,
		`class="active" aria-current="page">News</a>`,
		`<option value="week" selected>Past week</option>`,
		`<option value="2" selected>Safe search: strict</option>`,
		`<input type="hidden" name="categories" value="news">`,
		`rel="prev" href="/search?categories=news&amp;language=de&amp;q=hello&amp;safesearch=2&amp;time_range=week"`,
		`rel="next" href="/search?categories=news&amp;language=de&amp;pageno=3&amp;q=hello&amp;safesearch=2&amp;time_range=week"`,
		`Did you mean <a href="/search?categories=news&amp;language=de&amp;q=hallo&amp;safesearch=2&amp;time_range=week">hallo</a>`,
		`<div class="answer" dir="auto">hello is a greeting</div>`,
		`>hello kitty</a>`,
		`bing (timeout)`,
		`duckduckgo · brave`,
		`<time>1 May 2024</time>`,
		`<a class="url" href="https://example.org/hello" rel="noreferrer noopener" dir="ltr">example.org/hello</a>`,
		`<link rel="search" type="application/opensearchdescription+xml"`,
		`<link rel="stylesheet" href="/static/style.css">`,
	} {
		if !strings.Contains(r.body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(r.body, "<script") || strings.Contains(r.body, " style=") {
		t.Error("the page has a script or an inline style")
	}
}

func TestNoAnswerPages(t *testing.T) {
	fs := &fakeSearch{answer: func(proxy.Request) (*proxy.Response, error) {
		return nil, &proxy.NoAnswerError{Why: "attempts", Tried: []proxy.Attempt{{Instance: "https://a.example/", Outcome: "refused", Reason: "rate_limited"}}}
	}}
	_, c := serve(t, Config{Search: fs})
	r := c.get("/search?q=nobody&format=json")
	if r.status != 503 {
		t.Fatalf("%d %v", r.status, r.header)
	}
	if ra, ok := r.header["Retry-After"]; ok {
		t.Errorf("Retry-After %q when nothing says when to come back", ra)
	}
	var body struct {
		Error string          `json:"error"`
		Tried []proxy.Attempt `json:"tried"`
	}
	if err := json.Unmarshal([]byte(r.body), &body); err != nil || len(body.Tried) != 1 || body.Tried[0].Reason != "rate_limited" {
		t.Fatalf("%v %s", err, r.body)
	}
	r = c.get("/search?q=nobody&pageno=2")
	if r.status != 503 || !strings.Contains(r.body, "No instance answered") ||
		!strings.Contains(r.body, `href="/search?pageno=2&amp;q=nobody">Try again</a>`) {
		t.Fatalf("HTML 503 page: %d\n%s", r.status, r.body)
	}
	fs.answer = func(proxy.Request) (*proxy.Response, error) { return nil, errors.New("boom") }
	if r := c.get("/search?q=x&format=json"); r.status != 503 || !strings.Contains(r.body, `"tried":[]`) {
		t.Fatalf("%d %s", r.status, r.body)
	}
}

// TestRefusals: a refused search says so in the format the client asked
// for, with the Retry-After the proxy knows (whole seconds, rounded up,
// at least 1), and none when it knows nothing.
func TestRefusals(t *testing.T) {
	limited := func(d time.Duration) error { return fmt.Errorf("admission: %w", &proxy.LimitedError{RetryAfter: d}) }
	queued := func(d time.Duration) error {
		return &proxy.NoAnswerError{Why: "queue_full", RetryAfter: d, Tried: []proxy.Attempt{}}
	}
	tests := []struct {
		name   string
		err    error
		format string
		status int
		retry  string // "" = no Retry-After
		ctype  string
		body   []string
	}{
		{"limited json", limited(2500 * time.Millisecond), "json", 429, "3", "application/json", []string{`{"error":"too many searches from this client (its own limit, --client-rate): retry in 3 s"}`}},
		{"limited html", limited(40 * time.Second), "html", 429, "40", "text/html", []string{"Too many searches", "you may search again in 40 s", "HTTP 429"}},
		// CSV and RSS as SearXNG's index_error writes them: an empty
		// attachment (the reason in a header), a feed with an Error item.
		{"limited csv", limited(time.Second), "csv", 429, "1", "application/csv", nil},
		{"limited rss", limited(61 * time.Second), "rss", 429, "61", "text/xml", []string{"<title>Error</title>", "retry in 61 s</description>"}},
		{"limited below a second", limited(time.Millisecond), "json", 429, "1", "application/json", []string{"retry in 1 s"}},
		{"limited with no time", limited(0), "json", 429, "1", "application/json", []string{"retry in 1 s"}},
		{"queue json", queued(1200 * time.Millisecond), "json", 503, "2", "application/json",
			[]string{`"error":"no instance answered: too many searches are waiting for an instance; retry in 2 s"`, `"tried":[]`}},
		{"queue html", queued(9 * time.Second), "html", 503, "9", "text/html", []string{"No instance answered", "expected to be free in 9 s"}},
		{"queue csv", queued(9 * time.Second), "csv", 503, "9", "application/csv", nil},
		{"deadline no hint", &proxy.NoAnswerError{Why: "deadline"}, "json", 503, "", "application/json", []string{`"tried":[]`}},
		{"deadline no hint html", &proxy.NoAnswerError{Why: "deadline"}, "html", 503, "", "text/html", []string{"The search deadline passed"}},
		{"cancelled", context.Canceled, "rss", 503, "", "text/xml", []string{"<title>Error</title>", "<description>search cancelled</description>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := &fakeSearch{answer: func(proxy.Request) (*proxy.Response, error) { return nil, tt.err }}
			_, c := serve(t, Config{Search: fs})
			r := c.get("/search?q=hello&format=" + tt.format)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.body)
			}
			ra, ok := r.header["Retry-After"]
			if tt.retry == "" && ok {
				t.Errorf("Retry-After %q, want none", ra)
			} else if tt.retry != "" && ra != tt.retry {
				t.Errorf("Retry-After %q, want %q", ra, tt.retry)
			}
			if !strings.HasPrefix(r.header["Content-Type"], tt.ctype) {
				t.Errorf("Content-Type %q, want %q", r.header["Content-Type"], tt.ctype)
			}
			for _, want := range tt.body {
				if !strings.Contains(r.body, want) {
					t.Errorf("body lacks %q:\n%.800s", want, r.body)
				}
			}
			if tt.format == "csv" {
				if r.body != "" || r.header["Content-Disposition"] != "attachment;Filename=searx.csv" || !strings.Contains(r.header[HeaderError], "retry in") {
					t.Errorf("CSV error: body %q, Content-Disposition %q, %s %q", r.body, r.header["Content-Disposition"], HeaderError, r.header[HeaderError])
				}
			}
			if tt.format == "rss" {
				if err := xml.Unmarshal([]byte(r.body), new(struct{})); err != nil {
					t.Errorf("RSS error is no XML: %v", err)
				}
			}
			if tt.ctype == "application/json" && !json.Valid([]byte(r.body)) {
				t.Errorf("not JSON: %s", r.body)
			}
		})
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	for d, want := range map[time.Duration]int64{
		0: 1, -time.Second: 1, time.Nanosecond: 1, time.Second: 1, time.Second + 1: 2, 2500 * time.Millisecond: 3, time.Hour: 3600,
	} {
		if got := retryAfterSeconds(d); got != want {
			t.Errorf("retryAfterSeconds(%v) = %d, want %d", d, got, want)
		}
	}
}

// TestSearchNamesItsClient: the proxy learns who asked, from Config.Client
// when set, else from the peer's address (its client key, client.FromAddr).
func TestSearchNamesItsClient(t *testing.T) {
	tests := []struct {
		name   string
		client func(*fasthttp.RequestCtx) string
		want   string
	}{
		{"peer address", nil, ""}, // the in-memory listener's peer: no address (0.0.0.0)
		{"from Config.Client", func(*fasthttp.RequestCtx) string { return "198.51.100.0/24" }, "198.51.100.0/24"},
		{"Config.Client says nothing", func(*fasthttp.RequestCtx) string { return "" }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := &fakeSearch{answer: jsonAnswer(simpleAnswer, "https://up.example/")}
			_, c := serve(t, Config{Search: fs, Client: tt.client})
			if r := c.get("/search?q=hello&format=json"); r.status != 200 {
				t.Fatalf("status %d", r.status)
			}
			if got := fs.last().Client; got != tt.want {
				t.Errorf("Client %q, want %q", got, tt.want)
			}
		})
	}
	// A peer with an address is named by its key.
	s, _ := serve(t, Config{Search: &fakeSearch{}, Client: func(*fasthttp.RequestCtx) string { return "" }})
	var ctx fasthttp.RequestCtx
	ctx.Init(&fasthttp.Request{}, &net.TCPAddr{IP: net.ParseIP("2001:db8:1:2::7"), Port: 1234}, nil)
	if got := s.client(&ctx); got != "2001:db8:1:2::/64" {
		t.Errorf("a peer at 2001:db8:1:2::7 is client %q, want its /64", got)
	}
}

// hostile is an upstream answer that tries every trick on the page.
const hostile = `{"query":"evil <script>alert(1)</script>","number_of_results":3,"results":[` +
	`{"url":"javascript:alert(1)","title":"<script>alert('t')</script>","content":"<img src=x onerror=alert(2)>","engine":"<b>e</b>"},` +
	`{"url":"data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==","title":"data link","content":"c","thumbnail":"javascript:alert(3)"},` +
	`{"url":" JaVaScRiPt:alert(4)","title":"mixed case","content":"c","img_src":"data:image/svg+xml,<svg onload=alert(5)>"},` +
	`{"url":"https://ok.example/\"><script>alert(6)</script>","title":"\u0000ctrl\u202e\u0007","content":"c"},` +
	`{"url":"https://long.example/","title":"TITLE_LONG","content":"c"},` +
	`{"url":"https://utf.example/","title":"bad ` + "\xff\xfe" + ` utf8","content":"` + "\xc3\x28" + `"}],` +
	`"answers":["<iframe src=javascript:alert(7)>"],"corrections":["\"><script>alert(8)</script>"],` +
	`"infoboxes":[{"infobox":"<svg/onload=alert(9)>","content":"<b>x</b>","img_src":"javascript:alert(10)","urls":[{"title":"bad","url":"javascript:alert(11)"},{"title":"good","url":"https://wiki.example/"}],"attributes":[{"label":"<i>l</i>","value":"<u>v</u>"}]}],` +
	`"suggestions":["</a><script>alert(12)</script>"],"unresponsive_engines":[["<x>","</y>"]]}`

func TestHostileResultsAreRenderedSafely(t *testing.T) {
	body := strings.Replace(hostile, "TITLE_LONG", strings.Repeat("A", 100_000), 1)
	fs := &fakeSearch{answer: jsonAnswer(body, "https://evil.example/")}
	_, c := serve(t, Config{Search: fs})
	r := c.get("/search?q=evil+%3Cscript%3Ealert(1)%3C%2Fscript%3E")
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	assertSafePage(t, r.body)
	if strings.Contains(r.body, strings.Repeat("A", maxTitle+1)) || !strings.Contains(r.body, strings.Repeat("A", maxTitle)+"…") {
		t.Error("a huge title is not cut to the limit")
	}
	if !strings.Contains(r.body, `href="https://wiki.example/"`) {
		t.Error("the infobox's good link is missing")
	}
	if !strings.Contains(r.body, "https://ok.example/%22%3E%3Cscript%3Ealert%286%29%3C/script%3E") {
		t.Error("an http link with markup in it is not escaped as a URL")
	}
}

// TestHostileResultsBypassingDetect renders results that detect would have
// cleaned up, so that the page's own defences are the ones tested.
func TestHostileResultsBypassingDetect(t *testing.T) {
	s, err := New(Config{Search: &fakeSearch{}})
	if err != nil {
		t.Fatal(err)
	}
	r := &results.Page{
		Results: []results.Result{
			{URL: "javascript:alert(1)", Title: "<script>alert('t')</script>", Content: "<img src=x onerror=alert(2)>", Engines: []string{"<b>e</b>"}},
			{URL: "data:text/html,<script>alert(3)</script>", Title: "data", Thumbnail: "javascript:alert(4)", ImgSrc: "data:image/png;base64,AA"},
			{URL: "  JaVaScRiPt:alert(5)", Title: "\x00ctrl\u202eevil\u2066", Content: "bad \xff utf8"},
			{URL: "vbscript:msgbox", Title: strings.Repeat("<big>", 50_000)},
			{URL: "https://fine.example/", Title: "fine", Thumbnail: "//img.example/t.png"},
		},
		Answers:     results.TextAnswers("<iframe src=javascript:alert(6)>"),
		Corrections: []string{`"><script>alert(7)</script>`},
		Suggestions: []string{"</a><script>alert(8)</script>"},
		Infoboxes: []results.Infobox{{Infobox: "<svg/onload=alert(9)>", ImgSrc: "javascript:alert(10)",
			URLs:       []results.InfoboxURL{{Title: "x", URL: "javascript:alert(11)"}, {Title: "y", URL: "data:text/html,x"}},
			Attributes: []results.InfoboxAttribute{{Label: "<i>", Value: "<u>"}}}},
		UnresponsiveEngines: [][2]string{{"<x>", "</y>"}},
	}
	p := buildSearchPage(proxy.Request{Query: "<script>q</script>", PageNo: 1}, r, &proxy.Response{Instance: "https://x.example/<script>"}, s.images.link, nil, tabCategories)
	var b strings.Builder
	if err := s.tmpl.ExecuteTemplate(&b, "results.html", pageData{Search: p, Query: p.Query}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	assertSafePage(t, page)
	if !strings.Contains(page, "&lt;script&gt;alert(&#39;t&#39;)&lt;/script&gt;") {
		t.Error("a hostile title is not shown as escaped text")
	}
	if want := `src="` + html.EscapeString(s.images.link("https://img.example/t.png")) + `"`; !strings.Contains(page, want) {
		t.Errorf("a protocol-relative thumbnail is not proxied over https: want %s", want)
	}
	if len(page) > 100_000 {
		t.Errorf("the page is %d bytes: a huge upstream string got through", len(page))
	}
}

// assertSafePage parses page as HTML and fails on any element a result
// could have smuggled in, any attribute that runs code, any link or image
// that is not http(s) or searxgate's own, and any control character.
func assertSafePage(t *testing.T, page string) {
	t.Helper()
	if !isValidUTF8(page) {
		t.Error("the page is not valid UTF-8")
	}
	for _, r := range page {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			t.Errorf("the page holds the control character %U", r)
			break
		}
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{"html": true, "head": true, "body": true, "meta": true, "title": true, "link": true, "header": true,
		"form": true, "input": true, "button": true, "div": true, "select": true, "option": true, "nav": true, "a": true, "main": true,
		"p": true, "article": true, "img": true, "h1": true, "h2": true, "h3": true, "time": true, "aside": true, "section": true,
		"dl": true, "dt": true, "dd": true, "ul": true, "li": true, "span": true, "footer": true,
		"table": true, "caption": true, "thead": true, "tbody": true, "tr": true, "th": true, "td": true, "small": true, "br": true,
		"svg": true, "polyline": true, "circle": true, "rect": true, "strong": true, "wbr": true,
		"code": true, "label": true, "fieldset": true, "legend": true, "script": true}
	doc.Find("*").Each(func(_ int, el *goquery.Selection) {
		name := goquery.NodeName(el)
		if src, _ := el.Attr("src"); name == "script" && (src != "/static/searxgate.js" || strings.TrimSpace(el.Text()) != "") {
			t.Errorf("a script that is not searxgate's own file: src=%q, %q", src, el.Text())
		}
		if !allowed[name] {
			t.Errorf("the page has a <%s> element", name)
		}
		for _, a := range el.Nodes[0].Attr {
			key, val := strings.ToLower(a.Key), strings.TrimSpace(strings.ToLower(a.Val))
			if strings.HasPrefix(key, "on") || key == "style" || key == "srcdoc" || key == "formaction" {
				t.Errorf("<%s> has the attribute %s=%q", name, a.Key, a.Val)
			}
			if key == "href" || key == "src" || key == "action" {
				if !strings.HasPrefix(val, "https://") && !strings.HasPrefix(val, "http://") && !strings.HasPrefix(val, "/") &&
					!(key == "href" && strings.HasPrefix(val, "#")) {
					t.Errorf("<%s %s=%q>: not an http(s), local or same-page link", name, a.Key, a.Val)
				}
				if strings.HasPrefix(val, "//") {
					t.Errorf("<%s %s=%q>: protocol-relative", name, a.Key, a.Val)
				}
			}
		}
	})
}

func isValidUTF8(s string) bool { return strings.ToValidUTF8(s, "") == s }

func TestSafeURL(t *testing.T) {
	tests := map[string]string{
		"https://a.example/x?y=1":  "https://a.example/x?y=1",
		"http://a.example":         "http://a.example",
		"//cdn.example/t.jpg":      "https://cdn.example/t.jpg",
		"javascript:alert(1)":      "",
		" JAVASCRIPT:alert(1)":     "",
		"data:image/png;base64,AA": "",
		"vbscript:x":               "",
		"https:///nohost":          "",
		"ftp://a.example/":         "",
		"/relative":                "",
		"https://a.example/\xff":   "",
		"":                         "",
	}
	for in, want := range tests {
		if got := safeURL(in); got != want {
			t.Errorf("safeURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestClean(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"plain", 10, "plain"},
		{"  spaced\n\tout ", 20, "spaced  out"},
		{"\x00a\x7fb\u0085c", 10, "abc"},
		{"bad \xff", 10, "bad \uFFFD"},
		{"ééééé", 3, "ééé…"},
		{"abc", 3, "abc"},
	}
	for _, tt := range tests {
		if got := clean(tt.in, tt.max); got != tt.want {
			t.Errorf("clean(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}

func TestOpenSearch(t *testing.T) {
	type urlEl struct {
		Rel      string `xml:"rel,attr"`
		Type     string `xml:"type,attr"`
		Method   string `xml:"method,attr"`
		Template string `xml:"template,attr"`
	}
	type doc struct {
		XMLName   xml.Name `xml:"http://a9.com/-/spec/opensearch/1.1/ OpenSearchDescription"`
		ShortName string   `xml:"ShortName"`
		Encoding  string   `xml:"InputEncoding"`
		URLs      []urlEl  `xml:"Url"`
	}
	tests := []struct {
		name, publicURL, host, base string
	}{
		{"from the Host header", "", "search.home.arpa:8888", "http://search.home.arpa:8888/"},
		{"from the public URL", "https://gate.example.org/sx", "ignored.example", "https://gate.example.org/sx/"},
		{"a hostile Host header", "", `evil"><x`, "http://localhost/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c := serve(t, Config{Search: &fakeSearch{}, PublicURL: tt.publicURL, InstanceName: "gate <&>"})
			// As SearXNG, the suggestions URL is offered only to a browser
			// whose suggestions are on: without, 2 Url elements.
			if r := c.get("/opensearch.xml", "Host", tt.host); r.status != 200 || strings.Contains(r.body, `rel="suggestions"`) {
				t.Fatalf("suggestions off: %d\n%s", r.status, r.body)
			}
			r := c.get("/opensearch.xml", "Host", tt.host, "Cookie", "autocomplete=searxgate")
			if r.status != 200 {
				t.Fatalf("status %d", r.status)
			}
			var d doc
			if err := xml.Unmarshal([]byte(r.body), &d); err != nil {
				t.Fatalf("not XML: %v\n%s", err, r.body)
			}
			if d.ShortName != "gate <&>" || d.Encoding != "UTF-8" {
				t.Errorf("ShortName %q, InputEncoding %q", d.ShortName, d.Encoding)
			}
			want := map[string]urlEl{
				"results":     {"results", "text/html", "GET", tt.base + "search?q={searchTerms}"},
				"suggestions": {"suggestions", "application/x-suggestions+json", "GET", tt.base + "autocompleter?q={searchTerms}"},
				"self":        {"self", "application/opensearchdescription+xml", "GET", tt.base + "opensearch.xml"},
			}
			if len(d.URLs) != len(want) {
				t.Fatalf("%d Url elements, want %d", len(d.URLs), len(want))
			}
			for _, u := range d.URLs {
				if u != want[u.Rel] {
					t.Errorf("Url %+v, want %+v", u, want[u.Rel])
				}
			}
		})
	}
	if _, err := New(Config{Search: &fakeSearch{}, PublicURL: "gate.example"}); err == nil {
		t.Error("a public URL without a scheme was accepted")
	}
}

// TestHeadSearchesNothing: HEAD on the search endpoints answers what a GET
// would send without asking any instance.
func TestHeadSearchesNothing(t *testing.T) {
	calls := 0
	fs := &fakeSearch{answer: func(proxy.Request) (*proxy.Response, error) {
		calls++
		return &proxy.Response{JSON: []byte(`{"query":"x","results":[]}`), Instance: "https://up.example/"}, nil
	}}
	_, c := serve(t, Config{Search: fs})
	for path, ctype := range map[string]string{
		"/search?q=x&format=json": "application/json",
		"/search?q=x":             "text/html; charset=utf-8",
		"/autocompleter?q=x":      "application/json",
	} {
		r := c.do("HEAD", path, "")
		if r.status != 200 || r.header["Content-Type"] != ctype {
			t.Errorf("HEAD %s: %d %q, want 200 %q", path, r.status, r.header["Content-Type"], ctype)
		}
	}
	if calls != 0 {
		t.Fatalf("HEAD made %d searches", calls)
	}
}

// TestNoAnswerSaysWhy: every reason the proxy gives for having no answer
// (proxy.Stops) has its words in web's one table, and reads as a
// sentence, never as the proxy's code word; the table words nothing else.
func TestNoAnswerSaysWhy(t *testing.T) {
	for _, why := range proxy.Stops {
		if got, ok := stopWords[why]; !ok || got == string(why) || !strings.Contains(got, " ") {
			t.Errorf("%s reads %q", why, got)
		}
	}
	if len(stopWords) != len(proxy.Stops) {
		t.Errorf("web words %d reasons, the proxy has %d", len(stopWords), len(proxy.Stops))
	}
}

// TestHandlerPanicIsA500: a panic in a handler answers 500 for that
// request alone, logs its stack once, and the server goes on serving.
func TestHandlerPanicIsA500(t *testing.T) {
	var logs bytes.Buffer
	search := &fakeSearch{answer: func(req proxy.Request) (*proxy.Response, error) {
		if req.Query == "boom" {
			panic("a bug in a search")
		}
		return jsonAnswer(simpleAnswer, "https://a.example/")(req)
	}}
	_, c := serve(t, Config{Search: search, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if r := c.get("/search?q=boom&format=json"); r.status != 500 || strings.Contains(r.body, "a bug") {
		t.Fatalf("a panicking search: %d %q; want a plain 500", r.status, r.body)
	}
	if r := c.get("/search?q=hello&format=json"); r.status != 200 {
		t.Fatalf("the next search: %d %s", r.status, r.body)
	}
	if n := strings.Count(logs.String(), "level=ERROR"); n != 1 || !strings.Contains(logs.String(), "runtime/debug.Stack") || !strings.Contains(logs.String(), "a bug in a search") {
		t.Fatalf("the panic logged %d stacks, want 1:\n%s", n, logs.String())
	}
}

// TestBangRedirects: a bang's answer is a 302 to its site in every format;
// feeling lucky redirects the HTML page to the first result only.
func TestBangRedirects(t *testing.T) {
	bang := &fakeSearch{answer: func(req proxy.Request) (*proxy.Response, error) {
		return &proxy.Response{JSON: []byte(simpleAnswer), Redirect: "https://www.google.com/search?q=foo", Soft: "external_bang", Instance: "https://a.example/", Attempts: 1}, nil
	}}
	_, c := serve(t, Config{Search: bang})
	for _, f := range []string{"json", "html", "csv", "rss"} {
		r := c.get("/search?q=%21%21g+foo&format=" + f)
		if r.status != 302 || r.header["Location"] != "https://www.google.com/search?q=foo" {
			t.Errorf("format %s: %d %q", f, r.status, r.header["Location"])
		}
	}
	lucky := &fakeSearch{answer: jsonAnswer(simpleAnswer, "https://a.example/")}
	_, c = serve(t, Config{Search: lucky})
	if r := c.get("/search?q=%21%21+hello"); r.status != 302 || r.header["Location"] != "https://example.org/hello" {
		t.Errorf("feeling lucky, HTML: %d %q, want 302 to the first result", r.status, r.header["Location"])
	}
	if r := c.get("/search?q=%21%21+hello&format=json"); r.status != 200 {
		t.Errorf("feeling lucky, JSON: %d, want the results", r.status)
	}
}

// TestArchivable: a result gets a Wayback Machine link only where the
// Wayback Machine could have a copy: not for loopback, private or
// localhost pages.
func TestArchivable(t *testing.T) {
	for u, want := range map[string]bool{
		"https://example.org/a":          true,
		"http://93.184.215.14/x":         true,
		"http://127.0.0.1:19004/sim/a":   false,
		"http://[::1]/":                  false,
		"http://10.1.2.3/":               false,
		"http://192.168.1.5:8080/":       false,
		"http://localhost:8888/":         false,
		"http://app.localhost/":          false,
		"http://[::ffff:127.0.0.1]/page": false,
		"http://%zz":                     false,
	} {
		if got := archivable(u); got != want {
			t.Errorf("archivable(%q) = %v, want %v", u, got, want)
		}
	}
}

// TestErrorPageSaysItOnce: the 503 page's heading is not repeated in its
// message, nor its retry line: each is said once.
func TestErrorPageSaysItOnce(t *testing.T) {
	err := &proxy.NoAnswerError{Why: proxy.StopQueueFull, RetryAfter: 9 * time.Second}
	fs := &fakeSearch{answer: func(proxy.Request) (*proxy.Response, error) { return nil, err }}
	_, c := serve(t, Config{Search: fs})
	r := c.get("/search?q=hello")
	if r.status != 503 {
		t.Fatalf("status %d, want 503", r.status)
	}
	for _, once := range []string{"o instance answered", "9 s"} {
		if n := strings.Count(r.body, once); n != 1 {
			t.Errorf("the page says %q %d times, want once:\n%.1500s", once, n, r.body)
		}
	}
	if !strings.Contains(r.body, "Too many searches are waiting for an instance") {
		t.Errorf("the message lost its words:\n%.1500s", r.body)
	}
}
