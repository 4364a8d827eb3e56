package detect

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/searxgate/searxgate/results"
)

// TestNewCaptures reads the captures of query and format edge cases.
func TestNewCaptures(t *testing.T) {
	tests := []struct {
		file    string
		parse   func([]byte) (*results.Page, error)
		query   string // the echoed query
		results int
		suggest string
	}{
		{"searxng/a-search-json-bang.txt", ParseJSON, "edge bang", 10, "edge bang suggestion"},
		{"searxng/a-search-json-long-query.txt", ParseJSON, strings.Repeat("a", 3000), 10, strings.Repeat("a", 3000) + " suggestion"},
		{"searxng/a-search-format-upper-JSON.txt", ParseHTML, "hello world", 10, "hello world suggestion"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			r, err := tc.parse(loadCapture(t, tc.file).body)
			if err != nil {
				t.Fatal(err)
			}
			if r.Query != tc.query || len(r.Results) != tc.results || len(r.UnresponsiveEngines) != 0 {
				t.Fatalf("query %d bytes, %d results, unresponsive %q", len(r.Query), len(r.Results), r.UnresponsiveEngines)
			}
			if len(r.Suggestions) != 1 || r.Suggestions[0] != tc.suggest {
				t.Errorf("suggestions %q", r.Suggestions)
			}
			for i, x := range r.Results {
				if want := []int{i + 1}; !reflect.DeepEqual(x.Positions, want) || x.Score != 1/float64(i+1) {
					t.Errorf("result %d: positions %v score %v, want %v %v", i, x.Positions, x.Score, want, 1/float64(i+1))
				}
				if !reflect.DeepEqual(x.ParsedURL, results.ParsedURL(x.URL)) || !strings.Contains(x.URL, "/fake/") {
					t.Errorf("result %d: url %q parsed_url %q", i, x.URL, x.ParsedURL)
				}
			}
		})
	}
	// format=JSON is not JSON: the page is not read as such.
	if _, err := ParseJSON(loadCapture(t, "searxng/a-search-format-upper-JSON.txt").body); err == nil {
		t.Errorf("an HTML page read as JSON")
	}
}

// TestNoResults: SearXNG's honest "nothing found" reads as an empty answer
// with no engine down, in JSON and HTML alike, and is never taken for
// engines down (whether the verdict rules call it OK or Empty).
func TestNoResults(t *testing.T) {
	for _, tc := range []struct {
		file, format string
		parse        func([]byte) (*results.Page, error)
	}{
		{"searxng/a-search-json-noresults.txt", "json", ParseJSON},
		{"searxng/a-search-html-noresults.txt", "html", ParseHTML},
	} {
		t.Run(tc.format, func(t *testing.T) {
			c := loadCapture(t, tc.file)
			r, err := tc.parse(c.body)
			if err != nil {
				t.Fatal(err)
			}
			want := &results.Page{Query: "noresults", Results: []results.Result{}}
			got := *r
			if got.Results == nil {
				got.Results = []results.Result{}
			}
			if !reflect.DeepEqual(&got, want) {
				t.Errorf("read %#v, want %#v", r, want)
			}
			out := string(r.AppendJSON(nil))
			if wantJSON := `{"query":"noresults","number_of_results":0,"results":[],"answers":[],"corrections":[],"infoboxes":[],"suggestions":[],"unresponsive_engines":[]}`; out != wantJSON {
				t.Errorf("written as %s", out)
			}
			v := Classify(answerOf(c, tc.format, "noresults"))
			if v.Results == nil || len(v.Results.Results) != 0 || len(v.Results.UnresponsiveEngines) != 0 {
				t.Fatalf("verdict %s/%s without the empty results", v.Kind, v.Reason)
			}
			if v.Kind != OK || !v.Results.NothingFound() {
				t.Errorf("verdict %s/%s, want ok: an honest nothing-found", v.Kind, v.Reason)
			}
		})
	}
}

