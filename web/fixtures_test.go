package web

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/results"
)

// capture is one raw `curl -i` capture of real SearXNG (2024.10.5):
// testdata/searxng/, copied from the shared fixtures (INDEX.tsv there
// says which request made each).
type capture struct {
	status int
	header map[string]string // canonical names
	body   string
}

func readCapture(t *testing.T, name string) capture {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "searxng", name))
	if err != nil {
		t.Fatal(err)
	}
	head, body, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
	if !ok {
		t.Fatalf("%s: no end of headers", name)
	}
	lines := strings.Split(string(head), "\r\n")
	var c capture
	c.header = map[string]string{}
	var proto string
	if _, err := fmt.Sscan(lines[0], &proto, &c.status); err != nil {
		t.Fatalf("%s: status line %q: %v", name, lines[0], err)
	}
	for _, l := range lines[1:] {
		k, v, _ := strings.Cut(l, ":")
		c.header[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	c.body = string(body)
	return c
}

// mediaType is a Content-Type without its parameters, lower-cased.
func mediaType(ct string) string {
	t, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(t))
}

// fixtureSearch answers every search with the JSON of a SearXNG capture,
// echoing the query as the proxy does (Request.Echo of what the instance
// echoed).
func fixtureSearch(t *testing.T, name string) *fakeSearch {
	c := readCapture(t, name)
	return &fakeSearch{answer: func(req proxy.Request) (*proxy.Response, error) {
		r, err := detect.ParseJSON([]byte(c.body))
		if err != nil {
			return nil, err
		}
		r.Query = req.Echo(r.Query)
		return &proxy.Response{JSON: r.AppendJSON(nil), Instance: "https://up.example/", Attempts: 1}, nil
	}}
}

// TestSearXNGEdges answers each edge the way the capture of real SearXNG
// does: status, media type and what the body must hold.
func TestSearXNGEdges(t *testing.T) {
	longQ := strings.Repeat("a", 3000) // INDEX.tsv's request
	tests := []struct {
		fixture string
		method  string
		uri     string // as INDEX.tsv's request
		body    string
		search  string // the capture the fake search answers with
		cfg     Config
		check   func(t *testing.T, got reply, want capture)
	}{
		{fixture: "a-robots.txt", method: "GET", uri: "/robots.txt",
			check: func(t *testing.T, got reply, want capture) {
				for _, line := range strings.Split(strings.TrimSpace(want.body), "\n") {
					if !strings.Contains(got.body, line+"\n") {
						t.Errorf("robots.txt lacks SearXNG's %q", line)
					}
				}
				for _, own := range []string{"Disallow: /status", "Disallow: /metrics", "Disallow: /api/"} {
					if !strings.Contains(got.body, own) {
						t.Errorf("robots.txt lacks %q", own)
					}
				}
			}},
		{fixture: "a-search-format-xml.txt", method: "GET", uri: "/search?q=hello+world&format=xml", search: "a-search-json.txt",
			check: func(t *testing.T, got reply, _ capture) {
				if !strings.Contains(got.body, `<article class="result">`) || !strings.Contains(got.body, `value="hello world"`) {
					t.Errorf("an unknown format is not the results page:\n%.500s", got.body)
				}
			}},
		{fixture: "a-search-format-upper-JSON.txt", method: "GET", uri: "/search?q=hello+world&format=JSON", search: "a-search-json.txt",
			check: func(t *testing.T, got reply, _ capture) {
				if json.Valid([]byte(got.body)) || !strings.Contains(got.body, `<article class="result">`) {
					t.Errorf("format=JSON is not the results page:\n%.500s", got.body)
				}
			}},
		{fixture: "a-search-json-bang.txt", method: "GET", uri: "/search?q=%21fb+edge+bang&format=json", search: "a-search-json-bang.txt",
			check: func(t *testing.T, got reply, want capture) {
				sameJSONKeys(t, got.body, want.body)
				if q := jsonQuery(t, got.body); q != "edge bang" {
					t.Errorf("echoed query %q, want SearXNG's %q", q, "edge bang")
				}
			}},
		{fixture: "a-search-json-long-query.txt", method: "GET", uri: "/search?q=" + longQ + "&format=json", search: "a-search-json-long-query.txt",
			check: func(t *testing.T, got reply, want capture) {
				sameJSONKeys(t, got.body, want.body)
				if q := jsonQuery(t, got.body); q != longQ || jsonQuery(t, want.body) != longQ {
					t.Errorf("a 3,000-byte query is not echoed whole (%d bytes)", len(q))
				}
			}},
		{fixture: "a-404.txt", method: "GET", uri: "/nonexistent",
			check: func(t *testing.T, got reply, _ capture) {
				if !strings.Contains(got.body, "<!doctype html>") || !strings.Contains(got.body, "There is no page at this address.") {
					t.Errorf("not the 404 page:\n%.300s", got.body)
				}
			}},
		{fixture: "a-search-rss-disabled.txt", method: "GET", uri: "/search?q=hello&format=rss",
			cfg: Config{Formats: []string{"html", "json", "csv"}},
			check: func(t *testing.T, got reply, want capture) {
				if got.body != want.body {
					t.Errorf("body %q, want Werkzeug's %q", got.body, want.body)
				}
			}},
		{fixture: "a-search-json-noresults.txt", method: "GET", uri: "/search?q=noresults&format=json", search: "a-search-json-noresults.txt",
			check: func(t *testing.T, got reply, want capture) {
				var g, w map[string]any
				if err := json.Unmarshal([]byte(got.body), &g); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal([]byte(want.body), &w); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(g, w) {
					t.Errorf("empty answer\n got %s\nwant %s", got.body, want.body)
				}
			}},
		{fixture: "a-search-html-noresults.txt", method: "GET", uri: "/search?q=noresults", search: "a-search-json-noresults.txt",
			check: func(t *testing.T, got reply, want capture) {
				for _, s := range []string{"Sorry!", "No results were found"} {
					if !strings.Contains(want.body, s) || !strings.Contains(got.body, s) {
						t.Errorf("the page lacks SearXNG's %q", s)
					}
				}
				if strings.Contains(got.body, "best answer was") || strings.Contains(got.body, `rel="next"`) {
					t.Error("an empty answer is shown as a lesser one, or with a next page")
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			want := readCapture(t, tt.fixture)
			cfg := tt.cfg
			cfg.Search = &fakeSearch{answer: func(proxy.Request) (*proxy.Response, error) {
				t.Error("searched")
				return nil, proxy.ErrNoAnswer
			}}
			if tt.search != "" {
				cfg.Search = fixtureSearch(t, tt.search)
			}
			_, c := serve(t, cfg)
			got := c.do(tt.method, tt.uri, tt.body)
			if got.status != want.status {
				t.Fatalf("status %d, SearXNG's %d: %.300s", got.status, want.status, got.body)
			}
			if g, w := mediaType(got.header["Content-Type"]), mediaType(want.header["Content-Type"]); g != w {
				t.Errorf("Content-Type %q, SearXNG's %q", g, w)
			}
			for _, h := range []string{"X-Content-Type-Options", "Referrer-Policy", "X-Robots-Tag"} {
				if got.header[h] != want.header[h] {
					t.Errorf("%s %q, SearXNG's %q", h, got.header[h], want.header[h])
				}
			}
			tt.check(t, got, want)
		})
	}
}

func jsonQuery(t *testing.T, body string) string {
	t.Helper()
	var v struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("%v: %.200s", err, body)
	}
	return v.Query
}

