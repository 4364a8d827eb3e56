package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/searxgate/searxgate/mcp"
	"github.com/searxgate/searxgate/sim"
)

// connectMCP connects the Go SDK's own client to a gateway's /mcp over
// Streamable HTTP.
func connectMCP(t *testing.T, g *gateway, hc *http.Client) *sdk.ClientSession {
	t.Helper()
	return mcpSession(t, "http://"+g.addr+"/mcp", hc)
}

// mcpSession connects an MCP client to endpoint through hc (nil: the
// default client), closed when the test ends.
func mcpSession(t *testing.T, endpoint string, hc *http.Client) *sdk.ClientSession {
	t.Helper()
	if hc == nil {
		hc = http.DefaultClient
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	s, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc,
		DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func callTool(t *testing.T, s *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func resultText(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// pageSite serves, on 127.0.0.1, the pages web_url_read is tried on.
func pageSite(t *testing.T) *httptest.Server {
	t.Helper()
	article, err := os.ReadFile("../../reader/testdata/article.html")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/article", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(article)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte(strings.Repeat("z", 6<<20)))
	})
	mux.HandleFunc("/file.zip", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/zip")
		_, _ = w.Write([]byte("PK"))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestMCPSearchAndRead(t *testing.T) {
	_, dir := startFleet(t, 31, []sim.InstanceConfig{{ID: "mcp-good", Behaviour: sim.Fast, Latency: -1, JSON: true}})
	g := startGateway(t, dir, "", "--contact", "ops@example.org", "--reader-allow-private")
	s := connectMCP(t, g, nil)

	if init := s.InitializeResult(); init.ServerInfo.Name != "searxgate" || init.Capabilities.Tools == nil {
		t.Errorf("initialize: %+v", init)
	}
	if err := s.Ping(context.Background(), nil); err != nil {
		t.Errorf("ping: %v", err)
	}
	tools, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if tl.OutputSchema == nil {
			t.Errorf("%s has no output schema", tl.Name)
		}
	}
	if strings.Join(names, ",") != "searxng_instance_info,searxng_search_suggestions,searxng_web_search,web_url_read" {
		t.Errorf("tools %v", names)
	}

	res := callTool(t, s, mcp.ToolSearch, map[string]any{"query": "tidal locking", "safesearch": 1, "language": "en"})
	text := resultText(res)
	if res.IsError || !strings.Contains(text, "1. ") || !strings.Contains(text, "mcp-good") || !strings.Contains(text, "answered by") {
		t.Fatalf("search: error %v\n%s", res.IsError, text)
	}
	var out mcp.SearchOutput
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &out); err != nil || len(out.Results) == 0 || out.Query != "tidal locking" || out.Instance == "" {
		t.Fatalf("structured: %v %s", err, raw)
	}

	bad := callTool(t, s, mcp.ToolSearch, map[string]any{"query": "x", "language": "not a language"})
	if !bad.IsError || !strings.Contains(resultText(bad), "language") {
		t.Errorf("bad language: %v %s", bad.IsError, resultText(bad))
	}

	site := pageSite(t)
	page := callTool(t, s, mcp.ToolRead, map[string]any{"url": site.URL + "/article"})
	text = resultText(page)
	if page.IsError || !strings.Contains(text, "Tidal locking happens") || !strings.Contains(text, "Pluto and Charon") {
		t.Fatalf("read: %v\n%s", page.IsError, text)
	}
	for _, junk := range []string{"SCRIPT-SECRET", "NAV-NEWS", "COOKIE-BANNER", "FOOTER-COPYRIGHT", "ASIDE-RELATED"} {
		if strings.Contains(text, junk) {
			t.Errorf("read keeps %q", junk)
		}
	}
	part := callTool(t, s, mcp.ToolRead, map[string]any{"url": site.URL + "/article", "maxLength": 40})
	if !strings.Contains(resultText(part), "startChar=40") {
		t.Errorf("a cut page does not say how to read on:\n%s", resultText(part))
	}

	// Every error path of the reader reaches the agent as a tool error.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := ln.Addr().String()
	ln.Close()
	for _, tc := range []struct{ url, says string }{
		{"ftp://example.org/x", "only http:// and https://"},
		{site.URL + "/big", "more than"},
		{site.URL + "/file.zip", "application/zip"},
		{"http://" + closed + "/", "refused"},
	} {
		r := callTool(t, s, mcp.ToolRead, map[string]any{"url": tc.url})
		if !r.IsError || !strings.Contains(resultText(r), tc.says) {
			t.Errorf("%s: error %v: %s", tc.url, r.IsError, resultText(r))
		}
	}

	// The calls are counted by tool and outcome.
	got := map[string]int64{}
	for _, c := range g.app.mcp.Counts() {
		got[c.Tool+"/"+c.Outcome] = c.N
	}
	if got["searxng_web_search/ok"] != 1 || got["searxng_web_search/invalid"] != 1 || got["web_url_read/ok"] != 2 ||
		got["web_url_read/invalid"] != 3 || got["web_url_read/failed"] != 1 {
		t.Errorf("counts %v", got)
	}
	if m := g.get(t, "/metrics", nil); !strings.Contains(string(m.body), `searxgate_mcp_tool_calls_total{tool="web_url_read",outcome="invalid"} 3`) {
		t.Errorf("/metrics lacks the tool calls:\n%s", m.body)
	}
}

// TestMCPSearxngArguments: a call written for mcp-searxng, with every
// argument it takes and the types it gives them, is answered by the real
// gateway as asked; suggestions come from an instance's autocompleter and
// instance info from the instances' /config.
func TestMCPSearxngArguments(t *testing.T) {
	fleet, _ := startFleet(t, 34, []sim.InstanceConfig{{ID: "home", Behaviour: sim.Fast, Latency: -1, JSON: true,
		Results: 12, Autocomplete: "duckduckgo"}})
	// An own instance: its /config is read before searxgate serves.
	g := startGateway(t, "none", "", "--instance", fleet.Instance("home").URL())
	s := connectMCP(t, g, nil)

	res := callTool(t, s, mcp.ToolSearch, map[string]any{"query": "tidal locking", "pageno": 1, "time_range": "month",
		"language": "en", "safesearch": "1", "categories": "general", "min_score": 0, "num_results": 3,
		"response_format": "json", "result_detail": "compact"})
	text := resultText(res)
	if res.IsError {
		t.Fatal(text)
	}
	var out mcp.SearchOutput
	if err := json.Unmarshal([]byte(text), &out); err != nil || len(out.Results) != 3 {
		t.Fatalf("json text with 3 results: %v\n%s", err, text)
	}
	for _, r := range out.Results {
		if r.URL == "" || r.Title == "" || r.Engine != "" || r.Score != 0 {
			t.Errorf("compact result %+v", r)
		}
	}
	full := callTool(t, s, mcp.ToolSearch, map[string]any{"query": "tidal locking", "safesearch": 2, "num_results": 2})
	if ft := resultText(full); full.IsError || !strings.Contains(ft, "\n2. ") || strings.Contains(ft, "\n3. ") {
		t.Errorf("num_results 2: %v\n%s", full.IsError, ft)
	}

	sug := callTool(t, s, mcp.ToolSuggestions, map[string]any{"query": "tidal", "language": "en"})
	if st := resultText(sug); sug.IsError || !strings.Contains(st, "- tidal tutorial") {
		t.Errorf("suggestions: %v %s", sug.IsError, st)
	}

	info := callTool(t, s, mcp.ToolInfo, map[string]any{"includeEngines": true})
	var inf mcp.InfoOutput
	if err := json.Unmarshal([]byte(resultText(info)), &inf); err != nil || info.IsError {
		t.Fatalf("info: %v %s", err, resultText(info))
	}
	if strings.Join(inf.Categories.Common, ",") != "general" || inf.Engines == nil || len(inf.Engines.Common.Enabled) == 0 ||
		inf.Pool.Instances != 1 || inf.Pool.Own != 1 || inf.Pool.WithConfig != 1 || inf.Pool.Autocomplete != 1 {
		t.Errorf("info %+v", inf)
	}
}

func TestMCPReadRefusesPrivate(t *testing.T) {
	_, dir := startFleet(t, 32, []sim.InstanceConfig{{Behaviour: sim.Fast, Latency: -1, JSON: true}})
	// --allow-private lets instances be private, nothing more: without
	// --reader-allow-private, the reader refuses loopback and private
	// addresses, and redirects to them.
	g := startGatewayWith(t, &failResolver{}, dir, "", "--allow-private")
	s := connectMCP(t, g, nil)
	site := pageSite(t)
	for _, u := range []string{site.URL + "/article", "http://10.0.0.1/", "http://localhost:1/"} {
		r := callTool(t, s, mcp.ToolRead, map[string]any{"url": u})
		if !r.IsError || !strings.Contains(resultText(r), "--reader-allow-private") {
			t.Errorf("%s: error %v: %s", u, r.IsError, resultText(r))
		}
	}
}

func TestMCPNoAnswerSaysWhen(t *testing.T) {
	_, dir := startFleet(t, 33, []sim.InstanceConfig{{Behaviour: sim.DDoSGuard}, {Behaviour: sim.AnubisChallenge}})
	g := startGateway(t, dir, "")
	s := connectMCP(t, g, nil)
	r := callTool(t, s, mcp.ToolSearch, map[string]any{"query": "anything at all"})
	if !r.IsError || !strings.Contains(resultText(r), "retry in") {
		t.Errorf("error %v: %s", r.IsError, resultText(r))
	}
}

// TestFirstFailureSaysWhen: the first search an instance refuses with
// Retry-After 20, when it is the only one, is told the real time to come
// back, over MCP and over /search, not "a few seconds".
func TestFirstFailureSaysWhen(t *testing.T) {
	refusing := []sim.InstanceConfig{{Behaviour: sim.RateLimitSeconds, Latency: -1, JSON: true, RateBurst: 1,
		RetryAfter: 20 * time.Second}}
	_, dir := startFleet(t, 35, refusing)
	g := startGateway(t, dir, "")
	s := connectMCP(t, g, nil)
	if r := callTool(t, s, mcp.ToolSearch, map[string]any{"query": "first words"}); r.IsError {
		t.Fatalf("the search within the burst: %s", resultText(r))
	}
	r := callTool(t, s, mcp.ToolSearch, map[string]any{"query": "second words"})
	text := resultText(r)
	secs := 0
	if i := strings.Index(text, "retry in "); i >= 0 {
		_, _ = fmt.Sscanf(text[i:], "retry in %d s", &secs)
	}
	if !r.IsError || secs < 20 || secs > 22 {
		t.Errorf("refused search: error %v, %q; want a retry in 20 to 22 s (the Retry-After and the margin searxgate adds)", r.IsError, text)
	}

	_, dir2 := startFleet(t, 36, refusing)
	g2 := startGateway(t, dir2, "")
	if a := g2.get(t, "/search?q=first+words&format=json", nil); a.status != 200 {
		t.Fatalf("the search within the burst: %d", a.status)
	}
	a := g2.get(t, "/search?q=second+words&format=json", nil)
	ra, _ := strconv.Atoi(a.header.Get("Retry-After"))
	if a.status != 503 || ra < 20 || ra > 22 {
		t.Errorf("refused search: %d, Retry-After %q; want 503 with 20 to 22", a.status, a.header.Get("Retry-After"))
	}
}

func TestMCPClientRate(t *testing.T) {
	_, dir := startFleet(t, 34, []sim.InstanceConfig{{Behaviour: sim.Fast, Latency: -1, JSON: true}})
	g := startGateway(t, dir, "", "--client-rate", "1", "--client-burst", "1")
	s := connectMCP(t, g, nil)
	if r := callTool(t, s, mcp.ToolSearch, map[string]any{"query": "first search"}); r.IsError {
		t.Fatal(resultText(r))
	}
	r := callTool(t, s, mcp.ToolSearch, map[string]any{"query": "second search"})
	if !r.IsError || !strings.Contains(resultText(r), "too many searches from this client; retry in") {
		t.Errorf("error %v: %s", r.IsError, resultText(r))
	}
	// The cached answer costs nothing and is served.
	if r := callTool(t, s, mcp.ToolSearch, map[string]any{"query": "first search"}); r.IsError {
		t.Errorf("cached search refused: %s", resultText(r))
	}
}

// TestMCPClientBehindTrustedProxy: behind a trusted reverse proxy, an MCP
// client is the address the proxy names in X-Forwarded-For, as on /search:
// two agents behind one proxy are two clients, and one agent's sessions
// are one.
func TestMCPClientBehindTrustedProxy(t *testing.T) {
	_, dir := startFleet(t, 36, []sim.InstanceConfig{{Behaviour: sim.Fast, Latency: -1, JSON: true}})
	g := startGateway(t, dir, "", "--trust-proxy", "127.0.0.1", "--mcp-token", "s3cret",
		"--client-rate", "1", "--client-burst", "1")
	behind := func(addr string) *sdk.ClientSession {
		return connectMCP(t, g, &http.Client{Transport: headerTransport{
			"Authorization": "Bearer s3cret", "X-Forwarded-For": addr}})
	}
	a := behind("203.0.113.1")
	if r := callTool(t, a, mcp.ToolSearch, map[string]any{"query": "first search"}); r.IsError {
		t.Fatal(resultText(r))
	}
	if r := callTool(t, behind("203.0.113.1"), mcp.ToolSearch, map[string]any{"query": "second search"}); !r.IsError ||
		!strings.Contains(resultText(r), "too many searches from this client") {
		t.Errorf("203.0.113.1's second session was not counted with its first: %v %s", r.IsError, resultText(r))
	}
	if r := callTool(t, behind("203.0.113.2"), mcp.ToolSearch, map[string]any{"query": "third search"}); r.IsError {
		t.Errorf("another client behind the proxy was refused: %s", resultText(r))
	}
}

// tokenTransport adds headers to every request.
type headerTransport map[string]string

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func post(t *testing.T, g *gateway, header map[string]string) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	maps.Copy(h, header)
	a := g.do(t, http.MethodPost, "/mcp", strings.NewReader(body), h)
	return a.status, string(a.body)
}

func TestMCPAccess(t *testing.T) {
	_, dir := startFleet(t, 35, []sim.InstanceConfig{{Behaviour: sim.Fast, Latency: -1, JSON: true}})
	g := startGateway(t, dir, "", "--mcp-token", "s3cret")
	if st, body := post(t, g, nil); st != 401 || !strings.Contains(body, "Bearer") {
		t.Errorf("no token: %d %s", st, body)
	}
	if st, _ := post(t, g, map[string]string{"Authorization": "Bearer wrong"}); st != 401 {
		t.Errorf("wrong token: %d", st)
	}
	if st, body := post(t, g, map[string]string{"Authorization": "Bearer s3cret"}); st != 200 || !strings.Contains(body, `"protocolVersion":"2025-06-18"`) {
		t.Errorf("token: %d %s", st, body)
	}
	auth := map[string]string{"Authorization": "Bearer s3cret"}
	for origin, want := range map[string]int{"http://evil.example": 403, "null": 403, "http://localhost:6274": 200} {
		h := map[string]string{"Origin": origin, "Authorization": "Bearer s3cret"}
		if st, body := post(t, g, h); st != want {
			t.Errorf("Origin %s: %d %s", origin, st, body)
		}
	}
	// DNS rebinding: a name that is not this machine's, on a searxgate
	// reached only on loopback.
	_, port, _ := net.SplitHostPort(g.addr)
	if st, _ := post(t, g, map[string]string{"Host": "rebound.example:" + port, "Authorization": "Bearer s3cret"}); st != 403 {
		t.Errorf("foreign Host: %d", st)
	}
	s := connectMCP(t, g, &http.Client{Transport: headerTransport(auth)})
	if _, err := s.ListTools(context.Background(), nil); err != nil {
		t.Error(err)
	}
	// The SearXNG API does not need the token.
	if a := g.get(t, "/healthz", nil); a.status != 200 {
		t.Errorf("healthz %d", a.status)
	}
}

// TestMCPOffWhenExposed: a public URL elsewhere makes searxgate exposed
// even on 127.0.0.1; without a token /mcp says how to turn it on, and the
// SearXNG API is served as before.
func TestMCPOffWhenExposed(t *testing.T) {
	_, dir := startFleet(t, 37, []sim.InstanceConfig{{Behaviour: sim.Fast, Latency: -1, JSON: true}})
	g := startGateway(t, dir, "", "--public-url", "https://search.example.org/")
	if st, body := post(t, g, nil); st != 403 || !strings.Contains(body, "--mcp-token (SEARXGATE_MCP_TOKEN)") {
		t.Errorf("/mcp: %d %s", st, body)
	}
	if a := g.get(t, "/search?q=still+served&format=json", nil); a.status != 200 {
		t.Errorf("/search: %d %s", a.status, a.body)
	}
	on := startGateway(t, dir, "", "--public-url", "https://search.example.org/", "--mcp-token", "t")
	h := map[string]string{"Authorization": "Bearer t", "Origin": "https://search.example.org"}
	if st, body := post(t, on, h); st != 200 {
		t.Errorf("/mcp with the token: %d %s", st, body)
	}
}

// TestMCPExposed: the decision that turns /mcp off without a token, for
// the listen addresses the tests cannot bind (they listen on 127.0.0.1
// only; TestMCPOffWhenExposed runs the whole app through the public-URL
// case).
func TestMCPExposed(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want bool
	}{
		{Config{Listen: "127.0.0.1:8888"}, false},
		{Config{Listen: "localhost:8888"}, false},
		{Config{Listen: "[::1]:8888"}, false},
		{Config{Listen: "0.0.0.0:8888"}, true},
		{Config{Listen: ":8888"}, true},
		{Config{Listen: "192.168.1.5:8888"}, true},
		{Config{Listen: "127.0.0.1:8888", TrustProxy: []string{"127.0.0.1"}}, true},
		{Config{Listen: "127.0.0.1:8888", PublicURL: "https://search.example.org/"}, true},
		{Config{Listen: "127.0.0.1:8888", PublicURL: "http://localhost:8888/"}, true}, // any public URL: it is meant to be reached by it
	} {
		if got := mcpExposed(tc.cfg); got != tc.want {
			t.Errorf("%+v: exposed %v, want %v", tc.cfg, got, tc.want)
		}
	}
}

