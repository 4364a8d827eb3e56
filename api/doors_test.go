package api

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/searxgate/searxgate/client"
	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/reader"
)

// TestTavilyExtract: every URL read through the reader, at once; a page
// that fails is in failed_results with the reader's words; text drops
// Markdown's marks; a client refused every read is a 429.
func TestTavilyExtract(t *testing.T) {
	fr := &fakeRead{fail: map[string]error{"https://b.example/": fmt.Errorf("%w: https://b.example/", reader.ErrPrivate)}}
	s := newTest(&fakeSearch{}, fr)
	status, body, _ := do(t, s, "POST", PathTavilyExtract, `{"urls":["https://a.example/","https://b.example/"," "],"extract_depth":"advanced","include_images":true}`, nil)
	var out struct {
		Results []struct {
			URL        string `json:"url"`
			RawContent string `json:"raw_content"`
		}
		FailedResults []struct{ URL, Error string } `json:"failed_results"`
		ResponseTime  *float64                      `json:"response_time"`
	}
	decode(t, body, &out)
	if status != 200 || len(out.Results) != 1 || out.Results[0].RawContent != "# page https://a.example/\n\nSee [the **docs**](https://x.example/d)." ||
		len(out.FailedResults) != 1 || !strings.Contains(out.FailedResults[0].Error, "not public") || out.ResponseTime == nil {
		t.Fatalf("%d %s", status, body)
	}
	out.Results = nil
	_, body, _ = do(t, s, "POST", PathTavilyExtract, `{"urls":"https://a.example/","format":"text"}`, nil)
	decode(t, body, &out)
	if len(out.Results) != 1 || out.Results[0].RawContent != "page https://a.example/\n\nSee the docs." {
		t.Errorf("text: %s", body)
	}
	for body, want := range map[string]string{
		`{}`:                                   "urls is missing",
		`{"urls":[]}`:                          "urls is missing",
		`{"urls":5}`:                           "urls must be a list of strings",
		`{"urls":["a"],"format":"html"}`:       "format must be one of",
		`{"urls":["a"],"extract_depth":"max"}`: "extract_depth must be one of",
		`{"urls":[` + strings.Repeat(`"u",`, 20) + `"u"]}`: "at most 20",
	} {
		status, out, _ := do(t, s, "POST", PathTavilyExtract, body, nil)
		if status != 400 || !strings.Contains(string(out), want) {
			t.Errorf("%s: %d %s", body, status, out)
		}
	}
	limited := &fakeRead{fail: map[string]error{"https://a.example/": &reader.LimitedError{RetryAfter: 3e9}}}
	status, body, h := do(t, newTest(&fakeSearch{}, limited), "POST", PathTavilyExtract, `{"urls":["https://a.example/"]}`, nil)
	if status != 429 || string(h.Peek("Retry-After")) != "3" || !strings.Contains(string(body), "page reads") {
		t.Errorf("limited: %d %s", status, body)
	}
}

// TestBrave: Brave's shape (type, query.original, web.results with
// title, url, description, ages, profile, meta_url), count and offset
// over SearXNG's pages, freshness, safesearch and language mapped, and
// bad parameters Brave's 422.
func TestBrave(t *testing.T) {
	fs := &fakeSearch{perPage: 10, pages: 5, dates: []string{"", "", "", "", "", "", "2025-03-14T15:09:26+00:00"}}
	s := newTest(fs, nil)
	status, body, _ := do(t, s, "GET", PathBrave+"?q=tidal+locking&count=4&offset=1&freshness=pm&safesearch=strict&search_lang=en&country=gb&extra=1", "", nil)
	var out struct {
		Type  string
		Query struct {
			Original string
			More     bool `json:"more_results_available"`
		}
		Web struct {
			Type    string
			Results []struct {
				Type, Title, URL, Description, Age string
				PageAge                            string `json:"page_age"`
				Profile                            struct{ Name, URL string }
				MetaURL                            struct{ Scheme, Netloc, Hostname, Path string } `json:"meta_url"`
			}
		}
	}
	decode(t, body, &out)
	if status != 200 || out.Type != "search" || out.Query.Original != "tidal locking" || !out.Query.More || out.Web.Type != "search" || len(out.Web.Results) != 4 {
		t.Fatalf("%d %s", status, body)
	}
	r := out.Web.Results[2]
	if r.URL != "https://example.org/7" || r.Title != "result 7" || r.Description != "about tidal locking, 7" || r.Type != "search_result" ||
		r.PageAge != "2025-03-14T15:09:26" || r.Age != "March 14, 2025" || r.Profile.Name != "example.org" || r.Profile.URL != "https://example.org" ||
		r.MetaURL.Hostname != "example.org" || r.MetaURL.Scheme != "https" || r.MetaURL.Path != " › 7" {
		t.Errorf("result %+v", r)
	}
	a := fs.last()
	if a.TimeRange != "month" || a.SafeSearch != "2" || a.Language != "en-GB" || a.Query != "tidal locking" {
		t.Errorf("asked %+v", a)
	}
	// 20 from offset 2: results 41..50, over pages 1..5.
	_, body, _ = do(t, s, "GET", PathBraveUnder+"?q=x&count=20&offset=2", "", nil)
	decode(t, body, &out)
	if len(out.Web.Results) != 10 || out.Web.Results[0].URL != "https://example.org/41" {
		t.Errorf("offset 2: %d results, first %s", len(out.Web.Results), out.Web.Results[0].URL)
	}
	// A page that brings nothing new says there is no more.
	_, body, _ = do(t, newTest(&fakeSearch{perPage: 10, pages: 1}, nil), "GET", PathBrave+"?q=x", "", nil)
	decode(t, body, &out)
	if len(out.Web.Results) != 10 || out.Query.More {
		t.Errorf("one page: %d results, more %v", len(out.Web.Results), out.Query.More)
	}
	for q, want := range map[string]string{
		"":                                      "q is missing",
		"?q=":                                   "q is missing",
		"?q=x&count=0":                          "count must be",
		"?q=x&count=abc":                        "count must be",
		"?q=x&offset=10":                        "offset must be",
		"?q=x&safesearch=maybe":                 "safesearch must be",
		"?q=x&freshness=pq":                     "freshness must be",
		"?q=x&freshness=2025-01-02to2024-01-01": "freshness must be",
		"?q=x&search_lang=english":              "two-letter",
	} {
		status, body, _ := do(t, s, "GET", PathBrave+q, "", nil)
		var e struct {
			Type  string
			Error struct {
				Status       int
				Code, Detail string
			}
		}
		decode(t, body, &e)
		if status != 422 || e.Type != "ErrorResponse" || e.Error.Status != 422 || e.Error.Code != "VALIDATION" || !strings.Contains(e.Error.Detail, want) {
			t.Errorf("%s: %d %s", q, status, body)
		}
	}
	status, body, _ = do(t, newTest(&fakeSearch{err: &proxy.NoAnswerError{Why: proxy.StopShare}}, nil), "GET", PathBrave+"?q=x", "", nil)
	if status != 429 || !strings.Contains(string(body), `"code":"RATE_LIMITED"`) {
		t.Errorf("share: %d %s", status, body)
	}
}