// TestHTMLPositions: a page's results are ranked 1..n in page order, with
// SearXNG's score for one engine's result at that rank; a result dropped
// for its URL takes no rank. A second page starts again at 1, as
// SearXNG's own JSON does (its positions are the engines' ranks on the
// page asked).
func TestHTMLPositions(t *testing.T) {
	page := string(grownHTML(t, 12))
	// The third result's links become javascript: ones.
	page = strings.ReplaceAll(page, "http://127.0.0.1/fake/2/hello-world", "javascript:alert(1)")
	r, err := ParseHTML([]byte(page))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Results) != 11 {
		t.Fatalf("%d results, want 11", len(r.Results))
	}
	for i, x := range r.Results {
		if len(x.Positions) != 1 || x.Positions[0] != i+1 || x.Score != 1/float64(i+1) {
			t.Errorf("result %d (%s): positions %v score %v", i, x.URL, x.Positions, x.Score)
		}
	}
	if r.Results[2].URL != "http://127.0.0.1/fake/3/hello-world" {
		t.Errorf("third result %s", r.Results[2].URL)
	}
	j, err := ParseJSON(loadCapture(t, "searxng/a-search-json-page2.txt").body)
	if err != nil {
		t.Fatal(err)
	}
	if got := j.Results[0].Positions; !reflect.DeepEqual(got, []int{1}) || j.Results[0].Score != 1 {
		t.Errorf("SearXNG's page 2 starts at %v (score %v)", got, j.Results[0].Score)
	}
}

func TestRankScore(t *testing.T) {
	// searx/results.py calculate_score for one engine of weight 1 and one
	// position, as the captured JSON answers show.
	for rank, want := range map[int]float64{1: 1, 2: 0.5, 3: 0.3333333333333333, 4: 0.25, 10: 0.1} {
		if got := rankScore(rank); got != want {
			t.Errorf("rankScore(%d) = %v, want %v", rank, got, want)
		}
	}
}

func TestStripBidi(t *testing.T) {
	tests := map[string]string{
		"":                               "",
		"plain text":                     "plain text",
		"evil\u202egpj.exe":              "evilgpj.exe",
		"\u202a\u202b\u202c\u202d\u202e": "",
		"\u2066a\u2067b\u2068c\u2069":    "abc",
		"\u200eleft\u200fright\u061c":    "leftright",
		"ü – “quotes” … \u2028 日本":       "ü – “quotes” … \u2028 日本", // other E2 80 xx and D8 runes stay
		"عربي":                           "عربي",
		"bad \xe2A\xaa utf8 \xd8":        "bad \xe2A\xaa utf8 \xd8",
	}
	for in, want := range tests {
		if got := StripBidi(in); got != want {
			t.Errorf("StripBidi(%q) = %q, want %q", in, got, want)
		}
		if hasBidi(want) {
			t.Errorf("hasBidi(%q) after stripping", want)
		}
	}
	for _, r := range []rune{0x202a, 0x202e, 0x2066, 0x2069, 0x200e, 0x200f, 0x061c} {
		if !IsBidiControl(r) || !hasBidi("x"+string(r)+"y") {
			t.Errorf("U+%04X not a bidi control", r)
		}
	}
	for _, r := range []rune{0x2029, 0x202f, 0x2065, 0x206a, 0x200d, 0x200b, 'a'} {
		if IsBidiControl(r) {
			t.Errorf("U+%04X taken for a bidi control", r)
		}
	}
}

