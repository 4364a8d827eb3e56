package web

import (
	"html"
	"regexp"
	"strings"
	"testing"
)

// TestResultsPageLikeSearXNG: the query's words are marked in snippets
// (in any case, the syntax left out), the same search is linked as JSON,
// CSV and RSS and each link answers in its format, and the infobox and
// suggestions come before the engines' messages, in their own landmark.
func TestResultsPageLikeSearXNG(t *testing.T) {
	fs := &fakeSearch{answer: jsonAnswer(simpleAnswer, "https://up.example/")}
	_, c := serve(t, Config{Search: fs})
	r := c.get("/search?q=%3Ade+HELLO+page")
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if !strings.Contains(r.body, `A <mark>page</mark> about <mark>hello</mark>.`) {
		t.Errorf("the snippet's query words are not marked:\n%s", snippetOf(r.body))
	}
	if strings.Contains(r.body, "<mark>de</mark>") || strings.Contains(r.body, "<mark>:de</mark>") {
		t.Error("the query's syntax is marked as a word")
	}
	links := regexp.MustCompile(`<a href="(/search\?[^"]*format=(json|csv|rss)[^"]*)"`).FindAllStringSubmatch(r.body, -1)
	if len(links) != 3 {
		t.Fatalf("the page links the search in %d formats, want JSON, CSV and RSS", len(links))
	}
	want := map[string]string{"json": "application/json", "csv": "application/csv", "rss": "text/xml"}
	for _, l := range links {
		href := html.UnescapeString(l[1])
		if !strings.Contains(href, "q=%3Ade+HELLO+page") {
			t.Errorf("the %s link is not the same search: %s", l[2], href)
		}
		a := c.get(href)
		if a.status != 200 || !strings.HasPrefix(a.header["Content-Type"], want[l[2]]) {
			t.Errorf("%s: %d %s", href, a.status, a.header["Content-Type"])
		}
	}
	side := strings.Index(r.body, `<aside class="side" aria-label="More about this search">`)
	more := strings.Index(r.body, `<aside class="side more" aria-label="Engines and formats">`)
	if side < 0 || more < side || !strings.Contains(r.body[side:more], "hello kitty") || !strings.Contains(r.body[more:], "bing (timeout)") {
		t.Errorf("the suggestions and the engines' messages are not in their asides, in order: %d %d", side, more)
	}
}

// snippetOf is the page's first snippet, for a message.
func snippetOf(body string) string {
	_, s, _ := strings.Cut(body, `<p class="content"`)
	s, _, _ = strings.Cut(s, "</p>")
	return s
}

// TestHighlight: the marks cut a snippet at the query's words, longest
// first, in any case; no words, no marks.
func TestHighlight(t *testing.T) {
	for _, tt := range []struct{ query, text, want string }{
		{"hello world", "Hello, World and hello-world", "[Hello], [World] and [hello]-[world]"},
		{"go golang", "golang is Go", "[golang] is [Go]"},
		{"!ddg a", "a b", "a b"},
		{"", "plain", "plain"},
		{"x.y", "x.y and xzy", "[x.y] and xzy"},
	} {
		var b strings.Builder
		for _, p := range highlight(tt.text, queryWords(tt.query)) {
			if p.Mark {
				b.WriteString("[" + p.Text + "]")
			} else {
				b.WriteString(p.Text)
			}
		}
		if b.String() != tt.want {
			t.Errorf("%q in %q: %q, want %q", tt.query, tt.text, b.String(), tt.want)
		}
	}
}

// TestSnippetHTMLEscapes: the marked snippet is written as HTML by hand,
// so every part of it, marked or not, must come out escaped.
func TestSnippetHTMLEscapes(t *testing.T) {
	got := string(snippetHTML(highlight(`<b>bold</b> & "y" <script>`, queryWords("script bold"))))
	want := `&lt;b&gt;<mark>bold</mark>&lt;/b&gt; &amp; &#34;y&#34; &lt;<mark>script</mark>&gt;`
	if got != want {
		t.Errorf("snippetHTML:\n got %s\nwant %s", got, want)
	}
}
