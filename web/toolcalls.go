package web

// ToolCalls is how many MCP tool calls of one tool ended with one outcome
// (ok, invalid, limited, failed), as Config.ToolCalls reports them.
type ToolCalls struct {
	Tool, Outcome string
	N             int64
}

// toolCalls reads Config.ToolCalls; nil when there is no MCP face.
func (s *Server) toolCalls() []ToolCalls {
	if s.cfg.ToolCalls == nil {
		return nil
	}
	return s.cfg.ToolCalls()
}

// writeToolCalls adds searxgate_mcp_tool_calls_total to /metrics.
func (s *Server) writeToolCalls(pg *page) {
	calls := s.toolCalls()
	if calls == nil {
		return
	}
	pg.family("searxgate_mcp_tool_calls_total")
	for _, c := range calls {
		pg.count(uint64(max(c.N, 0)), "searxgate_mcp_tool_calls_total", "tool", c.Tool, "outcome", c.Outcome)
	}
}

// toolTotals are the tool calls for /status: all of them, and by tool and
// outcome.
func (s *Server) toolTotals() (int64, map[string]map[string]int64) {
	calls := s.toolCalls()
	if calls == nil {
		return 0, nil
	}
	var n int64
	by := map[string]map[string]int64{}
	for _, c := range calls {
		if by[c.Tool] == nil {
			by[c.Tool] = map[string]int64{}
		}
		by[c.Tool][c.Outcome] = c.N
		n += c.N
	}
	return n, by
}
