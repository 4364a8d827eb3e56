package detect

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// decodeJSON decodes an answer as a client would read it.
func decodeJSON(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return m
}

// TestHTMLAnswerAsSearXNGJSON: the real results page for "hello world",
// read and written as JSON, is what the same SearXNG answered in JSON to
// the same search, key by key and result field by result field (the page
// shows no scores: each result's is its rank's, which this capture's
// engine gave too), and gains no key SearXNG does not write.
func TestHTMLAnswerAsSearXNGJSON(t *testing.T) {
	page := loadCapture(t, "searxng/a-search-html.txt")
	want := decodeJSON(t, loadCapture(t, "searxng/a-search-json.txt").body)
	r, err := ParseHTML(page.body)
	if err != nil {
		t.Fatal(err)
	}
	got := decodeJSON(t, r.AppendJSON(nil))
	for _, k := range []string{"query", "number_of_results", "answers", "corrections", "infoboxes", "unresponsive_engines"} {
		if !reflect.DeepEqual(got[k], want[k]) {
			t.Errorf("%s = %v, SearXNG's JSON %v", k, got[k], want[k])
		}
	}
	gr, wr := got["results"].([]any), want["results"].([]any)
	if len(gr) != len(wr) {
		t.Fatalf("%d results, SearXNG's JSON %d", len(gr), len(wr))
	}
	for i := range wr {
		g, w := gr[i].(map[string]any), wr[i].(map[string]any)
		for k, v := range w {
			if !reflect.DeepEqual(g[k], v) {
				t.Errorf("result %d %s = %#v, SearXNG's JSON %#v", i, k, g[k], v)
			}
		}
		for k, v := range g {
			if _, ok := w[k]; !ok {
				t.Errorf("result %d has %s = %#v, which SearXNG's JSON does not write", i, k, v)
			}
		}
	}
	// The page's suggestion is SearXNG's JSON suggestion.
	if !reflect.DeepEqual(got["suggestions"], want["suggestions"]) && len(want["suggestions"].([]any)) > 0 {
		t.Errorf("suggestions = %v, SearXNG's JSON %v", got["suggestions"], want["suggestions"])
	}
}

// TestHTMLAnswerSyntaxAndEntities: the page SearXNG renders for a query
// with syntax (":de hello world") and whose words split an entity (a
// query word "amp" highlighted inside "&amp;") reads as SearXNG's JSON
// for it: the query and suggestions without the syntax, "&" as "&".
func TestHTMLAnswerSyntaxAndEntities(t *testing.T) {
	page := string(loadCapture(t, "searxng/a-search-html.txt").body)
	edit := func(old, new string) {
		t.Helper()
		if !strings.Contains(page, old) {
			t.Fatalf("capture has no %q", old)
		}
		page = strings.ReplaceAll(page, old, new)
	}
	// What the same page says for ":de hello world" (the box and the
	// suggestion's q keep the syntax; the button shows the suggestion).
	edit(`value="hello world"`, `value=":de hello world"`)
	edit(`name="q" value="hello world suggestion"`, `name="q" value=":de hello world suggestion"`)
	// highlight_content runs on escaped text: "Tom &amp; Jerry" with the
	// word "amp" highlighted.
	edit(`Fake backend snippet 1`, `Tom &<span class="highlight">amp</span>; Jerry`)
	r, err := ParseHTML([]byte(page))
	if err != nil {
		t.Fatal(err)
	}
	if r.Query != "hello world" {
		t.Errorf("query = %q, want SearXNG's JSON echo %q", r.Query, "hello world")
	}
	if len(r.Suggestions) != 1 || r.Suggestions[0] != "hello world suggestion" {
		t.Errorf("suggestions = %q, want [hello world suggestion]", r.Suggestions)
	}
	if c := r.Results[0].Content; !strings.HasPrefix(c, "Tom & Jerry") {
		t.Errorf("content = %q, want it to start %q (the page shows an entity SearXNG split)", c, "Tom & Jerry")
	}
}

func TestSearchTerms(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"hello world", "hello world"},
		{":de hello  world", "hello world"},
		{"!fb edge bang", "edge bang"},
		{"!! foo bar", "foo bar"},
		{"<3 slow query :fr", "slow query"},
		{"!!", "!!"},
		{"?what is", "?what is"},
		{"  a   b ", "a b"},
	} {
		if got := searchTerms(c.in); got != c.want {
			t.Errorf("searchTerms(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
