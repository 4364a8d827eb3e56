package detect

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/searxgate/searxgate/results"
)

// The captures of real SearXNG 9fea41204 (2026-08-22) in
// testdata/searxng-2026 (copied from ../shared/fixtures/searxng-2026,
// INDEX.tsv says which request made each), JSON and HTML of the same
// searches.
var captures2026 = []string{"search", "search-rich-infobox-answer-correction", "search-answer-hash-plugin", "search-engine-suspended"}

// TestJSON2026RoundTrip: each JSON capture, read and written in the
// Current shape, is what SearXNG wrote, key for key and value for value
// (every result field, answer object, infobox field); in the Classic
// shape it is the same but number_of_results (0: SearXNG no longer says)
// and the answers, strings with their link appended.
func TestJSON2026RoundTrip(t *testing.T) {
	for _, name := range captures2026 {
		capture := loadCapture(t, "searxng-2026/json-"+name+".txt").body
		want := decodeJSON(t, capture)
		r, err := ParseJSON(capture)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := decodeJSON(t, r.AppendJSONAs(nil, results.Current)); !reflect.DeepEqual(got, want) {
			g, _ := json.MarshalIndent(got, "", " ")
			w, _ := json.MarshalIndent(want, "", " ")
			t.Errorf("%s in the current shape:\n got %s\nwant %s", name, g, w)
		}
		got := decodeJSON(t, r.AppendJSONAs(nil, results.Classic))
		want["number_of_results"] = 0.0
		var texts []any
		for _, a := range want["answers"].([]any) {
			a := a.(map[string]any)
			text := a["answer"].(string)
			if u, _ := a["url"].(string); u != "" {
				text += " (" + u + ")"
			}
			texts = append(texts, text)
		}
		want["answers"] = texts
		if texts == nil {
			want["answers"] = []any{}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s in the classic shape:\n got %v\nwant %v", name, got, want)
		}
	}
}