// TestOpenWebUI: {query, count} answered with [{link, title, snippet}],
// count up to 50 across SearXNG's pages; its default is Open WebUI's
// (3); bad input a 400.
func TestOpenWebUI(t *testing.T) {
	fs := &fakeSearch{perPage: 10, pages: 9}
	s := newTest(fs, nil)
	status, body, _ := do(t, s, "POST", PathOpenWebUI, `{"query":"tidal locking","count":25}`, map[string]string{"Authorization": "Bearer anything"})
	var out []map[string]string
	decode(t, body, &out)
	if status != 200 || len(out) != 25 || out[24]["link"] != "https://example.org/25" || out[0]["title"] != "result 1" ||
		out[0]["snippet"] != "about tidal locking, 1" || len(out[0]) != 3 {
		t.Fatalf("%d %s", status, body)
	}
	_, body, _ = do(t, s, "POST", PathOpenWebUI, `{"query":"x","count":50}`, nil)
	decode(t, body, &out)
	if len(out) != 50 {
		t.Errorf("count 50: %d", len(out))
	}
	_, body, _ = do(t, s, "POST", PathOpenWebUI, `{"query":"x"}`, nil)
	decode(t, body, &out)
	if len(out) != 3 {
		t.Errorf("default count: %d", len(out))
	}
	for body, want := range map[string]string{
		`{"count":3}`:               "query is missing",
		`{"query":["x"]}`:           "query must be a string",
		`{"query":"x","count":51}`:  "between 1 and 50",
		`{"query":"x","count":"3"}`: "count must be a whole number",
		`query=x`:                   "JSON object",
	} {
		status, out, _ := do(t, s, "POST", PathOpenWebUI, body, nil)
		if status != 400 || !strings.Contains(string(out), want) || !strings.HasPrefix(string(out), `{"detail":`) {
			t.Errorf("%s: %d %s", body, status, out)
		}
	}
}