// sameJSONKeys fails unless got has every top-level key of want, each
// with a value of the same JSON type.
func sameJSONKeys(t *testing.T, got, want string) {
	t.Helper()
	var g, w map[string]any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("%v: %.200s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	for k, wv := range w {
		gv, ok := g[k]
		if !ok {
			t.Errorf("key %q missing", k)
			continue
		}
		if reflect.TypeOf(gv) != reflect.TypeOf(wv) {
			t.Errorf("key %q is %T, SearXNG's %T", k, gv, wv)
		}
	}
}

// TestLongQueries: SearXNG takes any length; searxgate takes up to
// proxy.MaxQueryLen (16 KiB), the longest by POST, and refuses one past it
// in the format asked.
func TestLongQueries(t *testing.T) {
	fs := &fakeSearch{answer: jsonAnswer(simpleAnswer, "https://up.example/")}
	_, c := serve(t, Config{Search: fs})
	tests := []struct {
		q      string
		format string
		status int
	}{
		{strings.Repeat("a", 2049), "json", 200},
		{strings.Repeat("a", proxy.MaxQueryLen), "json", 200},
		{strings.Repeat("é", proxy.MaxQueryLen/2), "html", 200},
		{strings.Repeat("a", proxy.MaxQueryLen+1), "json", 400},
		{strings.Repeat("a", proxy.MaxQueryLen+1), "html", 400},
	}
	for _, tt := range tests {
		r := c.do("POST", "/search", url.Values{"q": {tt.q}, "format": {tt.format}}.Encode())
		if r.status != tt.status {
			t.Errorf("%d-byte query as %s: status %d, want %d", len(tt.q), tt.format, r.status, tt.status)
			continue
		}
		if tt.status == 200 && fs.last().Query != tt.q {
			t.Errorf("%d-byte query passed as %d bytes", len(tt.q), len(fs.last().Query))
		}
		if tt.status == 400 && tt.format == "json" && !strings.Contains(r.body, `parameter q`) {
			t.Errorf("refusal %s", r.body)
		}
	}
}

