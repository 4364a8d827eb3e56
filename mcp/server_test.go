package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/reader"
)

// fakeSearch answers from a table and remembers the requests.
type fakeSearch struct {
	mu   sync.Mutex // guards reqs
	reqs []proxy.Request
	err  error
	json string
}

func (f *fakeSearch) Search(_ context.Context, req proxy.Request) (*proxy.Response, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	return &proxy.Response{JSON: []byte(f.json), Instance: "https://searx.example/", Cached: true}, nil
}

const answerJSON = `{"query":"go","number_of_results":0,"results":[
 {"url":"https://go.dev/","title":"The Go  Programming Language","content":"Go is an open source\nprogramming language.","engine":"duckduckgo","publishedDate":"2024-01-02"},
 {"url":"https://en.wikipedia.org/wiki/Go","title":"Go (programming language)","content":"","engine":"wikipedia"}],
 "answers":["Go was designed at Google"],"corrections":["golang"],
 "infoboxes":[{"infobox":"Go","content":"A language.","urls":[{"title":"Website","url":"https://go.dev"}],"attributes":[{"label":"Designed by","value":"Griesemer, Pike, Thompson"}]}],
 "suggestions":["go tutorial"],"unresponsive_engines":[["bing","timeout"]]}`

type fakeRead struct {
	err    error
	waited string
}

func (f fakeRead) Read(_ context.Context, req reader.Request) (*reader.Result, error) {
	if f.err != nil {
		return nil, f.err
	}
	return &reader.Result{URL: req.URL, Content: "page text", ContentType: "text/plain", TotalChars: 9, Waited: f.waited}, nil
}

func serve(t *testing.T, cfg Config) (*Server, *httptest.Server) {
	t.Helper()
	s := New(cfg)
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	return s, hs
}

func connect(t *testing.T, hs *httptest.Server, hc *http.Client) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	sess, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: hc,
		DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sess.Close() })
	return sess
}

func call(t *testing.T, s *sdk.ClientSession, name string, args map[string]any) (*sdk.CallToolResult, string) {
	t.Helper()
	res, err := s.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	return res, textOf(res)
}

type spoof struct{}

func (spoof) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(clientHeader, "someone-else")
	return http.DefaultTransport.RoundTrip(r)
}

func TestSearchTool(t *testing.T) {
	fs := &fakeSearch{json: answerJSON}
	_, hs := serve(t, Config{Search: fs, Read: fakeRead{}, Client: func(*http.Request) string { return "203.0.113.9/32" }})
	s := connect(t, hs, &http.Client{Transport: spoof{}})
	res, text := call(t, s, ToolSearch, map[string]any{"query": " go ", "pageno": 2, "time_range": "month",
		"language": "all", "safesearch": 2, "categories": "IT,general", "engines": "duckduckgo", "fanout": 3})
	if res.IsError {
		t.Fatal(text)
	}
	for _, want := range []string{
		`Search results for "go" (page 2), answered by https://searx.example/ (from searxgate's cache).`,
		"Answer: Go was designed at Google", "Did you mean: golang", "Infobox: Go", "- Designed by: Griesemer, Pike, Thompson",
		"1. The Go Programming Language\n   https://go.dev/\n   Published: 2024-01-02\n   Go is an open source programming language.",
		"2. Go (programming language)\n   https://en.wikipedia.org/wiki/Go", "Related searches: go tutorial",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	var out SearchOutput
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &out); err != nil || len(out.Results) != 2 || out.UnresponsiveEngines[0] != "bing: timeout" {
		t.Errorf("%v %s", err, raw)
	}
	r := fs.reqs[0]
	if r.Query != "go" || r.PageNo != 2 || r.TimeRange != "month" || r.Language != "" || r.SafeSearch != "2" ||
		strings.Join(r.Categories, ",") != "general,it" || r.Client != "203.0.113.9/32" || r.Fanout != 3 {
		t.Errorf("request %+v", r)
	}
}

