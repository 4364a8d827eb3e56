package mcp

import (
	"strings"
	"testing"
)

// TestArgumentErrorsInPlainWords: an argument the schema refuses is
// named with its bounds in plain words, never in the schema's terms.
func TestArgumentErrorsInPlainWords(t *testing.T) {
	_, hs := serve(t, Config{Search: &fakeSearch{}, Read: fakeRead{}})
	s := connect(t, hs, nil)
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{ToolSearch, map[string]any{"query": "x", "num_results": 1000}, `the argument "num_results" must be a whole number from 1 to 100; it was 1000`},
		{ToolSearch, map[string]any{"query": "x", "fanout": 0}, `the argument "fanout" must be a whole number from 1 to 10; it was 0`},
		{ToolSearch, map[string]any{"query": ""}, `the argument "query" must be non-empty text`},
		{ToolSearch, map[string]any{"query": "x", "time_range": "decade"}, `the argument "time_range" must be one of day, week, month, year`},
		{ToolSearch, map[string]any{"query": "x", "pageno": "two"}, `the argument "pageno" must be a whole number of at least 1`},
		{ToolSearch, map[string]any{"query": "x", "min_score": -1}, `the argument "min_score" must be a number of at least 0; it was -1`},
		{ToolSearch, map[string]any{}, `the argument "query" is required`},
		{ToolRead, map[string]any{"url": "https://a.example/", "maxLength": 0}, `the argument "maxLength" must be a whole number of at least 1; it was 0`},
	}
	for _, c := range cases {
		res, text := call(t, s, c.tool, c.args)
		if !res.IsError || !strings.HasPrefix(text, c.want) || strings.Contains(text, "validating") {
			t.Errorf("%s %v: %v %q, want an error starting %q", c.tool, c.args, res.IsError, text, c.want)
		}
	}
}
