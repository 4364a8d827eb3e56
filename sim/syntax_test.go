package sim

import (
	"strings"
	"testing"
)

// TestQuerySyntaxIsNotEchoed: as real SearXNG (its JSON echoes "!fb edge
// bang" as "edge bang", shared/fixtures/searxng/a-search-json-bang.txt),
// the fleet's JSON echoes, and its engines search, the query without the
// syntax it knows; the HTML page's box shows the query as typed and its
// suggestions keep the syntax.
func TestQuerySyntaxIsNotEchoed(t *testing.T) {
	f := startFleet(t, Config{Instances: []InstanceConfig{{Latency: -1, JSON: true}}})
	in := f.Instances()[0]
	engines, _ := get(t, in.URL()+"config", nil).json(t)["engines"].([]any)
	if len(engines) < 2 {
		t.Fatalf("/config lists %v", engines)
	}
	name0 := engines[0].(map[string]any)["name"].(string)
	short1 := engines[1].(map[string]any)["shortcut"].(string)
	for _, tc := range []struct{ q, echo string }{
		{"hello world", "hello world"},
		{"  hello   world ", "hello world"},
		{":de hello world", "hello world"},
		{"hello :de-CH world", "hello world"},
		{":DE_ch hello", "hello"},
		{":auto hello", "hello"},
		{"<3 hello", "hello"},
		{"<850 hello", "hello"},
		{"!" + short1 + " hello", "hello"},        // an engine's shortcut
		{"!" + name0 + " hello", "hello"},         // an engine's name
		{"!General hello", "hello"},               // a category, any case
		{"!! hello", "hello"},                     // feeling lucky, for JSON
		{":de <3 !" + short1 + " hello", "hello"}, // all of it
		{"!fb edge bang", "!fb edge bang"},        // an engine it does not run: a word
		{"!!zz hello", "!!zz hello"},              // an external bang it does not know
		{":german hello", ":german hello"},        // a name: the sim knows codes only
		{"<3s hello", "<3s hello"},
		{"<", "<"},
		{"! hello", "! hello"},
		{": hello", ": hello"},
		{"hello!go", "hello!go"},
	} {
		m := get(t, searchURL(in, tc.q, "json"), nil).json(t)
		if m["query"] != tc.echo {
			t.Errorf("%q: JSON echoes %q, SearXNG %q", tc.q, m["query"], tc.echo)
		}
		sugs, _ := m["suggestions"].([]any)
		if len(sugs) == 0 || sugs[0] != tc.echo+" tutorial" {
			t.Errorf("%q: suggestions %v, want of %q", tc.q, sugs, tc.echo)
		}
		rs, _ := m["results"].([]any)
		if len(rs) == 0 || !strings.HasPrefix(rs[0].(map[string]any)["title"].(string), tc.echo+":") {
			t.Errorf("%q: results %v, want about %q", tc.q, rs, tc.echo)
		}
	}
	page := string(get(t, searchURL(in, ":de hello world", ""), nil).body)
	for _, want := range []string{
		`name="q" type="text"`,
		`value=":de hello world"`, // the box, as typed
		`<input type="hidden" name="q" value=":de hello world tutorial">`, // a suggestion with the syntax
		`value="&bull; hello world tutorial"`,                             // shown without
		`<span class="highlight">hello</span>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the HTML page for :de hello world lacks %q", want)
		}
	}
	if strings.Contains(page, `<span class="highlight">:de</span>`) {
		t.Error("the HTML page highlights the syntax")
	}
}
