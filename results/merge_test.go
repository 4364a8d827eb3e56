package results

import (
	"reflect"
	"testing"
)

func TestSameURLKey(t *testing.T) {
	same := [][]string{
		{"https://www.example.org/a/", "http://example.org/a", "https://EXAMPLE.org/a#top", "https://example.org:443/a/"},
		{"https://example.org/p?id=3&utm_source=x&fbclid=y", "https://example.org/p?id=3", "https://www.example.org/p/?utm_medium=z&id=3"},
		{"https://example.org/p?b=2&a=1", "https://example.org/p?a=1&b=2"},
	}
	for _, group := range same {
		for _, u := range group[1:] {
			if SameURLKey(u) != SameURLKey(group[0]) {
				t.Errorf("%s and %s: %q vs %q, want the same key", group[0], u, SameURLKey(group[0]), SameURLKey(u))
			}
		}
	}
	differ := [][2]string{
		{"https://example.org/a", "https://example.org/b"},
		{"https://example.org/p?id=3", "https://example.org/p?id=4"},
		{"https://example.org:8080/a", "https://example.org/a"},
		{"https://sub.example.org/a", "https://example.org/a"},
	}
	for _, d := range differ {
		if SameURLKey(d[0]) == SameURLKey(d[1]) {
			t.Errorf("%s and %s share the key %q", d[0], d[1], SameURLKey(d[0]))
		}
	}
}

func TestMergeUnitesAndRanks(t *testing.T) {
	a := &Page{
		Query: "go", NumberOfResults: 100,
		Results: []Result{
			{URL: "https://go.dev/", Title: "Go", Content: "short", Engine: "google", Engines: []string{"google"}, Positions: []int{1}},
			{URL: "https://only-a.example/", Title: "A", Engines: []string{"bing"}, Positions: []int{2}},
			{URL: "https://tie-a.example/", Title: "TA", Engines: []string{"bing"}, Positions: []int{3}},
		},
		Answers: TextAnswers("Go is a language"), Suggestions: []string{"golang"},
		UnresponsiveEngines: [][2]string{{"qwant", "timeout"}},
		Infoboxes:           []Infobox{{Infobox: "Go", ID: "https://go.dev", Content: "x", Engines: []string{"wikipedia"}}},
	}
	b := &Page{
		Query: "go", NumberOfResults: 250,
		Results: []Result{
			{URL: "http://www.go.dev", Title: "Go programming language", Content: "a longer content", Engines: []string{"duckduckgo"}, Positions: []int{2}},
			{URL: "https://tie-b.example/", Title: "TB", Engines: []string{"brave"}, Positions: []int{3}},
		},
		Answers: TextAnswers("Go is a language", "another"), Suggestions: []string{"golang", "go lang"},
		UnresponsiveEngines: [][2]string{{"qwant", "timeout"}, {"brave", "CAPTCHA"}},
		Infoboxes:           []Infobox{{Infobox: "Go", ID: "https://go.dev", Content: "longer box", Engines: []string{"wikidata"}}},
	}
	bBefore := *b
	m := Merge(a, b)
	var urls []string
	for _, r := range m.Results {
		urls = append(urls, r.URL)
	}
	// go.dev: positions 1 (a) and 2 (b): 2 * (1 + 1/2) = 3. only-a: 1/2.
	// tie-a and tie-b: 1/3 each, in the order first seen.
	if want := []string{"https://go.dev/", "https://only-a.example/", "https://tie-a.example/", "https://tie-b.example/"}; !reflect.DeepEqual(urls, want) {
		t.Fatalf("order %v, want %v", urls, want)
	}
	g := m.Results[0]
	if g.Score != 3 || !reflect.DeepEqual(g.Positions, []int{1, 2}) || !reflect.DeepEqual(g.Engines, []string{"google", "duckduckgo"}) {
		t.Fatalf("merged go.dev: score %v positions %v engines %v", g.Score, g.Positions, g.Engines)
	}
	if g.Title != "Go programming language" || g.Content != "a longer content" {
		t.Fatalf("merged go.dev kept %q / %q, want the longer title and content", g.Title, g.Content)
	}
	if m.NumberOfResults != 250 || !reflect.DeepEqual(m.Answers, TextAnswers("Go is a language", "another")) ||
		!reflect.DeepEqual(m.Suggestions, []string{"golang", "go lang"}) || len(m.UnresponsiveEngines) != 2 {
		t.Fatalf("united parts: %+v", m)
	}
	if len(m.Infoboxes) != 1 || m.Infoboxes[0].Content != "longer box" || !reflect.DeepEqual(m.Infoboxes[0].Engines, []string{"wikipedia", "wikidata"}) {
		t.Fatalf("infoboxes %+v", m.Infoboxes)
	}
	if !reflect.DeepEqual(*b, bBefore) || a.Results[0].Positions[0] != 1 || len(a.Results[0].Engines) != 1 || len(a.Infoboxes[0].Engines) != 1 {
		t.Fatal("Merge modified its arguments")
	}
}

func TestMergeOneAndNone(t *testing.T) {
	if m := Merge(nil, nil); len(m.Results) != 0 || m.Query != "" {
		t.Fatalf("merge of nothing: %+v", m)
	}
	one := &Page{Query: "q", Results: []Result{
		{URL: "https://b.example/", Positions: []int{2}}, {URL: "https://a.example/", Positions: []int{1}},
	}}
	m := Merge(one)
	if m.Results[0].URL != "https://a.example/" || m.Results[0].Score != 1 || m.Results[1].Score != 0.5 {
		t.Fatalf("one answer: %+v", m.Results)
	}
}