// hostileJSON is an answer whose every field tries something.
const hostileJSON = `{"query": "hello\u202e world", "number_of_results": 3,
 "results": [
  {"url": "https://ok.example/a", "title": "Hello \u202edlrow\u202c", "content": "world \u2066isolated\u2069",
   "engine": "e\u200f", "engines": ["e\u202d1", "e2"], "category": "gen\u061ceral", "template": "default.html",
   "parsed_url": ["https", "evil.example", "/spoofed", "", "", ""],
   "thumbnail": "javascript:alert(1)", "img_src": "data:image/png;base64,AAAA", "iframe_src": "vbscript:msgbox(1)",
   "thumbnail_src": "JAVASCRIPT:alert(2)", "audio_src": "https://ok.example/a.mp3", "magnetlink": "magnet:?xt=urn:btih:abc",
   "torrentfile": "/relative/file.torrent", "favicon": {"src": "javascript:alert(3)", "alt": "x\u202ey", "deep": {"url": "https://ok.example/f"}},
   "author": "A\u202eB", "links": [{"url": "data:text/html,x"}, {"href": "//no.scheme/x"}, {"link": "https://ok.example/l"}],
   "publishedDate": "2024\u202e-01-01"},
  {"url": "https://ok.example/b\u202e/x", "title": "bidi in the url"},
  {"url": "javascript:alert(4)", "title": "dropped"},
  {"url": "/relative", "title": "dropped"},
  {"url": "https:///no-host", "title": "dropped"},
  {"url": "https://ok.example/c", "title": "kept", "img_src": "/image_proxy?url=x", "thumbnail": "//cdn.example/t.jpg"}
 ],
 "answers": ["4\u202e2", {"answer": "linked", "url": "javascript:alert(5)"}],
 "corrections": ["c\u2067"], "suggestions": ["s\u200e"],
 "infoboxes": [{"infobox": "Box\u202e", "id": "https://id.example/\u202e", "content": "c\u202e", "img_src": "javascript:alert(6)",
   "urls": [{"title": "T\u202e", "url": "https://ok.example/u", "official": true}, {"title": "bad", "url": "data:,x"}],
   "attributes": [{"label": "L\u202e", "value": "V\u2066", "image": {"src": "javascript:alert(7)", "alt": "a"}}],
   "engine": "wikidata", "engines": ["wikidata\u202e"]}],
 "unresponsive_engines": [["eng\u202e", "timeout\u2069"]]}`

func TestSanitizeJSON(t *testing.T) {
	r, err := ParseJSON([]byte(hostileJSON))
	if err != nil {
		t.Fatal(err)
	}
	if r.Query != "hello world" || len(r.Results) != 2 {
		t.Fatalf("query %q, %d results", r.Query, len(r.Results))
	}
	x := r.Results[0]
	want := results.Result{
		URL: "https://ok.example/a", Title: "Hello dlrow", Content: "world isolated", Engine: "e",
		Engines: []string{"e1", "e2"}, Category: "general", Template: "default.html",
		ParsedURL:     []string{"https", "ok.example", "/a", "", "", ""},
		PublishedDate: "2024-01-01",
	}
	extra := x.Extra
	x.Extra = nil
	if !reflect.DeepEqual(x, want) {
		t.Errorf("result\n got %#v\nwant %#v", x, want)
	}
	wantExtra := map[string]string{
		"audio_src":  `"https://ok.example/a.mp3"`,
		"magnetlink": `"magnet:?xt=urn:btih:abc"`,
		"favicon":    `{"src":"","alt":"xy","deep":{"url":"https://ok.example/f"}}`,
		"author":     `"AB"`,
		"links":      `[{"url":""},{"href":""},{"link":"https://ok.example/l"}]`,
	}
	gotExtra := map[string]string{}
	for k, v := range extra {
		gotExtra[k] = string(v)
	}
	if !reflect.DeepEqual(gotExtra, wantExtra) {
		t.Errorf("extra\n got %v\nwant %v", gotExtra, wantExtra)
	}
	if c := r.Results[1]; c.URL != "https://ok.example/c" || c.ImgSrc != "" || c.Thumbnail != "" {
		t.Errorf("relative image links passed on: %#v", c)
	}
	if want := []string{"42", "linked"}; !reflect.DeepEqual(results.ClassicAnswers(r.Answers), want) {
		t.Errorf("answers %q, want %q", r.Answers, want)
	}
	if r.Corrections[0] != "c" || r.Suggestions[0] != "s" || r.UnresponsiveEngines[0] != [2]string{"eng", "timeout"} {
		t.Errorf("corrections %q suggestions %q unresponsive %q", r.Corrections, r.Suggestions, r.UnresponsiveEngines)
	}
	b := r.Infoboxes[0]
	if b.Infobox != "Box" || b.ID != "https://id.example/" || b.Content != "c" || b.ImgSrc != "" || b.Engines[0] != "wikidata" {
		t.Errorf("infobox %#v", b)
	}
	if len(b.URLs) != 1 || b.URLs[0].Title != "T" || string(b.URLs[0].Extra["official"]) != "true" {
		t.Errorf("infobox urls %#v", b.URLs)
	}
	if a := b.Attributes[0]; a.Label != "L" || a.Value != "V" || string(a.Extra["image"]) != `{"src":"","alt":"a"}` {
		t.Errorf("infobox attribute %#v (image %s)", a, a.Extra["image"])
	}
	out := r.AppendJSON(nil)
	checkBounded(t, out, len(hostileJSON))
	for _, bad := range []string{"javascript", "JAVASCRIPT", "data:", "vbscript", "evil.example", "spoofed", "/relative", "image_proxy"} {
		if strings.Contains(string(out), bad) {
			t.Errorf("%q written: %s", bad, out)
		}
	}
}