func TestMCPStdioBridge(t *testing.T) {
	_, dir := startFleet(t, 36, []sim.InstanceConfig{{ID: "bridged", Behaviour: sim.Fast, Latency: -1, JSON: true}})
	g := startGateway(t, dir, "", "--mcp-token", "tok")
	clientIn, bridgeOut := io.Pipe()
	bridgeIn, clientOut := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var stderr strings.Builder
	go func() {
		done <- mcpCommand(ctx, []string{"--gateway", "http://" + g.addr, "--mcp-token", "tok"}, bridgeIn, bridgeOut, &stderr,
			func(string) string { return "" })
	}()
	c := sdk.NewClient(&sdk.Implementation{Name: "desktop", Version: "1"}, nil)
	s, err := c.Connect(ctx, &sdk.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := s.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 4 {
		t.Fatalf("%v %v", tools, err)
	}
	st, err := s.ReadResource(ctx, &sdk.ReadResourceParams{URI: mcp.StatusURI})
	if err != nil || len(st.Contents) != 1 || !strings.Contains(st.Contents[0].Text, `"instances": 1`) {
		t.Errorf("the status resource through the bridge: %+v %v", st, err)
	}
	res := callTool(t, s, mcp.ToolSearch, map[string]any{"query": "bridged search"})
	if res.IsError || !strings.Contains(resultText(res), "bridged") || res.StructuredContent == nil {
		t.Fatalf("%v %s", res.IsError, resultText(res))
	}
	// A bridge without the token is told so.
	noTok := startBridge(t, g.addr, nil)
	if r := callTool(t, noTok, mcp.ToolSearch, map[string]any{"query": "x"}); !r.IsError || !strings.Contains(resultText(r), "--mcp-token") {
		t.Errorf("bridge without the token: %v %s", r.IsError, resultText(r))
	}
	bad := callTool(t, s, mcp.ToolRead, map[string]any{"url": "gopher://x"})
	if !bad.IsError || !strings.Contains(resultText(bad), "only http://") {
		t.Errorf("%v %s", bad.IsError, resultText(bad))
	}
	_ = s.Close()
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("bridge exited %d: %s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the bridge did not stop")
	}
}

