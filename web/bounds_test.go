package web

import (
	"fmt"
	"strings"
	"testing"

	"github.com/searxgate/searxgate/results"
)

// TestOversizedAnswerRendersBounded: an answer kept unbounded (by an
// older searxgate, in its store or a shared cache) of 20,000 results,
// about 4 MB, is served in every format with at most results.MaxResults
// results, in bounded bytes.
func TestOversizedAnswerRendersBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"query":"hello world","number_of_results":0,"results":[`)
	for i := range 20_000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"url":"https://example.org/%d","title":"hello world %d","content":"%s","engine":"e","engines":["e"],"positions":[1],"score":1}`,
			i, i, strings.Repeat("hello <world> ", 10))
	}
	b.WriteString(`],"answers":[],"corrections":[],"infoboxes":[],"suggestions":[],"unresponsive_engines":[]}`)
	if b.Len() < 4<<20 {
		t.Fatalf("the answer is %d bytes, want ≥ 4 MiB", b.Len())
	}
	fs := &fakeSearch{answer: jsonAnswer(b.String(), "https://up.example/")}
	_, c := serve(t, Config{Search: fs})
	for _, format := range []string{"json", "html", "csv", "rss"} {
		r := c.get("/search?q=hello+world&format=" + format)
		if r.status != 200 {
			t.Fatalf("%s: status %d", format, r.status)
		}
		// A result's markup in the HTML page is about 1.5 KB.
		if limit := results.MaxAnswerBytes + results.MaxResults*2048; len(r.body) > limit {
			t.Errorf("%s: %d bytes written, want ≤ %d", format, len(r.body), limit)
		}
		if n := strings.Count(r.body, "https://example.org/"); n < results.MaxResults || n > 3*results.MaxResults {
			t.Errorf("%s: %d links to results, want %d results", format, n, results.MaxResults)
		}
	}
}
