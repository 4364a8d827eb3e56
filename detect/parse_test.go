package detect

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/searxgate/searxgate/results"
)

func TestParseJSONClassic(t *testing.T) {
	r, err := ParseJSON(loadCapture(t, "searxng/a-search-json.txt").body)
	if err != nil {
		t.Fatal(err)
	}
	want0 := results.Result{
		URL:       "http://127.0.0.1/fake/0/hello-world",
		Title:     "Result 1 for hello world",
		Content:   "Fake backend snippet 1: the words were hello, world",
		Engine:    "fakeback",
		Engines:   []string{"fakeback"},
		Positions: []int{1},
		Score:     1,
		Category:  "general",
		ParsedURL: []string{"http", "127.0.0.1", "/fake/0/hello-world", "", "", ""},
		Template:  "default.html",
	}
	if !reflect.DeepEqual(r.Results[0], want0) {
		t.Errorf("result 0:\n got %#v\nwant %#v", r.Results[0], want0)
	}
	if r.Query != "hello world" || len(r.Results) != 3 || r.Results[2].Score != 0.3333333333333333 {
		t.Errorf("query %q, %d results, score %v", r.Query, len(r.Results), r.Results[2].Score)
	}
	if !reflect.DeepEqual(r.Suggestions, []string{"hello world suggestion"}) || r.Answers != nil || r.UnresponsiveEngines != nil {
		t.Errorf("suggestions %q answers %q unresponsive %q", r.Suggestions, r.Answers, r.UnresponsiveEngines)
	}

	r, err = ParseJSON(loadCapture(t, "searxng/a-search-json-engine-suspended.txt").body)
	if err != nil {
		t.Fatal(err)
	}
	if want := [][2]string{{"fakeback", "Suspended: HTTP error"}}; !reflect.DeepEqual(r.UnresponsiveEngines, want) {
		t.Errorf("unresponsive %q, want %q", r.UnresponsiveEngines, want)
	}
	r, err = ParseJSON(loadCapture(t, "searxng/a-search-json-answer-calculator.txt").body)
	if err != nil || !reflect.DeepEqual(results.ClassicAnswers(r.Answers), []string{"calculate"}) {
		t.Errorf("calculator answers %q (%v)", r.Answers, err)
	}
}

