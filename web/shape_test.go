package web

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/results"
)

// capture2026 is the body of a capture of SearXNG 9fea41204
// (testdata/searxng-2026, copied from ../shared/fixtures/searxng-2026).
func capture2026(t *testing.T, name string) string {
	t.Helper()
	return readCapture(t, filepath.Join("..", "searxng-2026", name)).body
}

// keptAs answers every search with body as the proxy keeps it: raw (an
// answer kept in another form, e.g. by an older searxgate or a shared
// cache) or read and written in the Full shape, as the proxy writes it.
func keptAs(t *testing.T, body string, raw bool) *fakeSearch {
	js := []byte(body)
	if !raw {
		r, err := detect.ParseJSON(js)
		if err != nil {
			t.Fatal(err)
		}
		js = r.AppendJSON(nil)
	}
	return &fakeSearch{answer: func(proxy.Request) (*proxy.Response, error) {
		return &proxy.Response{JSON: js, Instance: "https://up.example/", Attempts: 1}, nil
	}}
}

func decode(t *testing.T, b string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(b), &m); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return m
}

// classicOf is SearXNG's current JSON want as the classic shape has it:
// number_of_results 0 (SearXNG no longer says), answers as strings with
// their link appended.
func classicOf(want map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range want {
		out[k] = v
	}
	out["number_of_results"] = 0.0
	texts := []any{}
	for _, a := range want["answers"].([]any) {
		a := a.(map[string]any)
		text := a["answer"].(string)
		if u, _ := a["url"].(string); u != "" {
			text += " (" + u + ")"
		}
		texts = append(texts, text)
	}
	out["answers"] = texts
	return out
}

// TestJSONShapes: format=json answers in the shape configured, whatever
// form the answer was kept in: the current shape is SearXNG 2026's JSON
// as it wrote it (captures with and without answers), the classic one
// (the default) the same with number_of_results and the answers as
// strings. A kept answer already in the shape asked is served as it is
// (no decode), less its number_of_results for the current shape.
func TestJSONShapes(t *testing.T) {
	for _, name := range []string{"json-search.txt", "json-search-rich-infobox-answer-correction.txt"} {
		body := capture2026(t, name)
		current := decode(t, body)
		for _, raw := range []bool{true, false} {
			for shape, want := range map[results.Shape]map[string]any{results.Current: current, results.Classic: classicOf(current)} {
				_, c := serve(t, Config{Search: keptAs(t, body, raw), JSONShape: shape})
				r := c.get("/search?q=x&format=json")
				if got := decode(t, r.body); r.status != 200 || !reflect.DeepEqual(got, want) {
					t.Errorf("%s kept raw=%v, %s shape: %d\n got %v\nwant %v", name, raw, shape, r.status, got, want)
				}
			}
		}
	}
	// Kept in the Full shape with answers: served in either shape byte for
	// byte as a rewrite from its results would write it, without one.
	rich, err := detect.ParseJSON([]byte(capture2026(t, "json-search-rich-infobox-answer-correction.txt")))
	if err != nil {
		t.Fatal(err)
	}
	for _, shape := range []results.Shape{results.Classic, results.Current} {
		got, err := servedJSON(&proxy.Response{JSON: rich.AppendJSON(nil)}, shape)
		if want := rich.AppendJSONAs(nil, shape); err != nil || string(got) != string(want) {
			t.Errorf("%s, kept with answers:\n got %s (%v)\nwant %s", shape, got, err, want)
		}
	}
	// Kept in the Full shape without answers: served as kept.
	fs := keptAs(t, capture2026(t, "json-search.txt"), false)
	kept, _ := fs.answer(proxy.Request{})
	_, c := serve(t, Config{Search: fs})
	if r := c.get("/search?q=x&format=json"); r.body != string(kept.JSON) {
		t.Errorf("classic: a kept answer in shape was written again:\n%s\n%s", r.body, kept.JSON)
	}
	_, c = serve(t, Config{Search: fs, JSONShape: results.Current})
	if r := c.get("/search?q=x&format=json"); strings.Contains(r.body, "number_of_results") || len(r.body) >= len(kept.JSON) {
		t.Errorf("current: %s", r.body)
	}
}

