package sim

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestNoResults: a query starting with NoResultsPrefix finds nothing, the
// way real SearXNG says so (a-search-*-noresults.txt): 200, no result, no
// unresponsive engine, in JSON and HTML, and the truth counts it.
func TestNoResults(t *testing.T) {
	clock := newClock()
	f := startFleet(t, Config{InMemory: true, Now: clock.Now, Instances: []InstanceConfig{
		{ID: "sim-fast", Latency: -1, JSON: true},
		{ID: "sim-nojson", Behaviour: JSONDisabled, Latency: -1},
		{ID: "sim-limiter", Behaviour: Limiter, Latency: -1, JSON: true},
		{ID: "sim-hostile", Behaviour: Hostile, Latency: -1, JSON: true},
		{ID: "sim-offtopic", Behaviour: OffTopic, Latency: -1, JSON: true},
		{ID: "sim-down", Behaviour: EmptyEnginesDown, Latency: -1, JSON: true},
	}})
	c := memClient(f)
	realJSON := fixtureBody(t, "a-search-json-noresults.txt")
	realHTML := string(fixtureBody(t, "a-search-html-noresults.txt"))

	tests := []struct {
		id      string
		q       string
		formats []string
		nothing bool // answered with SearXNG's honest empty answer
	}{
		{"sim-fast", "noresults", []string{"json", ""}, true},
		{"sim-fast", "NoResults at all", []string{"json", ""}, true},
		{"sim-fast", "noresultsxyz", []string{"json"}, true},
		{"sim-nojson", "noresults", []string{""}, true},
		{"sim-limiter", "noresults here", []string{"json", ""}, true},
		{"sim-hostile", "noresults", []string{"json", ""}, true},
		{"sim-fast", "no results", []string{"json"}, false},
		{"sim-fast", "find noresults", []string{"json"}, false},
		{"sim-offtopic", "noresults", []string{"json"}, false},
		{"sim-down", "noresults", []string{"json"}, false},
	}
	for _, tc := range tests {
		in := f.Instance(tc.id)
		for _, format := range tc.formats {
			status, _, body := memGet(t, c, searchURL(in, tc.q, format), nil)
			if status != 200 {
				t.Fatalf("%s %q %s: status %d", tc.id, tc.q, format, status)
			}
			if format == "json" {
				var m map[string]any
				if err := json.Unmarshal(body, &m); err != nil {
					t.Fatalf("%s %q: %v", tc.id, tc.q, err)
				}
				empty := len(m["results"].([]any)) == 0 && len(m["unresponsive_engines"].([]any)) == 0
				if empty != tc.nothing {
					t.Errorf("%s %q: %d results, unresponsive %v", tc.id, tc.q, len(m["results"].([]any)), m["unresponsive_engines"])
				}
				if tc.nothing {
					want := strings.Replace(string(realJSON), `"query": "noresults"`, `"query": `+pyString(tc.q), 1)
					if string(body) != want {
						t.Errorf("%s %q: JSON\n got %s\nwant %s", tc.id, tc.q, body, want)
					}
				}
				continue
			}
			page := string(body)
			if !tc.nothing {
				continue
			}
			for _, want := range []string{`<div id="urls" role="main">`, "No results were found.", `class="dialog-error-block"`, `<div id="results" class="">`, `value="` + esc(tc.q) + `"`, `<nav id="pagination"`} {
				if !strings.Contains(page, want) {
					t.Errorf("%s %q: page lacks %q", tc.id, tc.q, want)
				}
			}
			for _, not := range []string{"<article", `class="response-error"`, `class="result `, `class="next_page"`, `id="suggestions"`} {
				if strings.Contains(page, not) {
					t.Errorf("%s %q: page has %q", tc.id, tc.q, not)
				}
			}
			if tc.q == "noresults" && tc.id != "sim-nojson" { // the capture's instance offers JSON
				real, ours := pageAttrs(resultsSection(t, realHTML)), pageAttrs(resultsSection(t, page))
				if !reflect.DeepEqual(real, ours) {
					t.Errorf("%s: the results section differs from SearXNG's:\n ours %v\n real %v", tc.id, ours, real)
				}
			}
		}
	}

	truth := f.Truth()
	for id, want := range map[string]uint64{"sim-fast": 5, "sim-nojson": 1, "sim-limiter": 2, "sim-hostile": 2, "sim-offtopic": 0, "sim-down": 0} {
		got := truth[f.Instance(id).URL()]
		if got.NoResults != want || got.Refusals != 0 || got.BotViolations != 0 {
			t.Errorf("%s: truth %+v, want %d no-results answers, no refusal", id, got, want)
		}
	}
	if got := truth[f.Instance("sim-fast").URL()]; got.Searches != 7 || got.Formats["json"] != 5 || got.Formats["html"] != 2 {
		t.Errorf("sim-fast: %d searches, formats %v", got.Searches, got.Formats)
	}

	// An ordinary search still finds its results, and is not counted.
	in := f.Instance("sim-fast")
	before := in.Truth().NoResults
	status, _, body := memGet(t, c, searchURL(in, "go channels", "json"), nil)
	var m map[string]any
	if err := json.Unmarshal(body, &m); status != 200 || err != nil || len(m["results"].([]any)) != 10 {
		t.Errorf("ordinary search: status %d, %v", status, err)
	}
	if in.Truth().NoResults != before {
		t.Errorf("an ordinary search counted as finding nothing")
	}
}

