package results

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestBoundsMerge: answers merged keep MaxResults between them.
func TestBoundsMerge(t *testing.T) {
	var answers []*Page
	for a := range 3 {
		r := &Page{Query: "q"}
		for i := range MaxResults {
			u := fmt.Sprintf("https://example.org/%d/%d", a, i)
			r.Results = append(r.Results, Result{URL: u, Title: "t", Positions: []int{i + 1}})
		}
		answers = append(answers, r)
	}
	m := Merge(answers...)
	if len(m.Results) != MaxResults || m.Dropped != 2*MaxResults {
		t.Fatalf("merged: %d results, %d dropped", len(m.Results), m.Dropped)
	}
}

func TestClip(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 3, "abc"}, {"abc", 2, "ab"}, {"aé", 2, "a"}, {"aé", 3, "aé"}, {"€", 2, ""}, {"", 0, ""},
	} {
		if got := clip(c.s, c.n); got != c.want {
			t.Errorf("clip(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}

// floodPage is a page no SearXNG sends: n results, each with a content of
// fill, and far too many answers, suggestions, infoboxes and engines down.
func floodPage(n int, fill string) *Page {
	r := &Page{Query: "hello world", Results: make([]Result, n)}
	engines, ranks := []string{"e"}, make([]int, n)
	for i := range r.Results {
		ranks[i] = i + 1
		r.Results[i] = Result{URL: "https://example.org/" + strconv.Itoa(i), Title: "hello world " + strconv.Itoa(i),
			Content: fill, Engines: engines, Positions: ranks[i : i+1 : i+1], Score: 1}
	}
	for i := range 5000 {
		r.Suggestions = append(r.Suggestions, "hello "+strconv.Itoa(i))
		r.Answers = append(r.Answers, Answer{Answer: "answer " + strconv.Itoa(i)})
	}
	for i := range 1000 {
		r.Infoboxes = append(r.Infoboxes, Infobox{Infobox: "box " + strconv.Itoa(i), ID: "https://example.org/box/" + strconv.Itoa(i), Content: fill})
		r.UnresponsiveEngines = append(r.UnresponsiveEngines, [2]string{"engine " + strconv.Itoa(i), "timeout"})
	}
	return r
}

// TestBoundHostilePage: Bound keeps MaxResults of 20,000 results (about 4
// MB unescaped), counts the rest, caps every list, and keeps what AppendJSON writes
// near MaxAnswerBytes whatever the texts are made of (escapes counted).
func TestBoundHostilePage(t *testing.T) {
	for _, c := range []struct {
		n      int
		fill   string
		budget bool // MaxAnswerBytes, not MaxResults, is what cuts
	}{
		{20_000, strings.Repeat("lorem ipsum ", 15), false},
		{2_000, strings.Repeat("<&>", 700), true},
	} {
		r := floodPage(c.n, c.fill)
		if n := r.answerSize(func(s string) int { return len(s) }); n < 4<<20 {
			t.Fatalf("the hostile page holds %d bytes, want ≥ 4 MiB", n)
		}
		r.Bound()
		if len(r.Results) > MaxResults || len(r.Results) == 0 || (len(r.Results) < MaxResults) != c.budget {
			t.Fatalf("%d results kept, want 1..%d (cut by the byte budget: %v)", len(r.Results), MaxResults, c.budget)
		}
		if got := len(r.Results) + r.Dropped; got != c.n {
			t.Fatalf("kept %d + dropped %d = %d, want %d", len(r.Results), r.Dropped, got, c.n)
		}
		if len(r.Suggestions) > MaxListItems || len(r.Answers) > MaxListItems || len(r.Infoboxes) > MaxInfoboxes ||
			len(r.UnresponsiveEngines) > MaxUnresponsive {
			t.Fatalf("lists kept: %d suggestions, %d answers, %d infoboxes, %d engines down",
				len(r.Suggestions), len(r.Answers), len(r.Infoboxes), len(r.UnresponsiveEngines))
		}
		if limit := MaxAnswerBytes + MaxResults*512; len(r.AppendJSON(nil)) > limit {
			t.Fatalf("written JSON is %d bytes, want ≤ %d", len(r.AppendJSON(nil)), limit)
		}
	}
}

// TestBoundFields: a long text is cut on a rune boundary, a result with a
// long URL is dropped and counted, a long thumbnail is blanked, and a
// result's lists keep MaxListItems; a small page is left as it was.
func TestBoundFields(t *testing.T) {
	long := strings.Repeat("é", MaxFieldBytes) // 2 bytes a rune: a cut in the middle is possible
	longURL := "https://example.org/" + strings.Repeat("a", MaxURLBytes)
	engines := make([]string, 3*MaxListItems)
	for i := range engines {
		engines[i] = fmt.Sprintf("e%d", i)
	}
	r := &Page{Query: "é", Results: []Result{
		{URL: "https://example.org/1", Title: "x" + long, Content: long + long, Thumbnail: longURL, Engines: engines},
		{URL: longURL, Title: "é"},
	}, Suggestions: []string{long + "é"}}
	r.Bound()
	if len(r.Results) != 1 || r.Dropped != 1 {
		t.Fatalf("%d results, %d dropped; want the long URL's dropped", len(r.Results), r.Dropped)
	}
	x := r.Results[0]
	for name, s := range map[string]string{"title": x.Title, "content": x.Content, "suggestion": r.Suggestions[0]} {
		if len(s) > MaxFieldBytes || len(s) < MaxFieldBytes-4 || !utf8.ValidString(s) {
			t.Errorf("%s: %d bytes, valid UTF-8 %v; want about %d, cut on a rune", name, len(s), utf8.ValidString(s), MaxFieldBytes)
		}
	}
	if x.Thumbnail != "" {
		t.Errorf("a thumbnail of %d bytes kept", len(x.Thumbnail))
	}
	if len(x.Engines) != MaxListItems {
		t.Errorf("%d engines kept, want %d", len(x.Engines), MaxListItems)
	}

	small := tenResults()
	before := string(small.AppendJSON(nil))
	small.Bound()
	if after := string(small.AppendJSON(nil)); after != before || small.Dropped != 0 {
		t.Errorf("Bound changed a small page (%d dropped):\n%s\n%s", small.Dropped, before, after)
	}
}