// typedAnswers is a JSON answer holding every answer type SearXNG writes
// (testdata/answers-2026/answers.json: a text with a link, translations,
// the weather), and that list decoded.
func typedAnswers(t *testing.T) (body []byte, want []any) {
	t.Helper()
	list, err := os.ReadFile(filepath.Join("testdata", "answers-2026", "answers.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(list, &want); err != nil {
		t.Fatal(err)
	}
	body = []byte(`{"query": "hallo", "results": [], "answers": ` + string(list) +
		`, "corrections": [], "infoboxes": [], "suggestions": [], "unresponsive_engines": []}`)
	return body, want
}

// TestTypedAnswersJSON: translations and weather answers, which have no
// "answer" field, are read from SearXNG's JSON and written back whole in
// the current shape; in the classic shape each is one line of text.
func TestTypedAnswersJSON(t *testing.T) {
	body, want := typedAnswers(t)
	r, err := ParseJSON(body)
	if err != nil {
		t.Fatal(err)
	}
	got := decodeJSON(t, r.AppendJSONAs(nil, results.Current))
	if !reflect.DeepEqual(got["answers"], want) {
		g, _ := json.MarshalIndent(got["answers"], "", " ")
		t.Errorf("answers written back:\n%s", g)
	}
	classic := decodeJSON(t, r.AppendJSONAs(nil, results.Classic))["answers"]
	wantText := []any{
		"Rich answer: 42 is the answer for rich hello (http://127.0.0.1/answer/42)",
		"hello; hullo (hʌˈləʊ) (https://dictzone.example/german-english-dictionary/hallo)",
		"Berlin: 21.0 °C, Partly cloudy (wttr.in)",
	}
	if !reflect.DeepEqual(classic, wantText) {
		t.Errorf("classic answers %q, want %q", classic, wantText)
	}
	// A cached answer is read again by every face: nothing is lost.
	again, err := ParseJSON(r.AppendJSON(nil))
	if err != nil || !reflect.DeepEqual(again.Answers, r.Answers) {
		t.Errorf("read again: %+v (%v), want %+v", again.Answers, err, r.Answers)
	}
}

// pageFields are the result fields SearXNG's page shows, compared as
// they are; the others are named in TestHTML2026AsJSON.
var pageFields = []string{"url", "title", "content", "template", "category", "parsed_url"}

// TestHTML2026AsJSON: each results page of the captures, read and
// written as JSON, is what the same SearXNG wrote in JSON for the same
// search, for every field the page shows. What it does not show:
//   - a result's engine (the page lists its engines, not which one
//     SearXNG names engine), score and positions (each gets its rank's),
//     img_src of a default result, priority and pubdate; the keys a
//     2026 result has empty (thumbnail "", img_src "", publishedDate
//     null) are not written;
//   - an infobox's id and engine, and its fields of a result (url,
//     template, title, ...);
//   - a text answer's engine;
//   - the suggestions' order (SearXNG keeps them in a set).
func TestHTML2026AsJSON(t *testing.T) {
	for _, name := range captures2026 {
		want := decodeJSON(t, loadCapture(t, "searxng-2026/json-"+name+".txt").body)
		r, err := ParseHTML(loadCapture(t, "searxng-2026/html-"+name+".txt").body)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := decodeJSON(t, r.AppendJSONAs(nil, results.Current))
		for _, k := range []string{"query", "corrections", "unresponsive_engines"} {
			if !reflect.DeepEqual(got[k], want[k]) {
				t.Errorf("%s: %s = %v, SearXNG's JSON %v", name, k, got[k], want[k])
			}
		}
		if g, w := sortedAny(got["suggestions"]), sortedAny(want["suggestions"]); !reflect.DeepEqual(g, w) {
			t.Errorf("%s: suggestions %v, SearXNG's JSON %v", name, g, w)
		}
		sameResults(t, name, got["results"].([]any), want["results"].([]any))
		sameParts(t, name+" answers", got["answers"], want["answers"], "url", "parsed_url", "template", "answer")
		sameParts(t, name+" infoboxes", got["infoboxes"], want["infoboxes"], "infobox", "content", "img_src", "urls", "attributes")
	}
}

func sameResults(t *testing.T, name string, got, want []any) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d results, SearXNG's JSON %d", name, len(got), len(want))
	}
	for i := range want {
		g, w := got[i].(map[string]any), want[i].(map[string]any)
		for _, k := range pageFields {
			if !reflect.DeepEqual(g[k], w[k]) {
				t.Errorf("%s: result %d %s = %#v, SearXNG's JSON %#v", name, i, k, g[k], w[k])
			}
		}
		if gs, ws := sortedAny(g["engines"]), sortedAny(w["engines"]); !reflect.DeepEqual(gs, ws) {
			t.Errorf("%s: result %d engines %v, SearXNG's JSON %v", name, i, gs, ws)
		}
		// Dates and thumbnails as SearXNG wrote them, where it wrote one.
		for _, k := range []string{"publishedDate", "thumbnail"} {
			if v, _ := w[k].(string); v != "" && g[k] != v {
				t.Errorf("%s: result %d %s = %#v, SearXNG's JSON %q", name, i, k, g[k], v)
			}
			if v, _ := w[k].(string); v == "" && g[k] != nil {
				t.Errorf("%s: result %d %s = %#v, which the page does not show", name, i, k, g[k])
			}
		}
	}
}

// sameParts compares the keys of two lists of objects.
func sameParts(t *testing.T, what string, got, want any, keys ...string) {
	t.Helper()
	g, w := got.([]any), want.([]any)
	if len(g) != len(w) {
		t.Fatalf("%s: %d, SearXNG's JSON %d", what, len(g), len(w))
	}
	for i := range w {
		for _, k := range keys {
			gv, wv := g[i].(map[string]any)[k], w[i].(map[string]any)[k]
			if !reflect.DeepEqual(gv, wv) {
				t.Errorf("%s %d: %s = %#v, SearXNG's JSON %#v", what, i, k, gv, wv)
			}
		}
	}
}

func sortedAny(v any) []string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	slices.Sort(out)
	return out
}