// hostileHTML is a results page whose every part tries something.
const hostileHTML = `<html><body><input id="q" value="hello &#x202E;world">
<div id="results"><div id="urls">
<article class="result result-default category-general"><a class="url_header" href="https://ok.example/a">x</a>
 <h3>Hello &#x202E;dlrow&#x202C;</h3><p class="content">world &#x2066;isolated&#x2069;</p>
 <img class="thumbnail" src="javascript:alert(1)"><img class="image" src="data:image/png;base64,AAAA">
 <iframe data-src="vbscript:x"></iframe><time class="published_date" datetime="2024&#x200F;-01-01"></time>
 <div class="engines"><span>brave&#x202E;</span></div></article>
<article class="result result-default"><a class="url_header" href="https://ok.example/b">b</a><h3>b</h3>
 <img class="thumbnail" src="/image_proxy?url=https%3A%2F%2Fimg.example%2Fb.jpg"><iframe src="https://player.example/embed/1"></iframe></article>
<article class="result result-images"><a href="javascript:alert(2)"><img class="image_thumbnail" src="https://img.example/t.jpg"></a><h4>dropped</h4></article>
<article class="result result-default"><a class="url_header" href="https://ok.example/&#x202E;gpj.exe">dropped</a><h3>dropped</h3></article>
</div>
<div id="answers"><div class="answer"><span>4&#x202E;2</span><a class="answer-url" href="javascript:alert(3)">x</a></div></div>
<div id="infoboxes"><aside class="infobox"><h2>Box&#x202E;</h2><img src="javascript:alert(4)"><p>about</p>
 <div class="urls"><a href="data:,x">bad</a><a href="https://ok.example/u">Good&#x2067;</a></div>
 <div class="attributes"><dl><dt>L&#x202E;:</dt><dd>V</dd></dl></div></aside></div>
<div id="engines_msg"><table><tr><td class="engine-name">g&#x202E;</td><td class="response-error">timeout&#x2069;</td></tr></table></div>
</div></body></html>`