// TestEmptyAnswers: an answer with no results and no engine down is served
// as SearXNG serves it, whatever shape the proxy kept it in.
func TestEmptyAnswers(t *testing.T) {
	const want = `{"query":"noresults","number_of_results":0,"results":[],"answers":[],"corrections":[],"infoboxes":[],"suggestions":[],"unresponsive_engines":[]}`
	for name, body := range map[string]string{
		"as the proxy writes it": string((&results.Page{Query: "noresults"}).AppendJSON(nil)),
		"keys missing":           `{"query":"noresults","results":[]}`,
		"newer SearXNG's shape":  `{"query":"noresults","results":[],"answers":[],"corrections":[],"infoboxes":[],"suggestions":[],"unresponsive_engines":[]}`,
	} {
		t.Run(name, func(t *testing.T) {
			fs := &fakeSearch{answer: func(proxy.Request) (*proxy.Response, error) {
				return &proxy.Response{JSON: []byte(body), Instance: "https://up.example/"}, nil
			}}
			_, c := serve(t, Config{Search: fs})
			if r := c.get("/search?q=noresults&format=json"); r.status != 200 || r.body != want {
				t.Errorf("json: %d %s", r.status, r.body)
			}
			if r := c.get("/search?q=noresults&format=csv"); r.status != 200 || r.body != "title,url,content,host,engine,score,type\r\n" {
				t.Errorf("csv: %d %q", r.status, r.body)
			}
			r := c.get("/search?q=noresults&format=rss")
			if r.status != 200 || strings.Contains(r.body, "<item>") || !strings.Contains(r.body, "<opensearch:totalResults>0</opensearch:totalResults>") {
				t.Errorf("rss: %d %s", r.status, r.body)
			}
			r = c.get("/search?q=noresults")
			if r.status != 200 || !strings.Contains(r.body, "No results were found") {
				t.Errorf("html: %d", r.status)
			}
		})
	}
}

// TestRSS: the RSS answer has SearXNG's Content-Type and the fields of its
// opensearch_response_rss template.
func TestRSS(t *testing.T) {
	fs := &fakeSearch{answer: jsonAnswer(simpleAnswer, "https://up.example/")}
	_, c := serve(t, Config{Search: fs, PublicURL: "https://gate.example/"})
	r := c.get("/search?q=hello&format=rss")
	if r.status != 200 || r.header["Content-Type"] != "text/xml; charset=utf-8" {
		t.Fatalf("%d %q", r.status, r.header["Content-Type"])
	}
	var doc struct {
		Version string `xml:"version,attr"`
		Channel struct {
			Title        string `xml:"title"`
			Description  string `xml:"description"`
			TotalResults string `xml:"http://a9.com/-/spec/opensearch/1.1/ totalResults"`
			StartIndex   string `xml:"http://a9.com/-/spec/opensearch/1.1/ startIndex"`
			ItemsPerPage string `xml:"http://a9.com/-/spec/opensearch/1.1/ itemsPerPage"`
			Query        struct {
				Role        string `xml:"role,attr"`
				SearchTerms string `xml:"searchTerms,attr"`
			} `xml:"http://a9.com/-/spec/opensearch/1.1/ Query"`
			Items []struct {
				Title       string `xml:"title"`
				Type        string `xml:"type"`
				Link        string `xml:"link"`
				Description string `xml:"description"`
				PubDate     string `xml:"pubDate"`
			} `xml:"item"`
		} `xml:"channel"`
	}
	if err := xml.Unmarshal([]byte(r.body), &doc); err != nil {
		t.Fatalf("%v\n%s", err, r.body)
	}
	ch := doc.Channel
	// <link> and <atom:link> share a local name, which encoding/xml does
	// not tell apart: read them from the text.
	for _, want := range []string{"<link>https://gate.example/search?q=hello</link>",
		`<atom:link rel="search" type="application/opensearchdescription+xml" href="https://gate.example/opensearch.xml"/>`} {
		if !strings.Contains(r.body, want) {
			t.Errorf("RSS lacks %s", want)
		}
	}
	if doc.Version != "2.0" || ch.Title != "SearXNG search: hello" ||
		// number_of_results as the answer gave it, as SearXNG 2024's feed.
		ch.TotalResults != "0" || ch.StartIndex != "1" || ch.ItemsPerPage != "0" ||
		ch.Query.Role != "request" || ch.Query.SearchTerms != "hello" || !strings.HasPrefix(ch.Description, `Search results for "hello"`) {
		t.Errorf("channel %+v", ch)
	}
	if len(ch.Items) != 4 || ch.Items[0].Title != "Hello world" || ch.Items[0].Type != "result" ||
		ch.Items[0].Link != "https://example.org/hello" || ch.Items[0].Description != "A page about hello." || ch.Items[0].PubDate == "" {
		t.Fatalf("items %+v", ch.Items)
	}
	// Then the answers, corrections and suggestions, as SearXNG's
	// opensearch_response_rss.xml writes them: a title and a type.
	for i, want := range [][2]string{{"hello is a greeting", "answer"}, {"hallo", "correction"}, {"hello kitty", "suggestion"}} {
		if it := ch.Items[i+1]; it.Title != want[0] || it.Type != want[1] || it.Link != "" {
			t.Errorf("item %d = %+v, want title %q type %q", i+1, it, want[0], want[1])
		}
	}
}