// typedAnswersSearch answers with every answer type SearXNG writes
// (testdata/searxng-2026/answers.json) and no result.
func typedAnswersSearch(t *testing.T) *fakeSearch {
	list, err := os.ReadFile(filepath.Join("testdata", "searxng-2026", "answers.json"))
	if err != nil {
		t.Fatal(err)
	}
	return keptAs(t, `{"query": "hallo", "results": [], "answers": `+string(list)+`}`, false)
}

// TestTypedAnswersInEveryFormat: a text answer, translations and the
// weather show as text in the page, CSV, RSS and classic JSON, each with
// its link where it has one (a link on the page, by its host).
func TestTypedAnswersInEveryFormat(t *testing.T) {
	_, c := serve(t, Config{Search: typedAnswersSearch(t)})
	texts := []string{
		"Rich answer: 42 is the answer for rich hello",
		"hello; hullo (hʌˈləʊ)",
		"Berlin: 21.0 °C, Partly cloudy (wttr.in)",
	}
	links := []string{"http://127.0.0.1/answer/42", "https://dictzone.example/german-english-dictionary/hallo", ""}

	page := c.get("/search?q=hallo").body
	for i, text := range texts {
		if !strings.Contains(page, `<div class="answer" dir="auto">`+text) {
			t.Errorf("page: no answer %q", text)
		}
		if links[i] != "" && !strings.Contains(page, `<a href="`+links[i]+`" rel="noreferrer noopener">`) {
			t.Errorf("page: answer %d's link %s is not a link", i, links[i])
		}
	}
	if !strings.Contains(page, `>dictzone.example</a>`) {
		t.Error("page: the translations' link is not shown by its host")
	}

	rows, err := csv.NewReader(strings.NewReader(c.get("/search?q=hallo&format=csv").body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, row := range rows[1:] {
		got = append(got, []string{row[0], row[1], row[3], row[4], row[6]})
	}
	want := [][]string{
		{texts[0], links[0], "127.0.0.1", "fakerich", "answer"},
		{texts[1], links[1], "dictzone.example", "dictzone", "answer"},
		{texts[2], "", "", "wttr.in", "answer"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CSV rows %q, want %q", got, want)
	}

	rss := c.get("/search?q=hallo&format=rss").body
	for i, text := range texts {
		item := "<title>" + xmlEscape(text) + "</title>\n      <type>answer</type>\n"
		if links[i] != "" {
			item += "      <link>" + links[i] + "</link>\n"
		}
		if !strings.Contains(rss, item+"    </item>") {
			t.Errorf("RSS: no item %q", item)
		}
	}

	js := decode(t, c.get("/search?q=hallo&format=json").body)
	if want := []any{texts[0] + " (" + links[0] + ")", texts[1] + " (" + links[1] + ")", texts[2]}; !reflect.DeepEqual(js["answers"], want) {
		t.Errorf("classic JSON answers %q, want %q", js["answers"], want)
	}
}

// BenchmarkServedJSONWithAnswers: a kept answer with an answer object
// (the rich capture of SearXNG 2026: 12 results, an infobox) served in
// the classic shape, its answers rewritten alone; and, for comparison,
// written again from its decoded results.
func BenchmarkServedJSONWithAnswers(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join("testdata", "searxng-2026", "json-search-rich-infobox-answer-correction.txt"))
	if err != nil {
		b.Fatal(err)
	}
	_, body, _ := strings.Cut(string(raw), "\r\n\r\n")
	r, err := detect.ParseJSON([]byte(body))
	if err != nil {
		b.Fatal(err)
	}
	kept := r.AppendJSON(nil)
	b.Run("answers alone", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := servedJSON(&proxy.Response{JSON: kept}, results.Classic); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode and write", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p, err := detect.ParseJSON(kept)
			if err != nil {
				b.Fatal(err)
			}
			_ = p.AppendJSONAs(nil, results.Classic)
		}
	})
}
