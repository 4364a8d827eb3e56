package web

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

func TestToolCallsShown(t *testing.T) {
	calls := []ToolCalls{{"searxng_web_search", "ok", 3}, {"searxng_web_search", "limited", 1}, {"web_url_read", "invalid", 2}}
	mcpHits := 0
	_, c := serve(t, Config{Search: &fakeSearch{answer: jsonAnswer(simpleAnswer, "https://a.example/")},
		ToolCalls: func() []ToolCalls { return calls },
		MCP:       func(ctx *fasthttp.RequestCtx) { mcpHits++; ctx.SetBodyString("mcp") }})
	fams := parseProm(t, c.get("/metrics").body)
	f := fams["searxgate_mcp_tool_calls_total"]
	if f == nil || f.typ != "counter" || len(f.samples) != 3 {
		t.Fatalf("family %+v", f)
	}
	if s := f.samples[0]; s.labels["tool"] != "searxng_web_search" || s.labels["outcome"] != "ok" || s.value != 3 {
		t.Errorf("sample %+v", s)
	}
	var report StatusReport
	if err := json.Unmarshal([]byte(c.get("/status.json").body), &report); err != nil {
		t.Fatal(err)
	}
	if report.Totals.ToolCalls != 6 || report.Totals.ToolCallsByTool["web_url_read"]["invalid"] != 2 {
		t.Errorf("totals %+v", report.Totals)
	}
	if page := c.get("/status").body; !strings.Contains(page, "Agent tool calls") {
		t.Error("/status does not show the tool calls")
	}
	if r := c.do("POST", "/mcp", "{}"); r.body != "mcp" || mcpHits != 1 {
		t.Errorf("/mcp: %d %q", r.status, r.body)
	}
}

func TestNoMCPFace(t *testing.T) {
	_, c := serve(t, Config{Search: &fakeSearch{answer: jsonAnswer(simpleAnswer, "https://a.example/")}})
	if r := c.do("POST", "/mcp", "{}"); r.status != 404 {
		t.Errorf("/mcp without an MCP face: %d", r.status)
	}
	if body := c.get("/metrics").body; strings.Contains(body, "mcp_tool_calls") {
		t.Error("tool calls in /metrics without an MCP face")
	}
}