func TestSearchErrors(t *testing.T) {
	fs := &fakeSearch{}
	srv, hs := serve(t, Config{Search: fs})
	s := connect(t, hs, nil)
	for _, tc := range []struct {
		err  error
		args map[string]any
		says string
	}{
		{&proxy.NoAnswerError{Why: "no_instance", RetryAfter: 11500 * time.Millisecond}, nil, "every instance is cooling down or unavailable; retry in 12 s"},
		{&proxy.NoAnswerError{Why: "deadline"}, nil, "no instance answered in time; retry in a few seconds"},
		{&proxy.NoAnswerError{Why: "no_slot", RetryAfter: 20 * time.Second}, nil, "before its deadline (budgets, cooldowns or searches in flight); retry in 20 s"},
		{&proxy.LimitedError{RetryAfter: 3 * time.Second}, nil, "too many searches from this client; retry in 3 s"},
		{nil, map[string]any{"query": "x", "time_range": "century"}, "time_range"},
		{nil, map[string]any{"query": "x", "safesearch": 7}, "safesearch"},
		{nil, map[string]any{}, "query"},
	} {
		fs.err = tc.err
		args := tc.args
		if args == nil {
			args = map[string]any{"query": "q"}
		}
		res, text := call(t, s, ToolSearch, args)
		if !res.IsError || !strings.Contains(text, tc.says) {
			t.Errorf("%v %v: %v %q", tc.err, tc.args, res.IsError, text)
		}
	}
	got := map[string]int64{}
	for _, c := range srv.Counts() {
		got[c.Tool+"/"+c.Outcome] = c.N
	}
	// Arguments the schema refuses never reach the handler: not counted.
	if got["searxng_web_search/failed"] != 3 || got["searxng_web_search/limited"] != 1 || len(got) != 4 {
		t.Errorf("counts %v", got)
	}
}

// TestStopWords: every reason the proxy gives for having no answer
// (proxy.Stops) has its words for agents in mcp's one table, and those
// say what happened, not the proxy's code word.
func TestStopWords(t *testing.T) {
	for _, why := range proxy.Stops {
		if got, ok := stopWords[why]; !ok || got == string(why) || !strings.Contains(got, " ") {
			t.Errorf("%s reads %q", why, got)
		}
		err := searchError(&proxy.NoAnswerError{Why: why})
		if retry := strings.Contains(err.Error(), "retry"); retry != why.Retryable() {
			t.Errorf("%s: %q; a retry is offered only when it can help", why, err)
		}
	}
	if len(stopWords) != len(proxy.Stops) {
		t.Errorf("mcp words %d reasons, the proxy has %d", len(stopWords), len(proxy.Stops))
	}
}

// TestReadToolErrors: each refusal of the reader is a tool error in its
// own words, with when to retry, counted as limited.
func TestReadToolErrors(t *testing.T) {
	for _, tc := range []struct {
		err  error
		says string
	}{
		{&reader.BusyError{Host: "a.example", RetryAfter: 4 * time.Second}, "a.example is being read politely (a few pages at a time); its next turn is later than this read can wait; retry in 4 s"},
		{&reader.QueueError{Reason: "the PDFs this client is having read already hold 4.9 MiB of the 8.0 MiB searxgate holds for one client's PDFs", RetryAfter: 5 * time.Second},
			"reader queue full: the PDFs this client is having read already hold 4.9 MiB of the 8.0 MiB searxgate holds for one client's PDFs; retry in 5 s"},
		{&reader.LimitedError{RetryAfter: 6 * time.Second}, "too many reads from this client; retry in 6 s"},
	} {
		srv, hs := serve(t, Config{Search: &fakeSearch{}, Read: fakeRead{err: tc.err}})
		s := connect(t, hs, nil)
		res, text := call(t, s, ToolRead, map[string]any{"url": "https://a.example/"})
		if !res.IsError || !strings.Contains(text, tc.says) {
			t.Errorf("%v %q, want it to say %q", res.IsError, text, tc.says)
		}
		for _, c := range srv.Counts() {
			want := int64(0)
			if c.Tool == ToolRead && c.Outcome == OutcomeLimited {
				want = 1
			}
			if c.N != want {
				t.Errorf("%T counted %v, want one limited read", tc.err, c)
			}
		}
	}
}