func TestSanitizeHTML(t *testing.T) {
	page := hostileHTML
	r, err := ParseHTML([]byte(page))
	if err != nil {
		t.Fatal(err)
	}
	if r.Query != "hello world" || len(r.Results) != 2 {
		t.Fatalf("query %q, %d results", r.Query, len(r.Results))
	}
	a := r.Results[0]
	if a.Title != "Hello dlrow" || a.Content != "world isolated" || a.Thumbnail != "" || a.ImgSrc != "" || a.IframeSrc != "" ||
		a.PublishedDate != "2024-01-01" || a.Engine != "brave" || a.Engines[0] != "brave" {
		t.Errorf("first result %#v", a)
	}
	if b := r.Results[1]; b.Thumbnail != "" || b.IframeSrc != "https://player.example/embed/1" || b.Positions[0] != 2 || b.Score != 0.5 {
		t.Errorf("second result %#v", b)
	}
	if !reflect.DeepEqual(results.ClassicAnswers(r.Answers), []string{"42"}) {
		t.Errorf("answers %q", r.Answers)
	}
	ib := r.Infoboxes[0]
	if ib.Infobox != "Box" || ib.ImgSrc != "" || len(ib.URLs) != 1 || ib.URLs[0].Title != "Good" || ib.Attributes[0].Label != "L" {
		t.Errorf("infobox %#v", ib)
	}
	if r.UnresponsiveEngines[0] != [2]string{"g", "timeout"} {
		t.Errorf("unresponsive %q", r.UnresponsiveEngines)
	}
	out := r.AppendJSON(nil)
	checkBounded(t, out, len(page))
	for _, bad := range []string{"javascript", "data:", "vbscript", "image_proxy", "gpj"} {
		if strings.Contains(string(out), bad) {
			t.Errorf("%q written: %s", bad, out)
		}
	}
}

