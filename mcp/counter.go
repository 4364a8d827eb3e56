package mcp

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Outcomes of a tool call, as Counts reports them.
const (
	OutcomeOK      = "ok"      // answered
	OutcomeInvalid = "invalid" // the arguments (or the page asked for) cannot be served
	OutcomeLimited = "limited" // refused for now: the client's limit or a host's politeness
	OutcomeFailed  = "failed"  // no instance answered, or the page could not be fetched
)

// Count is how many tool calls of one tool ended with one outcome.
type Count struct {
	Tool, Outcome string
	N             int64
}

// counter counts tool calls by tool and outcome; monotone.
type counter struct {
	mu sync.Mutex // guards n
	n  map[[2]string]int64
}

func newCounter() *counter { return &counter{n: map[[2]string]int64{}} }

func (c *counter) add(tool, outcome string) {
	c.mu.Lock()
	c.n[[2]string{tool, outcome}]++
	c.mu.Unlock()
}

// Counts returns the tool calls served so far by tool and outcome, every
// pair of a tool offered and an outcome present (zeros included), sorted.
func (s *Server) Counts() []Count {
	tools := []string{ToolSearch}
	if s.cfg.Suggest != nil {
		tools = append(tools, ToolSuggestions)
	}
	if s.cfg.Pool != nil {
		tools = append(tools, ToolInfo)
	}
	if s.cfg.Read != nil {
		tools = append(tools, ToolRead)
	}
	s.counts.mu.Lock()
	defer s.counts.mu.Unlock()
	var out []Count
	for _, t := range tools {
		for _, o := range []string{OutcomeOK, OutcomeInvalid, OutcomeLimited, OutcomeFailed} {
			out = append(out, Count{Tool: t, Outcome: o, N: s.counts.n[[2]string{t, o}]})
		}
	}
	slices.SortFunc(out, func(a, b Count) int { return cmp.Or(cmp.Compare(a.Tool, b.Tool), cmp.Compare(a.Outcome, b.Outcome)) })
	return out
}

// counted wraps the handlers so that every call is counted and every
// error reaches the agent as a tool error with an outcome.
func (s *Server) counted(h handlers) handlers {
	out := handlers{search: countedFor(s, ToolSearch, h.search)}
	if h.suggest != nil {
		out.suggest = countedFor(s, ToolSuggestions, h.suggest)
	}
	if h.info != nil {
		out.info = countedFor(s, ToolInfo, h.info)
	}
	if h.read != nil {
		out.read = countedFor(s, ToolRead, h.read)
	}
	return out
}

func countedFor[In, Out any](s *Server, tool string, h sdk.ToolHandlerFor[In, Out]) sdk.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, req *sdk.CallToolRequest, in In) (*sdk.CallToolResult, Out, error) {
		ctx, done := s.withCaller(ctx, req)
		defer done()
		res, out, err := h(ctx, req, in)
		outcome := OutcomeOK
		if err != nil {
			outcome = OutcomeFailed
			var te *toolError
			if errors.As(err, &te) {
				outcome = te.outcome
			}
		}
		s.counts.add(tool, outcome)
		return res, out, err
	}
}