func TestParseJSONNewShape(t *testing.T) {
	r, err := ParseJSON(loadCapture(t, "extra/json-new-shape.txt").body)
	if err != nil {
		t.Fatal(err)
	}
	if r.NumberOfResults != 0 || r.Query != "Zürich Öffnungszeiten" {
		t.Errorf("number_of_results %d, query %q", r.NumberOfResults, r.Query)
	}
	var urls []string
	for _, x := range r.Results {
		urls = append(urls, x.URL)
	}
	wantURLs := []string{
		"https://www.zuerich.example/oeffnungszeiten",
		"https://en.wikipedia.example/wiki/Z%C3%BCrich?x=1#History",
		"https://www.stadt-zuerich.example/opening",
	}
	if !reflect.DeepEqual(urls, wantURLs) {
		t.Fatalf("urls %q, want %q (javascript: and ftp: dropped)", urls, wantURLs)
	}
	first := r.Results[0]
	if first.PublishedDate != "" || first.Thumbnail != "" || !reflect.DeepEqual(first.Engines, []string{"brave", "startpage"}) {
		t.Errorf("first result %#v", first)
	}
	if want := []string{"https", "www.zuerich.example", "/oeffnungszeiten", "", "", ""}; !reflect.DeepEqual(first.ParsedURL, want) {
		t.Errorf("parsed_url filled in as %q, want %q", first.ParsedURL, want)
	}
	for _, k := range []string{"priority", "pubdate", "favicon"} {
		if _, ok := first.Extra[k]; !ok {
			t.Errorf("extra field %q lost", k)
		}
	}
	if got := string(first.Extra["favicon"]); got != `{"src":"https://www.zuerich.example/favicon.ico"}` {
		t.Errorf("favicon kept as %s", got)
	}
	wiki := r.Results[1]
	if wiki.PublishedDate != "2025-03-01T00:00:00" || wiki.IframeSrc != "https://player.example/embed/1" || wiki.ImgSrc == "" || wiki.Thumbnail == "" {
		t.Errorf("wikipedia result %#v", wiki)
	}
	if want := []string{"https", "en.wikipedia.example", "/wiki/Z%C3%BCrich", "", "x=1", "History"}; !reflect.DeepEqual(wiki.ParsedURL, want) {
		t.Errorf("parsed_url %q, want %q", wiki.ParsedURL, want)
	}
	odd := r.Results[2]
	if odd.Positions != nil || string(odd.Extra["positions"]) != `"3"` || odd.Content != "" {
		t.Errorf("positions of an unexpected type: typed %v, extra %s", odd.Positions, odd.Extra["positions"])
	}
	wantAnswers := []string{"Mo–Fr 8–17 Uhr (https://www.zuerich.example/oeffnungszeiten)", "42", "unsafe link dropped"}
	if got := results.ClassicAnswers(r.Answers); !reflect.DeepEqual(got, wantAnswers) {
		t.Errorf("answers %q, want %q", got, wantAnswers)
	}
	if want := [][2]string{{"google", "Suspended: CAPTCHA"}, {"qwant", "timeout"}}; !reflect.DeepEqual(r.UnresponsiveEngines, want) {
		t.Errorf("unresponsive %q, want %q", r.UnresponsiveEngines, want)
	}
	if len(r.Infoboxes) != 1 {
		t.Fatalf("%d infoboxes", len(r.Infoboxes))
	}
	ib := r.Infoboxes[0]
	if ib.Infobox != "Zürich" || ib.ID != "https://www.wikidata.example/wiki/Q72" || ib.Engine != "wikidata" || len(ib.Engines) != 2 {
		t.Errorf("infobox %#v", ib)
	}
	if len(ib.URLs) != 2 || ib.URLs[0].Title != "Official website" || string(ib.URLs[0].Extra["official"]) != "true" {
		t.Errorf("infobox urls %#v (javascript: dropped, official kept)", ib.URLs)
	}
	if len(ib.Attributes) != 2 || ib.Attributes[0].Value != "447,082" || string(ib.Attributes[0].Extra["entity"]) != `"P1082"` || ib.Attributes[1].Extra["image"] == nil {
		t.Errorf("infobox attributes %#v", ib.Attributes)
	}
	if _, ok := ib.Extra["relatedTopics"]; !ok {
		t.Errorf("infobox relatedTopics lost")
	}
}

func TestParseJSONErrors(t *testing.T) {
	for _, body := range []string{
		``, `nope`, `[]`, `"x"`, `{"error": "No query"}`, `{"query": "x", "results": {}}`,
		`{"query": "x", "results": [`, `{"results": [1, 2], "query": 3`,
	} {
		if _, err := ParseJSON([]byte(body)); !errors.Is(err, ErrNotJSON) {
			t.Errorf("ParseJSON(%q) error %v, want ErrNotJSON", body, err)
		}
	}
	// Minimal answers that are SearXNG JSON.
	for _, body := range []string{`{"query": "x"}`, `{"results": []}`, `{"results": [1, "x", null, {"url": 5}]}`} {
		r, err := ParseJSON([]byte(body))
		if err != nil || len(r.Results) != 0 {
			t.Errorf("ParseJSON(%q) = %v, %v", body, r, err)
		}
	}
}

// TestHTMLMatchesJSON: the HTML page and the JSON answer of the same
// search read the same, positions and scores included.
func TestHTMLMatchesJSON(t *testing.T) {
	h, err := ParseHTML(loadCapture(t, "searxng/a-search-html.txt").body)
	if err != nil {
		t.Fatal(err)
	}
	j, err := ParseJSON(loadCapture(t, "searxng/a-search-json.txt").body)
	if err != nil {
		t.Fatal(err)
	}
	// The page's ranks and the scores derived from them are SearXNG's own
	// for a one-engine answer.
	if !reflect.DeepEqual(h, j) {
		t.Errorf("HTML and JSON differ:\nhtml %#v\njson %#v", h, j)
	}
}