// TestExtraLimits: unknown fields are kept within depth, size and count;
// an answer nested too deep is not read at all.
func TestExtraLimits(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("[", n) + "1" + strings.Repeat("]", n) }
	answer := func(fields string) string {
		return `{"query": "q", "results": [{"url": "https://ok.example/", "title": "q"` + fields + `}]}`
	}
	tests := []struct {
		name   string
		fields string
		keep   []string // extra keys kept
	}{
		{"depth at the cap", `, "a": ` + nest(MaxExtraDepth), []string{"a"}},
		{"depth over the cap", `, "a": ` + nest(MaxExtraDepth+1) + `, "b": 1`, []string{"b"}},
		{"objects over the cap", `, "a": ` + strings.Repeat(`{"k":`, MaxExtraDepth+1) + "1" + strings.Repeat("}", MaxExtraDepth+1), nil},
		{"size at the cap", `, "a": "` + strings.Repeat("x", MaxExtraBytes-2) + `"`, []string{"a"}},
		{"size over the cap", `, "a": "` + strings.Repeat("x", MaxExtraBytes-1) + `"`, nil},
		{"escapes count as written", `, "a": "` + strings.Repeat("<", MaxExtraBytes/6+1) + `"`, nil},
		{"many small values", `, "a": [` + strings.TrimSuffix(strings.Repeat("1,", MaxExtraBytes), ",") + `]`, nil},
		{"name too long", `, "` + strings.Repeat("k", 65) + `": 1, "` + strings.Repeat("k", 64) + `": 1`, []string{strings.Repeat("k", 64)}},
		{"bidi in a name", `, "ti\u202etle": 1, "ok": 2`, []string{"ok"}},
		{"empty name", `, "": 1`, nil},
		{"url field not a string", `, "thumbnail_src": {"a": 1}, "icon_url": 5`, nil},
		{"known field of another type", `, "score": "high", "positions": "3"`, []string{"positions", "score"}},
		{"spoofed parsed_url of another type", `, "parsed_url": "https://evil.example/"`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := answer(tc.fields)
			r, err := ParseJSON([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Results) != 1 {
				t.Fatalf("%d results", len(r.Results))
			}
			var keys []string
			for k := range r.Results[0].Extra {
				keys = append(keys, k)
			}
			if !sameSet(keys, tc.keep) {
				t.Errorf("extra keys %q, want %q", keys, tc.keep)
			}
			checkBounded(t, r.AppendJSON(nil), len(body))
		})
	}
	t.Run("infobox links of another shape", func(t *testing.T) {
		r, err := ParseJSON([]byte(`{"query": "q", "results": [], "infoboxes": [{"infobox": "b", "urls": "javascript:alert(1)", "attributes": "text"}, {"infobox": "c", "urls": [{"url": "https://ok.example/"}, "javascript:alert(2)"]}]}`))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range r.Infoboxes {
			if _, ok := b.Extra["urls"]; ok || b.URLs != nil {
				t.Errorf("infobox %s: urls %v, extra %s", b.Infobox, b.URLs, b.Extra["urls"])
			}
		}
		if string(r.Infoboxes[0].Extra["attributes"]) != `"text"` {
			t.Errorf("attributes of another type: %s", r.Infoboxes[0].Extra["attributes"])
		}
	})
	t.Run("count", func(t *testing.T) {
		var b strings.Builder
		for i := range MaxExtraKeys + 10 {
			fmt.Fprintf(&b, `, "k%02d": %d`, i, i)
		}
		r, err := ParseJSON([]byte(answer(b.String())))
		if err != nil {
			t.Fatal(err)
		}
		if x := r.Results[0].Extra; len(x) != MaxExtraKeys || x["k00"] == nil || x[fmt.Sprintf("k%02d", MaxExtraKeys-1)] == nil {
			t.Errorf("%d extra keys kept", len(x))
		}
	})
	for _, depth := range []int{maxJSONDepth + 1, 200000} {
		t.Run(fmt.Sprintf("document nested %d deep", depth), func(t *testing.T) {
			body := answer(`, "a": ` + nest(depth))
			if _, err := ParseJSON([]byte(body)); err == nil {
				t.Fatalf("read")
			}
			v := Classify(Answer{Status: 200, Body: []byte(body), Format: "json", Query: ParseQuery("q"), Now: fixtureNow})
			if v.Kind != Failed || v.Reason != BadBody {
				t.Errorf("verdict %s/%s", v.Kind, v.Reason)
			}
		})
	}
	t.Run("brackets in strings do not count", func(t *testing.T) {
		body := answer(`, "a": "` + strings.Repeat("[{", 200) + `"`)
		r, err := ParseJSON([]byte(body))
		if err != nil || len(r.Results) != 1 {
			t.Fatalf("%v", err)
		}
	})
}

func sameSet(a, b []string) bool {
	m := map[string]int{}
	for _, s := range a {
		m[s]++
	}
	for _, s := range b {
		m[s]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return true
}

func TestTooDeep(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want bool
	}{
		{`[[1]]`, 2, false},
		{`[[[1]]]`, 2, true},
		{`{"a":{"b":[1]}}`, 3, false},
		{`{"a":{"b":[[1]]}}`, 3, true},
		{`["[[[[", "\"[[[["]`, 1, false},
		{`[1],[2],[3],[4]`, 1, false},
		{`]]]]][[[`, 2, true},
	}
	for _, tc := range tests {
		if got := tooDeep([]byte(tc.in), tc.max); got != tc.want {
			t.Errorf("tooDeep(%s, %d) = %v", tc.in, tc.max, got)
		}
	}
}

