package sim

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

// onTopic checks a JSON answer to q from the instance id: the query is
// echoed and every result mentions q's words and the id.
func onTopic(t *testing.T, m map[string]any, q, id string, wantResults int) {
	t.Helper()
	if m["query"] != q {
		t.Errorf("query = %v, want %q", m["query"], q)
	}
	res, _ := m["results"].([]any)
	if len(res) != wantResults {
		t.Fatalf("%d results, want %d", len(res), wantResults)
	}
	for i, r := range res {
		r := r.(map[string]any)
		title, _ := r["title"].(string)
		content, _ := r["content"].(string)
		u, _ := r["url"].(string)
		for _, w := range strings.Fields(q) {
			if !strings.Contains(strings.ToLower(title), w) || !strings.Contains(strings.ToLower(content), w) {
				t.Errorf("result %d does not mention %q: %q / %q", i, w, title, content)
			}
		}
		if !strings.Contains(u, "/"+id+"/") || !strings.Contains(content, id) {
			t.Errorf("result %d does not name %s: %q / %q", i, id, u, content)
		}
	}
}

func TestBehaviours(t *testing.T) {
	clock := newClock()
	var cfgs []InstanceConfig
	for _, b := range Behaviours() {
		if b == Flapping {
			continue // TestFlapping moves the clock
		}
		cfgs = append(cfgs, InstanceConfig{
			ID: "sim-" + string(b), Behaviour: b, Latency: time.Millisecond, JSON: true,
			RateBurst: 1, BodySize: 1 << 20, SlowLorisEvery: 20 * time.Millisecond,
			HangFor: 30 * time.Second, DegradeStep: 20 * time.Millisecond,
		})
	}
	f := startFleet(t, Config{Instances: cfgs, Seed: 7, Now: clock.Now})
	const q = "hello world"

	good := func(t *testing.T, in *Instance) {
		a := get(t, searchURL(in, q, "json"), nil)
		if a.err != nil || a.status != 200 {
			t.Fatalf("status %d, err %v", a.status, a.err)
		}
		onTopic(t, a.json(t), q, in.ID(), 10)
	}
	// spamResults are the 10 results a spam instance answers q with.
	spamResults := func(t *testing.T, in *Instance) []map[string]any {
		m := get(t, searchURL(in, q, "json"), nil).json(t)
		res, _ := m["results"].([]any)
		if m["query"] != q || len(res) != 10 {
			t.Fatalf("query %v, %d results; want %q, 10", m["query"], len(res), q)
		}
		out := make([]map[string]any, len(res))
		for i, r := range res {
			out[i] = r.(map[string]any)
		}
		return out
	}
	rateLimited := func(t *testing.T, in *Instance) (answer, answer) {
		first := get(t, searchURL(in, q, "json"), nil)
		second := get(t, searchURL(in, q, "json"), nil)
		if first.status != 200 || second.status != 429 || string(second.body) != "Too Many Requests" {
			t.Fatalf("statuses %d, %d (%q), want 200, 429 Too Many Requests", first.status, second.status, second.body)
		}
		return first, second
	}
	challenge := func(status int, marker, header, value string) func(*testing.T, *Instance) {
		return func(t *testing.T, in *Instance) {
			for _, u := range []string{searchURL(in, q, "json"), in.URL() + "config", in.URL()} {
				a := get(t, u, nil)
				if a.status != status || !strings.Contains(string(a.body), marker) {
					t.Errorf("%s: status %d, want %d with %q", u, a.status, status, marker)
				}
				if header != "" && a.header.Get(header) != value {
					t.Errorf("%s: %s = %q, want %q", u, header, a.header.Get(header), value)
				}
			}
		}
	}

	tests := map[Behaviour]func(t *testing.T, in *Instance){
		Fast:   good,
		Medium: good,
		Slow:   good,
		RateLimitSeconds: func(t *testing.T, in *Instance) {
			_, a := rateLimited(t, in)
			if got := a.header.Get("Retry-After"); got != "60" {
				t.Errorf("Retry-After = %q, want 60", got)
			}
		},
		RateLimitDate: func(t *testing.T, in *Instance) {
			_, a := rateLimited(t, in)
			when, err := http.ParseTime(a.header.Get("Retry-After"))
			if err != nil || !when.Equal(clock.Now().Add(time.Minute)) {
				t.Errorf("Retry-After = %q (%v), want the date a minute on", a.header.Get("Retry-After"), err)
			}
		},
		RateLimitBare: func(t *testing.T, in *Instance) {
			_, a := rateLimited(t, in)
			if _, ok := a.header["Retry-After"]; ok {
				t.Errorf("Retry-After sent: %q", a.header.Get("Retry-After"))
			}
		},
		Limiter: func(t *testing.T, in *Instance) {
			if a := get(t, searchURL(in, q, "html"), map[string]string{"User-Agent": "python-requests/2.31"}); a.status != 429 {
				t.Errorf("bot UA: status %d, want 429", a.status)
			}
			if a := get(t, searchURL(in, q, "html"), nil); a.status != 200 || !strings.Contains(string(a.body), `<article class="result`) {
				t.Errorf("honest search: status %d", a.status)
			}
		},
		LinkToken: func(t *testing.T, in *Instance) {
			m := get(t, in.URL()+"config", nil).json(t)
			lim := m["limiter"].(map[string]any)
			if lim["botdetection.ip_limit.link_token"] != true || lim["enabled"] != true || m["public_instance"] != true {
				t.Errorf("/config limiter = %v, public_instance = %v", lim, m["public_instance"])
			}
			if a := get(t, searchURL(in, q, "html"), nil); a.status != 200 {
				t.Errorf("first search: status %d", a.status)
			}
		},
		JSONDisabled: func(t *testing.T, in *Instance) {
			a := get(t, searchURL(in, q, "json"), nil)
			if a.status != 403 || string(a.body) != forbiddenBody {
				t.Errorf("json: status %d body %q, want Werkzeug's 403", a.status, a.body)
			}
			h := get(t, searchURL(in, q, ""), nil)
			if h.status != 200 || strings.Count(string(h.body), `<article class="result`) != 10 {
				t.Errorf("html: status %d", h.status)
			}
			if strings.Contains(string(h.body), `id="apis"`) {
				t.Error("html offers a JSON download though JSON is disabled")
			}
		},
		CloudflareChallenge403: challenge(403, "Just a moment...", "Cf-Mitigated", "challenge"),
		CloudflareChallenge200: challenge(200, "_cf_chl_opt", "Cf-Mitigated", ""),
		AnubisChallenge:        challenge(200, "anubis_challenge", "", ""),
		DDoSGuard:              challenge(403, "DDoS-Guard", "Server", "ddos-guard"),
		OffTopic: func(t *testing.T, in *Instance) {
			m := get(t, searchURL(in, q, "json"), nil).json(t)
			if m["query"] == q {
				t.Fatalf("echoed the asked query")
			}
			b, _ := json.Marshal(m["results"])
			for _, w := range strings.Fields(q) {
				if strings.Contains(strings.ToLower(string(b)), w) {
					t.Errorf("off-topic results mention %q", w)
				}
			}
			onTopic(t, m, m["query"].(string), in.ID(), 10)
		},
		EmptyEnginesDown: func(t *testing.T, in *Instance) {
			m := get(t, searchURL(in, q, "json"), nil).json(t)
			if res := m["results"].([]any); len(res) != 0 {
				t.Errorf("%d results, want none", len(res))
			}
			if un := m["unresponsive_engines"].([]any); len(un) == 0 {
				t.Error("no unresponsive engines")
			}
			h := string(get(t, searchURL(in, q, ""), nil).body)
			if !strings.Contains(h, `class="response-error"`) || !strings.Contains(h, "dialog-error-block") {
				t.Error("HTML page lacks the engine errors or the no-results dialog")
			}
		},
		Hang: func(t *testing.T, in *Instance) {
			a := do(t, "GET", searchURL(in, q, "json"), nil, nil, 150*time.Millisecond)
			if !errors.Is(a.err, context.DeadlineExceeded) {
				t.Errorf("err = %v, want the client's deadline", a.err)
			}
		},
		ResetMidBody: func(t *testing.T, in *Instance) {
			a := get(t, searchURL(in, q, "json"), nil)
			if a.err == nil {
				t.Fatalf("read a whole body of %d bytes", len(a.raw))
			}
			if a.status != 200 || len(a.raw) == 0 {
				t.Errorf("status %d, %d bytes before the reset; want 200 and half a body", a.status, len(a.raw))
			}
		},
		Dead: func(t *testing.T, in *Instance) {
			a := get(t, searchURL(in, q, "json"), nil)
			if !errors.Is(a.err, syscall.ECONNREFUSED) {
				t.Errorf("err = %v, want connection refused", a.err)
			}
		},
		BrokenJSON: func(t *testing.T, in *Instance) {
			a := get(t, searchURL(in, q, "json"), nil)
			if a.status != 200 || json.Valid(a.body) || len(a.body) == 0 {
				t.Errorf("status %d, valid %v: want 200 and JSON that does not parse", a.status, json.Valid(a.body))
			}
			h := get(t, searchURL(in, q, ""), nil)
			if strings.Contains(string(h.body), "<article") || strings.Contains(string(h.body), "</html>") {
				t.Error("broken HTML page has results or an end")
			}
		},
		HugeBody: func(t *testing.T, in *Instance) {
			a := get(t, searchURL(in, q, "json"), map[string]string{"Accept-Encoding": "identity, deflate"})
			if a.status != 200 || len(a.body) < 1<<20 {
				t.Fatalf("status %d, %d bytes; want at least 1 MiB", a.status, len(a.body))
			}
			m := a.json(t)
			if n := len(m["results"].([]any)); n < 100 {
				t.Errorf("%d results in a huge body", n)
			}
			h := get(t, searchURL(in, q, ""), map[string]string{"Accept-Encoding": "identity, deflate"})
			if len(h.body) < 1<<20 || !strings.HasSuffix(string(h.body), "</html>") {
				t.Errorf("huge HTML: %d bytes", len(h.body))
			}
		},
		NotFound404: func(t *testing.T, in *Instance) {
			if a := get(t, searchURL(in, q, "json"), nil); a.status != 404 {
				t.Errorf("search: status %d, want 404", a.status)
			}
			if a := get(t, in.URL()+"config", nil); a.status != 200 {
				t.Errorf("/config: status %d, want 200", a.status)
			}
		},
		Unavailable503: func(t *testing.T, in *Instance) {
			for _, u := range []string{searchURL(in, q, "json"), in.URL() + "healthz"} {
				a := get(t, u, nil)
				if a.status != 503 || a.header.Get("Retry-After") != "60" {
					t.Errorf("%s: status %d Retry-After %q, want 503 and 60", u, a.status, a.header.Get("Retry-After"))
				}
			}
		},
		Degrading: func(t *testing.T, in *Instance) {
			var last time.Duration
			for range 3 {
				start := time.Now()
				good(t, in)
				last = time.Since(start)
			}
			if last < 2*20*time.Millisecond {
				t.Errorf("third search took %v, want at least %v", last, 40*time.Millisecond)
			}
		},
		Hostile: func(t *testing.T, in *Instance) {
			a := get(t, searchURL(in, q, "json"), nil)
			b := string(a.body)
			for _, want := range []string{`javascript:`, `<script>`, `onerror=`} {
				if !strings.Contains(b, want) {
					t.Errorf("JSON lacks %q", want)
				}
			}
			onTopicWords(t, a.json(t), q)
			h := string(get(t, searchURL(in, q, ""), nil).body)
			for _, want := range []string{`href="javascript:alert(document.cookie)`, `<script>alert("` + in.ID(), `<img src=x onerror=`} {
				if !strings.Contains(h, want) {
					t.Errorf("HTML lacks raw %q", want)
				}
			}
		},
		StallBody: func(t *testing.T, in *Instance) {
			ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
			defer cancel()
			resp, err := rawGet(ctx, searchURL(in, q, "json"))
			if err != nil {
				t.Fatalf("no headers: %v", err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 || resp.ContentLength < 100 {
				t.Errorf("status %d, Content-Length %d", resp.StatusCode, resp.ContentLength)
			}
			body, err := io.ReadAll(resp.Body)
			if err == nil || len(body) >= int(resp.ContentLength) {
				t.Errorf("read %d of %d bytes, err %v; want a stalled body", len(body), resp.ContentLength, err)
			}
		},
		SlowLoris: func(t *testing.T, in *Instance) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			resp, err := rawGet(ctx, searchURL(in, q, "json"))
			if err != nil {
				t.Fatalf("no headers: %v", err)
			}
			defer resp.Body.Close()
			start := time.Now()
			buf := make([]byte, 3)
			if _, err := io.ReadFull(resp.Body, buf); err != nil {
				t.Fatalf("reading 3 bytes: %v", err)
			}
			if el := time.Since(start); el < 2*20*time.Millisecond {
				t.Errorf("3 bytes in %v, want at least 40ms at one byte per 20ms", el)
			}
			if string(buf) != `{"q` {
				t.Errorf("first bytes %q", buf)
			}
		},
		GzipBomb: func(t *testing.T, in *Instance) {
			a := get(t, searchURL(in, q, "json"), nil)
			if a.header.Get("Content-Encoding") != "gzip" || len(a.raw) > 64<<10 || len(a.body) < 1<<20 {
				t.Errorf("sent %d bytes inflating to %d, want under 64 KiB to at least 1 MiB", len(a.raw), len(a.body))
			}
			if !json.Valid(a.body) {
				t.Error("inflated bomb is not JSON")
			}
		},
		InvalidUTF8: func(t *testing.T, in *Instance) {
			for _, format := range []string{"json", ""} {
				a := get(t, searchURL(in, q, format), nil)
				if a.status != 200 || utf8.Valid(a.body) {
					t.Errorf("format %q: status %d, valid UTF-8 %v", format, a.status, utf8.Valid(a.body))
				}
			}
		},
		RedirectLoop: func(t *testing.T, in *Instance) {
			u := searchURL(in, q, "json")
			a := get(t, u, nil)
			if a.status != 302 || a.header.Get("Location") != strings.ReplaceAll(u, "+", "%20") {
				t.Errorf("status %d Location %q, want 302 to %q", a.status, a.header.Get("Location"), u)
			}
		},
		EchoSpam: func(t *testing.T, in *Instance) {
			titles := map[string]bool{}
			for i, r := range spamResults(t, in) {
				title, content, u := r["title"].(string), r["content"].(string), r["url"].(string)
				for _, w := range strings.Fields(strings.ToLower(title + " " + content)) {
					if !slices.Contains(strings.Fields(q), w) {
						t.Errorf("result %d has %q, not a word of the query: %q / %q", i, w, title, content)
					}
				}
				if !strings.Contains(u, "/"+in.ID()+"/") {
					t.Errorf("result %d URL %q does not name the instance", i, u)
				}
				titles[title] = true
			}
			if len(titles) < 2 {
				t.Errorf("every title reads %v: that is a template, not an echo", titles)
			}
		},
		PartialEchoSpam: func(t *testing.T, in *Instance) {
			res := spamResults(t, in)
			titles := map[string]bool{}
			for i, r := range res {
				title, content := r["title"].(string), r["content"].(string)
				if !strings.HasPrefix(title, "Buy ") || !strings.Contains(title, " cheap — spam ") ||
					!strings.HasPrefix(content, "Best ") || strings.Contains(title, q) || strings.Contains(content, q) {
					t.Errorf("result %d: %q / %q; want part of %q in the canned texts", i, title, content, q)
				}
				titles[title] = true
			}
			if len(titles) != len(res) {
				t.Errorf("%d distinct titles of %d: the counter makes each its own", len(titles), len(res))
			}
		},
		Thin:    func(t *testing.T, in *Instance) { checkSuspended(t, in, q, 4, thinSuspended) },
		Partial: func(t *testing.T, in *Instance) { checkSuspended(t, in, q, 7, [][2]string{partialDown}) },
		RedirectOtherHost: func(t *testing.T, in *Instance) {
			a := get(t, searchURL(in, q, "json"), nil)
			loc, err := url.Parse(a.header.Get("Location"))
			if a.status != 302 || err != nil || loc.Hostname() != "127.0.0.2" || loc.Query().Get("q") != q {
				t.Errorf("status %d Location %q, want 302 to the search on 127.0.0.2", a.status, a.header.Get("Location"))
			}
		},
	}
	for _, in := range f.Instances() {
		check, ok := tests[in.Behaviour()]
		if !ok {
			t.Errorf("no test for behaviour %s", in.Behaviour())
			continue
		}
		t.Run(string(in.Behaviour()), func(t *testing.T) { check(t, in) })
	}
}

// onTopicWords checks that every result mentions q's words.
func onTopicWords(t *testing.T, m map[string]any, q string) {
	t.Helper()
	for i, r := range m["results"].([]any) {
		r := r.(map[string]any)
		text := strings.ToLower(fmt.Sprint(r["title"], " ", r["content"]))
		for _, w := range strings.Fields(q) {
			if !strings.Contains(text, w) {
				t.Errorf("result %d does not mention %q", i, w)
			}
		}
	}
}

// rawGet sends an honest GET and returns as soon as the headers are in.
func rawGet(ctx context.Context, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range honest {
		req.Header.Set(k, v)
	}
	req.Header.Set("Accept-Encoding", "deflate")
	return (&http.Transport{DisableKeepAlives: true}).RoundTrip(req)
}

func TestFlapping(t *testing.T) {
	clock := newClock()
	f := startFleet(t, Config{Now: clock.Now, Instances: []InstanceConfig{
		{Behaviour: Flapping, Latency: -1, JSON: true, FlapPeriod: time.Minute},
	}})
	in := f.Instances()[0]
	for i, want := range []int{200, 200, 502, 502, 200} {
		if i > 0 {
			clock.Advance(30 * time.Second)
		}
		if got := get(t, in.URL()+"healthz", nil).status; got != want {
			t.Errorf("after %v: status %d, want %d", time.Duration(i)*30*time.Second, got, want)
		}
	}
}

func TestSearchFormsAndPages(t *testing.T) {
	f := startFleet(t, Config{Instances: []InstanceConfig{{ID: "sim-a", Latency: -1, JSON: true, Pages: 2}}})
	in := f.Instances()[0]
	const q = "go channels"

	// POST works like GET, as in SearXNG.
	a := do(t, "POST", in.URL()+"search", url.Values{"q": {q}, "format": {"json"}}, nil, 0)
	onTopic(t, a.json(t), q, "sim-a", 10)

	urlsOf := func(page int) []string {
		m := get(t, searchURL(in, q, "json")+fmt.Sprintf("&pageno=%d", page), nil).json(t)
		var out []string
		for _, r := range m["results"].([]any) {
			out = append(out, r.(map[string]any)["url"].(string))
		}
		return out
	}
	p1, p2, p3 := urlsOf(1), urlsOf(2), urlsOf(3)
	if len(p1) != 10 || len(p2) != 10 || len(p3) != 0 {
		t.Fatalf("pages hold %d, %d, %d results; want 10, 10, 0", len(p1), len(p2), len(p3))
	}
	for _, u := range p2 {
		if slices.Contains(p1, u) {
			t.Errorf("page 2 repeats %s", u)
		}
	}

	for _, tc := range []struct {
		url    string
		status int
		want   string
	}{
		{in.URL() + "search?q=&format=json", 400, noQueryJSON},
		{in.URL() + "search?q=", 200, `<body class="index_endpoint"`},
		{searchURL(in, q, "rss"), 403, "Forbidden"},
		{searchURL(in, q, "csv"), 403, "Forbidden"},
		{searchURL(in, q, "yaml"), 403, "Forbidden"},
		{in.URL() + "healthz", 200, "OK"},
		{in.URL() + "opensearch.xml", 200, `template="` + in.URL() + `search"`},
		{in.URL() + "autocompleter?q=go", 200, `["go", ["go tutorial", "go examples", "go sim-a"]]`},
		{in.URL() + "nonexistent", 404, "Page not found"},
		{in.URL(), 200, `<div class="index">`},
	} {
		a := get(t, tc.url, nil)
		if a.status != tc.status || !strings.Contains(string(a.body), tc.want) {
			t.Errorf("%s: status %d, want %d with %q; body %.200q", tc.url, a.status, tc.status, tc.want, a.body)
		}
	}
}

// TestHTMLLikeSearXNG checks that the results page has every id and class
// the real one has around its results (a-search-html.txt), and the
// elements a SearXNG HTML reader looks for.
func TestHTMLLikeSearXNG(t *testing.T) {
	f := startFleet(t, Config{Instances: []InstanceConfig{{ID: "sim-h", Latency: -1, JSON: true}}})
	in := f.Instances()[0]
	page := string(get(t, searchURL(in, "hello world", ""), nil).body)
	real := string(fixtureBody(t, "a-search-html.txt"))

	section := func(s string) string {
		i, j := strings.Index(s, `<div id="results"`), strings.Index(s, "</main>")
		if i < 0 || j < i {
			t.Fatalf("no results section")
		}
		return s[i:j]
	}
	// Decorations the fleet leaves out (the SVG icons) and the engine
	// name the real page has as a class (the fleet has its own engines).
	skip := map[string]bool{"ion-icon-small": true, "ion-icon-big": true, "fakeback": true}
	attrs := func(s string) map[string]bool {
		out := map[string]bool{}
		for _, key := range []string{` class="`, ` id="`} {
			for rest := s; ; {
				i := strings.Index(rest, key)
				if i < 0 {
					break
				}
				rest = rest[i+len(key):]
				v, _, _ := strings.Cut(rest, `"`)
				for _, c := range strings.Fields(v) {
					if !skip[c] {
						out[strings.TrimSpace(key)+c] = true
					}
				}
			}
		}
		return out
	}
	ours := attrs(section(page))
	for a := range attrs(section(real)) {
		if !ours[a] {
			t.Errorf("the fleet's results page lacks %s", a)
		}
	}
	for _, want := range []string{
		`<article class="result result-default category-general `,
		`<h3><a href="https://`,
		`class="url_wrapper"`,
		`<p class="content">`,
		`<div class="engines">` + "\n<span>",
		`<span class="highlight">hello</span>`,
		`<input type="hidden" name="q" value="hello world"`,
		`<meta name="generator" content="searxng/`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(page, "<article "); n != 10 {
		t.Errorf("%d articles, want 10", n)
	}
}

// TestJSONLikeSearXNG checks that the fleet's JSON has every key of the
// real answer (a-search-json.txt), at the top and in each result.
func TestJSONLikeSearXNG(t *testing.T) {
	f := startFleet(t, Config{Instances: []InstanceConfig{{Latency: -1, JSON: true}}})
	in := f.Instances()[0]
	ours := get(t, searchURL(in, "hello world", "json"), nil).json(t)
	var real map[string]any
	if err := json.Unmarshal(fixtureBody(t, "a-search-json.txt"), &real); err != nil {
		t.Fatal(err)
	}
	for k, v := range real {
		ov, ok := ours[k]
		if !ok {
			t.Errorf("no key %q", k)
			continue
		}
		if fmt.Sprintf("%T", ov) != fmt.Sprintf("%T", v) {
			t.Errorf("key %q is %T, real SearXNG's is %T", k, ov, v)
		}
	}
	rr := real["results"].([]any)[0].(map[string]any)
	for _, r := range ours["results"].([]any) {
		r := r.(map[string]any)
		for k, v := range rr {
			if fmt.Sprintf("%T", r[k]) != fmt.Sprintf("%T", v) {
				t.Errorf("result key %q is %T, real SearXNG's is %T", k, r[k], v)
			}
		}
		pu := r["parsed_url"].([]any)
		if u, _ := url.Parse(r["url"].(string)); pu[0] != u.Scheme || pu[1] != u.Host || pu[2] != u.Path {
			t.Errorf("parsed_url %v does not match %s", pu, r["url"])
		}
	}
	// /config has the keys searxgate reads.
	cfg := get(t, in.URL()+"config", nil).json(t)
	var realCfg map[string]any
	if err := json.Unmarshal(fixtureBody(t, "a-config.txt"), &realCfg); err != nil {
		t.Fatal(err)
	}
	for k := range realCfg {
		if _, ok := cfg[k]; !ok {
			t.Errorf("/config lacks %q", k)
		}
	}
	if cfg["version"] != realCfg["version"] || cfg["instance_name"] != in.ID() {
		t.Errorf("/config version %v name %v", cfg["version"], cfg["instance_name"])
	}
}

// fixtureBody returns the body of a raw `curl -i` capture in testdata.
func fixtureBody(t testing.TB, name string) []byte {
	t.Helper()
	b, err := readTestdata(name)
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := strings.Cut(string(b), "\r\n\r\n")
	if !ok {
		t.Fatalf("%s: no header/body split", name)
	}
	return []byte(body)
}

// TestCloseEndsHeldConnections checks that Close returns while answers
// hang, stall and trickle, and that their clients see the end.
func TestCloseEndsHeldConnections(t *testing.T) {
	f, err := Start(Config{Instances: []InstanceConfig{
		{Behaviour: Hang, JSON: true},
		{Behaviour: StallBody, JSON: true, Latency: -1},
		{Behaviour: SlowLoris, JSON: true, Latency: -1, SlowLorisEvery: time.Hour},
		{Behaviour: Slow, JSON: true, Latency: time.Hour},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	for _, in := range f.Instances() {
		c, err := net.Dial("tcp", in.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET /search?q=x&format=json HTTP/1.1\r\nHost: %s\r\nUser-Agent: searxgate/test\r\nAccept: */*\r\nAccept-Encoding: gzip\r\nAccept-Language: en\r\n\r\n", in.Addr())
		conns = append(conns, c)
	}
	// The stalled and trickled answers send their headers: wait for them,
	// so those two are surely held when Close runs.
	for _, c := range conns[1:3] {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || !strings.HasPrefix(line, "HTTP/1.1 200") {
			t.Fatalf("status line %q, %v", line, err)
		}
	}
	start := time.Now()
	if err := f.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if el := time.Since(start); el > 4*time.Second {
		t.Errorf("Close took %v", el)
	}
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err := io.Copy(io.Discard, c)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("connection %d still open after Close", i)
		}
	}
}

// TestBangAsSearXNG: the fleet reads redirecting bangs as SearXNG does:
// a known external bang wins over "!!" wherever either stands, and an
// unknown one is searched as typed.
func TestBangAsSearXNG(t *testing.T) {
	for _, tc := range []struct {
		q, site string
		lucky   bool
		rest    string
	}{
		{"!!g foo bar", "https://www.google.com/search?q=foo+bar", false, "foo bar"},
		{"foo !!w bar", "https://en.wikipedia.org/wiki/Special:Search?search=foo+bar", false, "foo bar"},
		{"!! !!g foo", "https://www.google.com/search?q=foo", false, "foo"},
		{"!!g !! foo", "https://www.google.com/search?q=foo", false, "foo"},
		{"!! foo", "", true, "foo"},
		{"!!zz foo", "", false, "!!zz foo"},
		{"!! !!zz foo", "", true, "!!zz foo"},
		{"c++ !!important", "", false, "c++ !!important"},
		{"!!g !!important foo", "https://www.google.com/search?q=%21%21important+foo", false, "!!important foo"},
		{"plain words", "", false, "plain words"},
	} {
		site, lucky, rest := bang(tc.q)
		if site != tc.site || lucky != tc.lucky || rest != tc.rest {
			t.Errorf("bang(%q) = %q, %v, %q; want %q, %v, %q", tc.q, site, lucky, rest, tc.site, tc.lucky, tc.rest)
		}
	}
}