// TestReadToolWaited: a read that waited for its host's turn says so, in
// its text and its structured answer.
func TestReadToolWaited(t *testing.T) {
	_, hs := serve(t, Config{Search: &fakeSearch{}, Read: fakeRead{waited: "2.0 s for a.example's turn"}})
	s := connect(t, hs, nil)
	res, text := call(t, s, ToolRead, map[string]any{"url": "https://a.example/"})
	if res.IsError || !strings.Contains(text, "URL: https://a.example/\nWaited: 2.0 s for a.example's turn\n\npage text") {
		t.Errorf("%v %q", res.IsError, text)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(raw), `"waited":"2.0 s for a.example's turn"`) {
		t.Errorf("structured %s", raw)
	}
	_, hs = serve(t, Config{Search: &fakeSearch{}, Read: fakeRead{}})
	if _, text := call(t, connect(t, hs, nil), ToolRead, map[string]any{"url": "https://a.example/"}); strings.Contains(text, "Waited") {
		t.Errorf("a read that did not wait says it did: %q", text)
	}
}

func post(t *testing.T, url string, header map[string]string) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestAccess(t *testing.T) {
	_, off := serve(t, Config{Search: &fakeSearch{}, Exposed: true})
	if st, body := post(t, off.URL, nil); st != 403 || !strings.Contains(body, "--mcp-token (SEARXGATE_MCP_TOKEN)") {
		t.Errorf("exposed without a token: %d %s", st, body)
	}
	_, on := serve(t, Config{Search: &fakeSearch{}, Exposed: true, Token: "t0k", Origins: []string{"https://search.example.org"}})
	for _, tc := range []struct {
		h    map[string]string
		want int
	}{
		{map[string]string{"Authorization": "Bearer t0k"}, 200},
		{map[string]string{"Authorization": "bearer t0k"}, 200},
		{map[string]string{"Authorization": "Basic t0k"}, 401},
		{map[string]string{}, 401},
		{map[string]string{"Authorization": "Bearer t0k", "Origin": "https://search.example.org"}, 200},
		{map[string]string{"Authorization": "Bearer t0k", "Origin": "https://evil.example"}, 403},
		{map[string]string{"Authorization": "Bearer t0k", "Origin": "http://[::1]:3000"}, 200},
	} {
		if st, body := post(t, on.URL, tc.h); st != tc.want {
			t.Errorf("%v: %d %s", tc.h, st, body)
		}
	}
}

// TestForwardedIsRemote: a request that says a proxy forwarded it is taken
// as remote, whatever the socket (any X-Forwarded-* header, Forwarded or
// X-Real-IP): without a token, 403 naming the flags.
func TestForwardedIsRemote(t *testing.T) {
	_, local := serve(t, Config{Search: &fakeSearch{}})
	if st, body := post(t, local.URL, nil); st != 200 {
		t.Fatalf("a local request: %d %s", st, body)
	}
	for _, h := range []string{"X-Forwarded-For", "Forwarded", "X-Real-IP", "X-Forwarded-Host", "X-Forwarded-Proto", "x-forwarded-port"} {
		st, body := post(t, local.URL, map[string]string{h: "203.0.113.5"})
		if st != 403 || !strings.Contains(body, "--mcp-token") || !strings.Contains(body, "--trust-proxy") {
			t.Errorf("%s from an undeclared proxy: %d %s", h, st, body)
		}
	}
	_, tok := serve(t, Config{Search: &fakeSearch{}, Token: "t0k"})
	if st, body := post(t, tok.URL, map[string]string{"X-Forwarded-For": "203.0.113.5", "Authorization": "Bearer t0k"}); st != 200 {
		t.Errorf("forwarded with the token: %d %s", st, body)
	}
}

// TestBatches: revision 2025-06-18 has no JSON-RPC batches: refused with
// the spec's error; an older revision's batch is capped at MaxBatch.
func TestBatches(t *testing.T) {
	_, hs := serve(t, Config{Search: &fakeSearch{}})
	batch := func(n int, rev string) (int, string) {
		msgs := make([]string, n)
		for i := range msgs {
			msgs[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i+1)
		}
		req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader("["+strings.Join(msgs, ",")+"]"))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", rev)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if st, body := batch(2, "2025-06-18"); st != 400 || !strings.Contains(body, `"code":-32600`) {
		t.Errorf("a batch under 2025-06-18: %d %s", st, body)
	}
	if st, body := batch(500, "2025-03-26"); st != 400 || !strings.Contains(body, "at most 8") || len(body) > 1000 {
		t.Errorf("500 in one batch under 2025-03-26: %d, %d bytes: %.200s", st, len(body), body)
	}
	if st, body := batch(MaxBatch, "2025-03-26"); st == 400 {
		t.Errorf("a batch of %d under 2025-03-26 was refused: %s", MaxBatch, body)
	}
}
