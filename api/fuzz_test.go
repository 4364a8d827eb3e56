package api

import (
	"encoding/json"
	"strings"
	"testing"
)

// fuzzDoor sends body (or, for a GET, the query string) to a door and
// checks what any input must get: an answer in JSON, 200 or 400 (Brave's
// 422), and a 400 whenever the request has no query of the right type.
func fuzzDoor(t *testing.T, method, path, input, queryField string) {
	s := newTest(&fakeSearch{perPage: 3, pages: 2}, &fakeRead{})
	var status int
	var body []byte
	if method == "GET" {
		status, body, _ = do(t, s, method, path+"?"+input, "", nil)
	} else {
		status, body, _ = do(t, s, method, path, input, nil)
	}
	if !json.Valid(body) {
		t.Fatalf("%q: not JSON: %s", input, body)
	}
	if status != 200 && status != 400 && status != 422 {
		t.Fatalf("%q: status %d: %s", input, status, body)
	}
	if method == "GET" || queryField == "" {
		return
	}
	var f map[string]any
	if json.Unmarshal([]byte(input), &f) == nil && f != nil {
		q, ok := f[queryField].(string)
		if (!ok || strings.TrimSpace(q) == "") && status != 400 {
			t.Fatalf("%q: no %s, status %d", input, queryField, status)
		}
	}
}

func FuzzTavilySearch(f *testing.F) {
	for _, s := range []string{`{"query":"q"}`, `{"query":"q","max_results":3,"include_raw_content":"text","include_domains":["a.example"]}`,
		`{"query":1}`, `{"query":"q","start_date":"2025-01-01","days":3,"time_range":"y"}`, `{"query":"q","include_answer":"advanced","x":[1,{}]}`, `[]`, `null`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) { fuzzDoor(t, "POST", PathTavilySearch, body, "query") })
}

func FuzzTavilyExtract(f *testing.F) {
	for _, s := range []string{`{"urls":["https://a.example/"]}`, `{"urls":"https://a.example/","format":"text"}`, `{"urls":[1]}`, `{}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) { fuzzDoor(t, "POST", PathTavilyExtract, body, "") })
}

func FuzzBrave(f *testing.F) {
	for _, s := range []string{"q=x", "q=x&count=5&offset=2", "q=x&freshness=2024-01-01to2024-02-01", "q=x&search_lang=en&country=us&safesearch=off", "count=3", "q=%ff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, query string) {
		if strings.IndexFunc(query, func(r rune) bool { return r <= ' ' || r == '#' || r >= 0x7f }) >= 0 {
			return // not a request line's query string
		}
		fuzzDoor(t, "GET", PathBrave, query, "")
	})
}

func FuzzOpenWebUI(f *testing.F) {
	for _, s := range []string{`{"query":"q","count":5}`, `{"query":"q","count":50}`, `{"query":["q"]}`, `{"count":3}`, `{"query":"q","count":1e9}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) { fuzzDoor(t, "POST", PathOpenWebUI, body, "query") })
}