// pyString is s as Python's json.dumps writes it (ASCII queries only).
func pyString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// resultsSection is the part of a results page from div#results to the
// end of main.
func resultsSection(t *testing.T, s string) string {
	t.Helper()
	i, j := strings.Index(s, `<div id="results"`), strings.Index(s, "</main>")
	if i < 0 || j < i {
		t.Fatalf("no results section")
	}
	return s[i:j]
}

// pageAttrs is the set of ids and classes in s, but for the decorations
// the fleet leaves out (the SVG icons) and the real page's engine name.
func pageAttrs(s string) map[string]bool {
	skip := map[string]bool{"ion-icon-small": true, "ion-icon-big": true, "fakeback": true}
	out := map[string]bool{}
	for _, key := range []string{` class="`, ` id="`} {
		for rest := s; ; {
			i := strings.Index(rest, key)
			if i < 0 {
				break
			}
			rest = rest[i+len(key):]
			v, _, _ := strings.Cut(rest, `"`)
			for _, c := range strings.Fields(v) {
				if !skip[c] {
					out[strings.TrimSpace(key)+c] = true
				}
			}
		}
	}
	return out
}

// TestQueryOwnedAnswers: a query starting with ServerErrorPrefix makes
// every instance answer 500; one starting with OffTopicQueryPrefix is
// echoed as asked by every instance, with results that do not mention it
// and share no URL between instances.
func TestQueryOwnedAnswers(t *testing.T) {
	clock := newClock()
	f := startFleet(t, Config{InMemory: true, Now: clock.Now, Instances: []InstanceConfig{
		{ID: "sim-a", Latency: -1, JSON: true},
		{ID: "sim-b", Latency: -1, JSON: true},
		{ID: "sim-c", Behaviour: JSONDisabled, Latency: -1},
	}})
	c := memClient(f)
	seen := map[string]string{}
	for _, in := range f.Instances() {
		format := "json"
		if in.ID() == "sim-c" {
			format = ""
		}
		if status, _, body := memGet(t, c, searchURL(in, "servererror now", format), nil); status != 500 || !strings.Contains(string(body), "Internal Server Error") {
			t.Errorf("%s: servererror: status %d %q, want 500", in.ID(), status, body)
		}
		if format == "" {
			continue
		}
		status, _, body := memGet(t, c, searchURL(in, "offtopicquery words", "json"), nil)
		var m struct {
			Query   string `json:"query"`
			Results []struct {
				URL, Title, Content string
			} `json:"results"`
		}
		if err := json.Unmarshal(body, &m); status != 200 || err != nil || m.Query != "offtopicquery words" || len(m.Results) == 0 {
			t.Fatalf("%s: offtopicquery: status %d, %v, echo %q, %d results", in.ID(), status, err, m.Query, len(m.Results))
		}
		for _, r := range m.Results {
			if strings.Contains(strings.ToLower(r.URL+r.Title+r.Content), "offtopicquery") || strings.Contains(r.Title+r.Content, "words") {
				t.Errorf("%s: a result mentions the query: %+v", in.ID(), r)
			}
			if other, ok := seen[r.URL]; ok {
				t.Errorf("%s and %s share %s", in.ID(), other, r.URL)
			}
			seen[r.URL] = in.ID()
		}
	}
}