// checkBounded asserts what every written answer promises its clients:
// valid JSON, nested at most MaxExtraDepth below the deepest known
// field, every unknown field within MaxExtraBytes, only http(s) links in
// URL fields, no bidirectional controls, and a size bounded by the input.
func checkBounded(t *testing.T, out []byte, inLen int) {
	t.Helper()
	if !json.Valid(out) {
		t.Fatalf("invalid JSON: %s", out)
	}
	if max := maxWrittenDepth(); jsonDepth(out, math.MaxInt) > max {
		t.Fatalf("written %d deep, cap %d", jsonDepth(out, math.MaxInt), max)
	}
	// A page's text may be read into several fields at once (a title that
	// holds the content and the engine names) and "<" is written as
	// \u003c: 48 times the input is a bound no answer reaches.
	if len(out) > 48*inLen+4096 {
		t.Fatalf("%d bytes written from %d", len(out), inLen)
	}
	if hasBidi(string(out)) {
		t.Fatalf("bidi control written: %q", out)
	}
	var doc struct {
		Results []map[string]json.RawMessage `json:"results"`
		Infob   []map[string]json.RawMessage `json:"infoboxes"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, x := range doc.Results {
		checkObject(t, x, true)
	}
	for _, b := range doc.Infob {
		checkObject(t, b, false)
		for _, list := range []string{"urls", "attributes"} {
			var items []map[string]json.RawMessage
			_ = json.Unmarshal(b[list], &items)
			for _, it := range items {
				checkObject(t, it, false)
			}
		}
	}
}

// knownKeys are the fields AppendJSON writes itself; every other key is
// an unknown field.
var knownKeys = map[string]bool{
	"url": true, "title": true, "content": true, "engine": true, "parsed_url": true, "template": true,
	"engines": true, "positions": true, "publishedDate": true, "score": true, "category": true,
	"thumbnail": true, "img_src": true, "iframe_src": true, "infobox": true, "id": true,
	"urls": true, "attributes": true, "label": true, "value": true,
}

// checkObject checks one written result, infobox, link or attribute.
func checkObject(t *testing.T, m map[string]json.RawMessage, result bool) {
	t.Helper()
	for k, v := range m {
		if !knownKeys[k] && len(v) > MaxExtraBytes {
			t.Fatalf("unknown field %q of %d bytes", k, len(v))
		}
		if !knownKeys[k] && jsonDepth(v, math.MaxInt) > MaxExtraDepth {
			t.Fatalf("unknown field %q %d deep", k, jsonDepth(v, math.MaxInt))
		}
		if !knownKeys[k] {
			walkURLs(t, k, v)
		}
	}
	for _, k := range []string{"url", "thumbnail", "img_src", "iframe_src"} {
		var s string
		if v, ok := m[k]; ok && json.Unmarshal(v, &s) == nil && s != "" && !httpURL(s) {
			t.Fatalf("%q: %q passed on", k, s)
		}
	}
	if result {
		var u string
		var p []string
		if json.Unmarshal(m["url"], &u) != nil || !httpURL(u) {
			t.Fatalf("result url %s", m["url"])
		}
		if json.Unmarshal(m["parsed_url"], &p) != nil || !reflect.DeepEqual(p, results.ParsedURL(u)) {
			t.Fatalf("parsed_url %s of %q", m["parsed_url"], u)
		}
	}
}

// walkURLs fails on a string under a URL-named key, at any depth, that is
// neither empty nor an http(s) link (nor a magnet link as magnetlink).
func walkURLs(t *testing.T, k string, v json.RawMessage) {
	t.Helper()
	var s string
	if json.Unmarshal(v, &s) == nil {
		if urlKey(k) && s != "" && !httpURL(s) && !(k == "magnetlink" && strings.HasPrefix(strings.ToLower(s), "magnet:?")) {
			t.Fatalf("%q: %q passed on", k, s)
		}
		return
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(v, &obj) == nil {
		for k2, v2 := range obj {
			walkURLs(t, k2, v2)
		}
		return
	}
	var arr []json.RawMessage
	if json.Unmarshal(v, &arr) == nil {
		for _, e := range arr {
			walkURLs(t, k, e)
		}
	}
}

// maxWrittenDepth is the deepest a written answer may nest: an unknown
// field of an infobox link or attribute (root, infoboxes, infobox, urls,
// link) plus its own MaxExtraDepth.
func maxWrittenDepth() int { return 5 + MaxExtraDepth }