func TestParseHTMLCurrentMarkup(t *testing.T) {
	r, err := ParseHTML(loadCapture(t, "extra/html-current.txt").body)
	if err != nil {
		t.Fatal(err)
	}
	want := &results.Page{
		Query:           "Ada Lovelace",
		NumberOfResults: 1234000,
		Results: []results.Result{
			{
				URL:           "https://en.wikipedia.example/wiki/Ada_Lovelace",
				Title:         "Ada Lovelace - Wikipedia",
				Content:       "Augusta Ada King, Countess of Lovelace & mathematician <1815>",
				Engine:        "duckduckgo",
				Engines:       []string{"duckduckgo", "wikipedia"},
				Category:      "general",
				ParsedURL:     []string{"https", "en.wikipedia.example", "/wiki/Ada_Lovelace", "", "", ""},
				Template:      "default.html",
				PublishedDate: "2025-11-02T00:00:00",
				Thumbnail:     "https://upload.wikimedia.example/ada-thumb.jpg",
				Positions:     []int{1},
				Score:         1,
			},
			{
				URL:       "https://www.computerhistory.example/babbage/adalovelace/",
				Title:     "The Engines | Babbage Engine",
				Engine:    "brave",
				Engines:   []string{"brave"},
				Category:  "general",
				ParsedURL: []string{"https", "www.computerhistory.example", "/babbage/adalovelace/", "", "", ""},
				Template:  "default.html",
				Positions: []int{2},
				Score:     0.5,
			},
			{
				URL:           "https://www.youtube.example/watch?v=abc123",
				Title:         "Who was Ada Lovelace?",
				Content:       "A short biography of the first programmer.",
				Engine:        "youtube",
				Engines:       []string{"youtube"},
				Category:      "videos",
				ParsedURL:     []string{"https", "www.youtube.example", "/watch", "", "v=abc123", ""},
				Template:      "videos.html",
				PublishedDate: "2024-12-10T00:00:00",
				Thumbnail:     "https://i.ytimg.example/vi/abc123/hqdefault.jpg",
				IframeSrc:     "https://www.youtube-nocookie.example/embed/abc123",
				Positions:     []int{3},
				Score:         1.0 / 3,
			},
			{
				URL:       "https://gallery.example/ada",
				Title:     "Ada Lovelace portrait",
				Content:   "Portrait by Alfred Edward Chalon",
				Engine:    "bing images",
				Engines:   []string{"bing images"},
				Category:  "images",
				ParsedURL: []string{"https", "gallery.example", "/ada", "", "", ""},
				Template:  "images.html",
				Thumbnail: "https://images.example/ada-portrait-small.jpg",
				ImgSrc:    "https://images.example/ada-portrait.jpg",
				Positions: []int{4},
				Score:     0.25,
			},
		},
		Answers: []results.Answer{
			{Answer: "Ada Lovelace was born on 10 December 1815", URL: "https://www.wikidata.example/wiki/Q7259", Template: results.LegacyAnswer},
			{Answer: "1815 + 36 = 1851", Template: results.LegacyAnswer},
		},
		Corrections: []string{"Ada Lovelace biography"},
		Infoboxes: []results.Infobox{{
			Infobox: "Ada Lovelace",
			Content: "English mathematician and writer, chiefly known for her work on Charles Babbage's Analytical Engine.",
			ImgSrc:  "https://upload.wikimedia.example/ada.jpg",
			URLs:    []results.InfoboxURL{{Title: "Wikipedia", URL: "https://en.wikipedia.example/wiki/Ada_Lovelace"}},
			Attributes: []results.InfoboxAttribute{
				{Label: "Born", Value: "10 December 1815"},
				{Label: "Died", Value: "27 November 1852"},
			},
		}},
		Suggestions:         []string{"Ada Lovelace Analytical Engine", "Ada Lovelace day"},
		UnresponsiveEngines: [][2]string{{"google", "Suspended: CAPTCHA"}},
	}
	if !reflect.DeepEqual(r, want) {
		g, _ := json.MarshalIndent(r, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("current markup:\n got %s\nwant %s", g, w)
	}
}

func TestParseHTMLEngineErrors(t *testing.T) {
	tests := []struct {
		file string
		want [][2]string
	}{
		{"searxng/a-search-html-engine-http500.txt", [][2]string{{"fakeback", "HTTP error"}}},
		{"searxng/a-search-html-noresults.txt", nil},
		{"searxng/a-search-html.txt", nil},
		{"extra/html-current-engines-down.txt", [][2]string{{"google", "Suspended: access denied"}, {"duckduckgo", "CAPTCHA"}}},
	}
	for _, tc := range tests {
		r, err := ParseHTML(loadCapture(t, tc.file).body)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if !reflect.DeepEqual(r.UnresponsiveEngines, tc.want) || len(r.Results) != 0 && tc.want != nil {
			t.Errorf("%s: unresponsive %q, want %q", tc.file, r.UnresponsiveEngines, tc.want)
		}
	}
}

func TestParseHTMLErrors(t *testing.T) {
	for _, file := range []string{"searxng/a-index.html.txt", "searxng/a-404.txt", "extra/anubis-200.txt", "extra/nginx-welcome.txt", "searxng/a-config.txt"} {
		if _, err := ParseHTML(loadCapture(t, file).body); !errors.Is(err, ErrNotResultsPage) {
			t.Errorf("%s: error %v, want ErrNotResultsPage", file, err)
		}
	}
	// The region shortcut and the whole-page path agree when the query box
	// is missing.
	body := strings.Replace(string(loadCapture(t, "searxng/a-search-html.txt").body), `id="q"`, `id="query"`, 1)
	r, err := ParseHTML([]byte(body))
	if err != nil || len(r.Results) != 3 || r.Query != "" {
		t.Errorf("page without a query box: %v, %v", r, err)
	}
}

func TestParseFormats(t *testing.T) {
	tests := []struct {
		file string
		want []string
	}{
		{"searxng/a-search-html.txt", []string{"json"}},
		{"searxng/a-search-html-noresults.txt", []string{"json"}},
		{"searxng/b-search-html.txt", nil},
		{"searxng/c-search-html-browser-headers.txt", []string{"json"}},
		{"extra/html-current.txt", []string{"csv", "json", "rss"}},
		{"searxng/a-index.html.txt", nil},
	}
	for _, tc := range tests {
		got := ParseFormats(loadCapture(t, tc.file).body)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: formats %q, want %q", tc.file, got, tc.want)
		}
	}
}