// startBridge runs `searxgate mcp --gateway http://addr args...` in-process
// with its stdin and stdout on pipes, and connects a client to it.
func startBridge(t *testing.T, addr string, args []string) *sdk.ClientSession {
	t.Helper()
	clientIn, bridgeOut := io.Pipe()
	bridgeIn, clientOut := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		mcpCommand(ctx, append([]string{"--gateway", "http://" + addr}, args...), bridgeIn, bridgeOut, io.Discard,
			func(string) string { return "" })
	}()
	c := sdk.NewClient(&sdk.Implementation{Name: "desktop", Version: "1"}, nil)
	s, err := c.Connect(ctx, &sdk.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(); cancel(); <-done })
	return s
}

func TestMCPBridgeGatewayDown(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	s := startBridge(t, addr, nil)
	r := callTool(t, s, mcp.ToolSearch, map[string]any{"query": "x"})
	if !r.IsError || !strings.Contains(resultText(r), "searxgate serve") {
		t.Errorf("%v %s", r.IsError, resultText(r))
	}
}

// TestMCPForwardedNeedsToken: behind a proxy nobody declared (nginx's
// plain proxy_pass reaches searxgate from loopback), a request carrying
// X-Forwarded-For is remote: /mcp needs the token and says how to set it.
func TestMCPForwardedNeedsToken(t *testing.T) {
	_, dir := startFleet(t, 34, []sim.InstanceConfig{{Behaviour: sim.Fast, Latency: -1, JSON: true}})
	g := startGateway(t, dir, "")
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	if a := g.do(t, http.MethodPost, "/mcp", strings.NewReader(init), h); a.status != 200 {
		t.Fatalf("a local MCP request: %d %s", a.status, a.body)
	}
	h["X-Forwarded-For"] = "203.0.113.9"
	a := g.do(t, http.MethodPost, "/mcp", strings.NewReader(init), h)
	if a.status != 403 || !strings.Contains(string(a.body), "--mcp-token") || !strings.Contains(string(a.body), "--trust-proxy") {
		t.Fatalf("a forwarded MCP request without a token: %d %s", a.status, a.body)
	}
}
