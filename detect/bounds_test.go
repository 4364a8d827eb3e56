package detect

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/searxgate/searxgate/results"
)

// floodJSON is an answer no SearXNG sends: n results, each with a
// content of fill, and far too many suggestions, answers and infoboxes.
func floodJSON(n int, fill string) []byte {
	var b strings.Builder
	b.WriteString(`{"query": "hello world", "results": [`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"url": "https://example.org/%d", "title": "hello world %d", "content": "%s", "engines": ["e"], "positions": [%d], "score": 1}`,
			i, i, fill, i+1)
	}
	b.WriteString(`], "suggestions": [`)
	for i := range 5000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"hello %d"`, i)
	}
	b.WriteString(`], "answers": [`)
	for i := range 5000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"answer %d"`, i)
	}
	b.WriteString(`], "infoboxes": [`)
	for i := range 1000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"infobox": "box %d", "id": "https://example.org/box/%d", "content": "%s"}`, i, i, fill)
	}
	b.WriteString(`], "unresponsive_engines": []}`)
	return []byte(b.String())
}

// TestBoundsHostileAnswer: 20,000 results (about 4 MB) keep MaxResults,
// the rest counted, and the answer written back stays near MaxAnswerBytes
// whatever its texts are made of (escapes counted).
func TestBoundsHostileAnswer(t *testing.T) {
	for _, c := range []struct {
		n      int
		fill   string
		budget bool // MaxAnswerBytes, not MaxResults, is what cuts
	}{
		{20_000, strings.Repeat("lorem ipsum ", 15), false},
		{2_000, strings.Repeat("<&>", 700), true},
	} {
		body := floodJSON(c.n, c.fill)
		if len(body) < 4<<20 {
			t.Fatalf("the hostile answer is %d bytes, want ≥ 4 MiB", len(body))
		}
		r, err := ParseJSON(body)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Results) > results.MaxResults || len(r.Results) == 0 || (len(r.Results) < results.MaxResults) != c.budget {
			t.Fatalf("%d results kept, want 1..%d (cut by the byte budget: %v)", len(r.Results), results.MaxResults, c.budget)
		}
		if got := len(r.Results) + r.Dropped; got != c.n {
			t.Fatalf("kept %d + dropped %d = %d, want %d", len(r.Results), r.Dropped, got, c.n)
		}
		if len(r.Suggestions) > results.MaxListItems || len(r.Answers) > results.MaxListItems || len(r.Infoboxes) > results.MaxInfoboxes {
			t.Fatalf("lists kept: %d suggestions, %d answers, %d infoboxes", len(r.Suggestions), len(r.Answers), len(r.Infoboxes))
		}
		js := r.AppendJSON(nil)
		if limit := results.MaxAnswerBytes + results.MaxResults*512; len(js) > limit {
			t.Fatalf("written JSON is %d bytes, want ≤ %d", len(js), limit)
		}
		// What is cached reads back the same: a cache hit renders no more.
		again, err := ParseJSON(js)
		if err != nil || len(again.Results) != len(r.Results) || again.Dropped != 0 {
			t.Fatalf("re-read: %v, %d results, %d dropped", err, len(again.Results), again.Dropped)
		}
	}
}

// TestBoundsFields: a long text is cut on a rune boundary, a long link
// drops its result or is blanked, unknown fields stay within
// MaxExtraTotal, and a result's lists within MaxListItems.
func TestBoundsFields(t *testing.T) {
	long := strings.Repeat("é", results.MaxFieldBytes) // 2 bytes a rune: a cut in the middle is possible
	longURL := "https://example.org/" + strings.Repeat("a", results.MaxURLBytes)
	var extras, engines strings.Builder
	for i := range MaxExtraKeys {
		fmt.Fprintf(&extras, `, "k%02d": "%s"`, i, strings.Repeat("x", MaxExtraBytes-16))
	}
	for i := range 3 * results.MaxListItems {
		if i > 0 {
			engines.WriteByte(',')
		}
		fmt.Fprintf(&engines, `"e%d"`, i)
	}
	body := `{"query": "é", "results": [` +
		`{"url": "https://example.org/1", "title": "x` + long + `", "content": "` + long + long + `", "thumbnail": "` + longURL + `", "engines": [` + engines.String() + `]` + extras.String() + `},` +
		`{"url": "` + longURL + `", "title": "é"}` +
		`], "suggestions": ["` + long + `"]}`
	r, err := ParseJSON([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Results) != 1 || r.Dropped != 1 {
		t.Fatalf("%d results, %d dropped; want the long URL's dropped", len(r.Results), r.Dropped)
	}
	x := r.Results[0]
	for name, s := range map[string]string{"title": x.Title, "content": x.Content, "suggestion": r.Suggestions[0]} {
		if len(s) > results.MaxFieldBytes || len(s) < results.MaxFieldBytes-4 || !utf8.ValidString(s) {
			t.Errorf("%s: %d bytes, valid UTF-8 %v; want about %d, cut on a rune", name, len(s), utf8.ValidString(s), results.MaxFieldBytes)
		}
	}
	if x.Thumbnail != "" {
		t.Errorf("a thumbnail of %d bytes kept", len(x.Thumbnail))
	}
	if len(x.Engines) != results.MaxListItems {
		t.Errorf("%d engines kept, want %d", len(x.Engines), results.MaxListItems)
	}
	if n := results.ExtraSize(x.Extra); n > MaxExtraTotal || len(x.Extra) == 0 {
		t.Errorf("extra fields: %d of them, %d bytes; want some, ≤ %d", len(x.Extra), n, MaxExtraTotal)
	}
}

// TestBoundsHTML: a results page with thousands of results keeps
// MaxResults.
func TestBoundsHTML(t *testing.T) {
	r, err := ParseHTML(grownHTML(t, 2000))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Results) != results.MaxResults || r.Dropped != 2000-results.MaxResults {
		t.Fatalf("%d results kept, %d dropped", len(r.Results), r.Dropped)
	}
	if p := r.Results[results.MaxResults-1].Positions; len(p) != 1 || p[0] != results.MaxResults {
		t.Fatalf("last rank %v, want [%d]", p, results.MaxResults)
	}
}