// TestTypedAnswersHTML: every answer type of elements/answers.html, as
// the templates render them (testdata/answers-2026, in the English
// interface and with the German one's headings), read from a results page: a text answer with
// its link, translations whole (texts, transliterations, examples,
// definitions, synonyms, the engine and the link), and the weather's
// summary lines and service (the measures the page shows are formatted
// for its locale and not read back).
func TestTypedAnswersHTML(t *testing.T) {
	_, want := typedAnswers(t)
	page := string(loadCapture(t, "searxng-2026/html-search-rich-infobox-answer-correction.txt").body)
	start := strings.Index(page, `    <div id="answers"`)
	end := strings.Index(page, `    <div id="sidebar">`)
	if start < 0 || end < start {
		t.Fatal("the capture has no answers block")
	}
	english, err := os.ReadFile(filepath.Join("testdata", "answers-2026", "answers.html"))
	if err != nil {
		t.Fatal(err)
	}
	// The German interface's headings (searx/translations/de).
	german := strings.NewReplacer(">Answers : <", ">Antworten : <", "<div>Examples</div>", "<div>Beispiele</div>",
		"<div>Definitions</div>", "<div>Definitionen</div>", "<div>Synonyms</div>", "<div>Synonyme</div>").Replace(string(english))
	if german == string(english) {
		t.Fatal("answers.html has no headings")
	}
	for file, block := range map[string]string{"answers.html": string(english), "answers.html in German": german} {
		r, err := ParseHTML([]byte(page[:start] + block + page[end:]))
		if err != nil {
			t.Fatal(err)
		}
		got := decodeJSON(t, r.AppendJSONAs(nil, results.Current))["answers"].([]any)
		if len(got) != 3 {
			t.Fatalf("%s: %d answers, want 3: %v", file, len(got), got)
		}
		sameParts(t, file+" text answer", got[:1], want[:1], "url", "parsed_url", "template", "answer")
		sameParts(t, file+" translations", got[1:2], want[1:2], "url", "parsed_url", "engine", "template", "translations")
		sameParts(t, file+" weather", got[2:], want[2:], "url", "parsed_url", "template", "service")
		gw, ww := got[2].(map[string]any), want[2].(map[string]any)
		if g, w := gw["current"].(map[string]any)["summary"], ww["current"].(map[string]any)["summary"]; g != w {
			t.Errorf("%s: weather now %q, want %q", file, g, w)
		}
		gf, wf := gw["forecasts"].([]any), ww["forecasts"].([]any)
		if len(gf) != len(wf) {
			t.Fatalf("%s: %d forecasts, want %d", file, len(gf), len(wf))
		}
		for i := range wf {
			g, w := gf[i].(map[string]any)["summary"].(string), wf[i].(map[string]any)["summary"].(string)
			if !strings.HasSuffix(g, w) {
				t.Errorf("%s: forecast %d %q, want its time and %q", file, i, g, w)
			}
		}
		if a := r.Answers[1].Text(); a != "hello; hullo (hʌˈləʊ)" {
			t.Errorf("%s: translation as text %q", file, a)
		}
	}
}

// TestTypedAnswersHTMLCleaned: what a typed answer on a page holds is
// cleaned as what JSON holds: no bidirectional control passes.
func TestTypedAnswersHTMLCleaned(t *testing.T) {
	page := `<input id="q" value="hallo"><div id="results"><div id="answers"><div class="answer">` +
		`<details class="answer-translations"><summary>x</summary><dl><dt>hel` + "\u202e" + `lo</dt><dd></dd></dl></details>` +
		`<span class="answer-url">dict` + "\u2066" + `zone</span></div></div><div id="urls"></div></div>`
	r, err := ParseHTML([]byte(page))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Answers) != 1 {
		t.Fatalf("answers %+v", r.Answers)
	}
	a := r.Answers[0]
	if js := string(r.AppendJSONAs(nil, results.Current)); hasBidi(js) || a.Engine != "dictzone" || a.Text() != "hello" {
		t.Errorf("engine %q, text %q, JSON %s", a.Engine, a.Text(), js)
	}
}