// TestCSVFormulaInjection: no cell of the CSV, in any column, starts with
// what a spreadsheet runs as a formula.
func TestCSVFormulaInjection(t *testing.T) {
	const evil = `{"query":"x","number_of_results":0,"results":[` +
		`{"url":"https://-2.example/","title":"=cmd|' /C calc'!A0","content":"+1+1","engine":"@SUM(1)","score":-1},` +
		`{"url":"https://ok.example/","title":"\tTab","content":"\rCR","engine":"-e","parsed_url":["https","=evil.host","/","","",""]}],` +
		`"answers":["=1+2"],"corrections":["@c"],"infoboxes":[],"suggestions":["-s"],"unresponsive_engines":[]}`
	fs := &fakeSearch{answer: jsonAnswer(evil, "https://up.example/")}
	_, c := serve(t, Config{Search: fs})
	r := c.get("/search?q=x&format=csv")
	if r.status != 200 {
		t.Fatalf("status %d", r.status)
	}
	rows, err := csv.NewReader(strings.NewReader(r.body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 6 {
		t.Fatalf("%d rows: %q", len(rows), rows)
	}
	for i, row := range rows {
		for j, cell := range row {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
				t.Errorf("row %d column %s: %q can run as a formula", i, rows[0][j], cell)
			}
		}
	}
	for _, want := range []string{`'=cmd|' /C calc'!A0`, `'+1+1`, `'@SUM(1)`, `'-2.example`, "'\tTab", `'-1.0`, `'=1+2`, `'-s`} {
		if !strings.Contains(r.body, want) {
			t.Errorf("CSV lacks the defused %q", want)
		}
	}
}

func TestCSVCell(t *testing.T) {
	for in, want := range map[string]string{
		"": "", "plain": "plain", "=1": "'=1", "+1": "'+1", "-1": "'-1", "@x": "'@x", "\tx": "'\tx", "\rx": "'\rx",
		"a=1": "a=1", "'=1": "'=1", "1.5": "1.5",
	} {
		if got := csvCell(in); got != want {
			t.Errorf("csvCell(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPoisonedHost: a Host header chosen by an attacker never reaches a
// shared cache. With --public-url the links are the public URL's and the
// Host is ignored; without it the links follow the Host, and the answer is
// private to the client that sent it.
func TestPoisonedHost(t *testing.T) {
	tests := []struct {
		name, publicURL, host string
		wantBase              string
		wantPrivate           bool
	}{
		{"public URL set", "https://gate.example.org/", "evil.example", "https://gate.example.org/", false},
		{"no public URL", "", "evil.example", "http://evil.example/", true},
		{"no public URL, loopback", "", "127.0.0.1:8888", "http://127.0.0.1:8888/", true},
		{"no public URL, malformed", "", `evil"><x`, "http://localhost/", true},
	}
	for _, tt := range tests {
		for _, uri := range []string{"/opensearch.xml", "/search?q=hello&format=rss"} {
			t.Run(tt.name+" "+uri, func(t *testing.T) {
				fs := &fakeSearch{answer: jsonAnswer(simpleAnswer, "https://up.example/")}
				_, c := serve(t, Config{Search: fs, PublicURL: tt.publicURL})
				r := c.get(uri, "Host", tt.host, "X-Forwarded-Host", "forwarded.evil.example")
				if r.status != 200 {
					t.Fatalf("status %d", r.status)
				}
				if !strings.Contains(r.body, tt.wantBase+"opensearch.xml") {
					t.Errorf("links not built from %s:\n%s", tt.wantBase, r.body)
				}
				if strings.Contains(r.body, "forwarded.evil.example") || (tt.publicURL != "" && strings.Contains(r.body, tt.host)) {
					t.Errorf("a header the client chose is in the links:\n%s", r.body)
				}
				private := strings.Contains(r.header["Cache-Control"], "private")
				if private != tt.wantPrivate {
					t.Errorf("Cache-Control %q, want private: %v", r.header["Cache-Control"], tt.wantPrivate)
				}
				if tt.wantPrivate && !strings.Contains(r.header["Vary"], "Host") {
					t.Errorf("Vary %q lacks Host", r.header["Vary"])
				}
			})
		}
	}
}