func TestWithoutSVG(t *testing.T) {
	tests := map[string]string{
		"":                                     "",
		"<p>a</p>":                             "<p>a</p>",
		"a<svg x><circle/></svg>b<svg></svg>c": "abc",
		"a<svg>unclosed":                       "a<svg>unclosed",
		"a<svg></svg>b<svg>unclosed":           "ab<svg>unclosed",
	}
	for in, want := range tests {
		if got := string(withoutSVG([]byte(in))); got != want {
			t.Errorf("withoutSVG(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestAppendJSONKeepsEverything: for every JSON fixture, what AppendJSON
// writes holds every field of every upstream result with its value (a null
// string may come back as ""), and every top-level key of the classic
// shape.
func TestAppendJSONKeepsEverything(t *testing.T) {
	for _, name := range fixtureNames(t) {
		c := loadCapture(t, name)
		r, err := ParseJSON(c.body)
		if err != nil {
			continue
		}
		out := r.AppendJSON(nil)
		var got, up map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%s: AppendJSON wrote invalid JSON: %v\n%s", name, err, out)
		}
		if err := json.Unmarshal(c.body, &up); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"query", "number_of_results", "results", "answers", "corrections", "infoboxes", "suggestions", "unresponsive_engines"} {
			if _, ok := got[k]; !ok {
				t.Errorf("%s: key %q missing", name, k)
			}
		}
		var kept []any
		for _, x := range up["results"].([]any) {
			if m, ok := x.(map[string]any); ok {
				if u, _ := m["url"].(string); httpURL(u) {
					kept = append(kept, m)
				}
			}
		}
		gotResults := got["results"].([]any)
		if len(gotResults) != len(kept) {
			t.Fatalf("%s: %d results written, %d upstream", name, len(gotResults), len(kept))
		}
		for i, x := range kept {
			in, outR := x.(map[string]any), gotResults[i].(map[string]any)
			for k, v := range in {
				w, ok := outR[k]
				if !ok {
					t.Errorf("%s: result %d lost %q", name, i, k)
					continue
				}
				if v == nil && (w == "" || w == nil) {
					continue
				}
				if !reflect.DeepEqual(v, w) {
					t.Errorf("%s: result %d %q = %v, upstream %v", name, i, k, w, v)
				}
			}
			for _, k := range []string{"url", "title", "content", "engine", "engines", "category", "score", "parsed_url", "template", "positions"} {
				if _, ok := outR[k]; !ok {
					t.Errorf("%s: result %d has no %q", name, i, k)
				}
			}
			// The optional keys are written only where upstream had them,
			// as SearXNG writes them (2024's JSON has none of them on a
			// result without a date or an image).
			for _, k := range []string{"publishedDate", "img_src", "thumbnail"} {
				if _, ok := in[k]; !ok {
					if w, ok := outR[k]; ok {
						t.Errorf("%s: result %d gained %q = %v", name, i, k, w)
					}
				}
			}
		}
		if n, ok := up["number_of_results"]; ok && got["number_of_results"] != n {
			t.Errorf("%s: number_of_results %v, upstream %v", name, got["number_of_results"], n)
		}
	}
}

// TestRoundTrip: what AppendJSON writes, ParseJSON reads back the same,
// from JSON and from HTML.
func TestRoundTrip(t *testing.T) {
	n := 0
	for _, name := range fixtureNames(t) {
		c := loadCapture(t, name)
		for _, parse := range []func([]byte) (*results.Page, error){ParseJSON, ParseHTML} {
			r, err := parse(c.body)
			if err != nil {
				continue
			}
			n++
			out := r.AppendJSON(nil)
			back, err := ParseJSON(out)
			if err != nil {
				t.Fatalf("%s: reading back: %v\n%s", name, err, out)
			}
			if !reflect.DeepEqual(normalize(r), normalize(back)) {
				t.Errorf("%s: round trip differs:\n got %#v\nwant %#v", name, back, r)
			}
			if again := back.AppendJSON(nil); string(again) != string(out) {
				t.Errorf("%s: second write differs:\n%s\n%s", name, again, out)
			}
		}
	}
	if n < 15 {
		t.Fatalf("only %d answers round-tripped", n)
	}
}

// normalize maps what the classic shape cannot tell apart (an empty list
// and no list) to one value.
func normalize(r *results.Page) *results.Page {
	c := *r
	c.Results = nil
	for _, x := range r.Results {
		if len(x.Engines) == 0 {
			x.Engines = nil
		}
		c.Results = append(c.Results, x)
	}
	return &c
}

func TestHTTPURL(t *testing.T) {
	tests := map[string]bool{
		"http://a.example/":     true,
		"HTTPS://A.example":     true,
		"https://a.example:443": true,
		"https://":              false,
		"https:///path":         false,
		"http://a b/":           false,
		"javascript:alert(1)":   false,
		"ftp://a.example/":      false,
		"//a.example/":          false,
		"/relative":             false,
		"":                      false,
		"https://[::1":          false,
		"data:text/html,x":      false,
		"https://a.example/\n":  false,
	}
	for in, want := range tests {
		if got := httpURL(in); got != want {
			t.Errorf("httpURL(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestParseHTMLLocalizedPlaceholder: the current markup marks the empty
// content with a class, whatever the language of its text.
func TestParseHTMLLocalizedPlaceholder(t *testing.T) {
	body := strings.Replace(string(loadCapture(t, "extra/html-current.txt").body),
		"This site did not provide any description.", "Diese Seite bietet keine Beschreibung an.", 1)
	r, err := ParseHTML([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if r.Results[1].Content != "" {
		t.Errorf("localized placeholder read as content %q", r.Results[1].Content)
	}
}