// TestAccess: without keys the doors are open on loopback only (mcp's
// rule: closed when exposed, to a forwarded request, to another Host or
// Origin); with keys each door takes its API's key, each key is its own
// client, and a missing or wrong key is a 401 in the door's shape.
func TestAccess(t *testing.T) {
	fs := &fakeSearch{perPage: 3, pages: 1}
	open := newTest(fs, nil)
	exposed := newTest(fs, nil)
	exposed.cfg.Exposed = true
	for _, c := range []struct {
		s      *Server
		header map[string]string
		status int
		words  string
	}{
		{open, nil, 200, ""},
		{open, map[string]string{"Origin": "http://localhost:3000"}, 200, ""},
		{exposed, nil, 403, "--api-key"},
		{open, map[string]string{"X-Forwarded-For": "203.0.113.9"}, 403, "forwarded"},
		{open, map[string]string{"Forwarded": "for=203.0.113.9"}, 403, "forwarded"},
		{open, map[string]string{"Via": "1.1 edge"}, 403, "forwarded"},
		{open, map[string]string{"CF-Connecting-IP": "203.0.113.9"}, 403, "forwarded"},
		{open, map[string]string{"Host": "searx.example.org"}, 403, "Host"},
		{open, map[string]string{"Origin": "https://evil.example"}, 403, "Origin"},
	} {
		for _, door := range []struct{ method, path, body string }{
			{"POST", PathTavilySearch, `{"query":"q"}`}, {"GET", PathBrave + "?q=q", ""}, {"POST", PathOpenWebUI, `{"query":"q"}`},
		} {
			status, body, _ := do(t, c.s, door.method, door.path, door.body, c.header)
			if status != c.status || !strings.Contains(string(body), c.words) {
				t.Errorf("%s %v exposed=%v: %d %s", door.path, c.header, c.s.cfg.Exposed, status, body)
			}
		}
	}

	const k1, k2 = "key-one-0123456789abcdef", "key-two-0123456789abcdef"
	keyed := newTest(fs, nil, k1, k2)
	keyed.cfg.Exposed = true
	for _, c := range []struct {
		method, path, body string
		header             map[string]string
		status             int
	}{
		{"POST", PathTavilySearch, `{"query":"q"}`, map[string]string{"Authorization": "Bearer " + k1}, 200},
		{"POST", PathTavilySearch, `{"query":"q","api_key":"` + k2 + `"}`, nil, 200},
		{"POST", PathTavilySearch, `{"query":"q"}`, map[string]string{"Authorization": "Bearer wrong-0123456789abcdef"}, 401},
		{"POST", PathTavilySearch, `{"query":"q"}`, nil, 401},
		{"POST", PathTavilyExtract, `{"urls":["https://a.example/"]}`, nil, 401},
		{"GET", PathBrave + "?q=q", "", map[string]string{"X-Subscription-Token": k2}, 200},
		{"GET", PathBrave + "?q=q", "", map[string]string{"X-Subscription-Token": "nope"}, 401},
		{"GET", PathBrave + "?q=q", "", map[string]string{"Authorization": "Bearer " + k2}, 401},
		{"POST", PathOpenWebUI, `{"query":"q"}`, map[string]string{"Authorization": "Bearer " + k2}, 200},
		{"POST", PathOpenWebUI, `{"query":"q"}`, map[string]string{"Authorization": "Basic " + k2}, 401},
		// A key is a key wherever it comes from.
		{"POST", PathOpenWebUI, `{"query":"q"}`, map[string]string{"Authorization": "Bearer " + k1, "X-Forwarded-For": "203.0.113.9", "Host": "searx.example.org"}, 200},
	} {
		status, body, _ := do(t, keyed, c.method, c.path, c.body, c.header)
		if status != c.status {
			t.Errorf("%s %s %v: %d %s", c.path, c.body, c.header, status, body)
		}
		if status == 401 && (strings.Contains(string(body), k1) || strings.Contains(string(body), k2)) {
			t.Errorf("a 401 repeats a key: %s", body)
		}
	}
	clients := map[string]bool{}
	for _, r := range fs.requests() {
		clients[r.Client] = true
	}
	if !clients[client.FromAPIKey(Fingerprint(k1))] || !clients[client.FromAPIKey(Fingerprint(k2))] || !clients["127.0.0.1"] || len(clients) != 3 {
		t.Errorf("clients %v", clients)
	}
	for c := range clients {
		if strings.Contains(c, "key-") {
			t.Errorf("a client key holds the key: %s", c)
		}
	}
}

// TestKeys: keys are set and replaced at once, checked in constant time
// against every one, too short a key refused; the key file skips blank
// lines and comments.
func TestKeys(t *testing.T) {
	var k Keys
	if k.Len() != 0 {
		t.Fatal("keys before Set")
	}
	if _, ok := k.Check("anything-0123456789"); ok {
		t.Fatal("no keys accepted one")
	}
	if err := k.Set([]string{"short"}); err == nil || k.Len() != 0 {
		t.Errorf("a short key: %v", err)
	}
	if err := k.Set([]string{"has space 0123456789"}); err == nil {
		t.Error("a key with a space was taken")
	}
	path := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(path, []byte("# the team\nkey-one-0123456789abcdef\n\n  key-two-0123456789abcdef  \nkey-one-0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := ReadKeyFile(path)
	if err != nil || k.Set(keys) != nil || k.Len() != 2 {
		t.Fatalf("%v %v %d", keys, err, k.Len())
	}
	fp, ok := k.Check("key-two-0123456789abcdef")
	if !ok || fp != Fingerprint("key-two-0123456789abcdef") || len(fp) != 16 || strings.Contains(fp, "key") {
		t.Errorf("check: %q %v", fp, ok)
	}
	if fp == Fingerprint("key-one-0123456789abcdef") {
		t.Error("two keys, one fingerprint")
	}
	if _, ok := k.Check("key-two-0123456789abcdeF"); ok {
		t.Error("a near key was taken")
	}
	if err := k.Set([]string{"key-three-0123456789abcdef"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := k.Check("key-two-0123456789abcdef"); ok {
		t.Error("a key replaced is still taken")
	}
	if _, err := ReadKeyFile(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("a missing file read")
	}
}
