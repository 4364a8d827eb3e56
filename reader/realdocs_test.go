package reader

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// realDocs are the HTML manuals Debian packages install, by their
// generators: DocBook (valgrind, libxslt's xsltproc and tutorials, xtrans,
// shared-mime-info), Sphinx (Python's policy), groff's -Thtml, texinfo
// (libffi), hand-written (expat), Node.js's own.
var realDocs = []string{
	"/usr/share/doc/valgrind/html/*.html",
	"/usr/share/doc/python3/*.html",
	"/usr/share/doc/libxslt1-dev/html/xsltproc.html",
	"/usr/share/doc/libxslt1-dev/html/tutorial*/*.html",
	"/usr/share/doc/xtrans-dev/*.html",
	"/usr/share/doc/shared-mime-info/*/*.html",
	"/usr/share/doc/groff-base/html/*.html",
	"/usr/share/doc/libffi8/html/*.html",
	"/usr/share/doc/libexpat1-dev/*/*.html",
	"/usr/share/doc/debian-reference-common/docs/*.en.html",
	"/usr/share/doc/nodejs/api/*.html",
}

// shortDocs are the pages still read short of 97 %, where readability
// leaves a part out: Node.js's API pages (their "History" tables, and
// whole sections of a long page), xsltproc's link-heavy SEE ALSO, the
// author block of shared-mime-info's title page. Their share is logged,
// not enforced, until it is not.
var shortDocs = regexp.MustCompile(`^/usr/share/doc/(?:nodejs/|libxslt1-dev/html/xsltproc\.html|shared-mime-info/[^/]+/index\.html)`)

// emptyLink is a Markdown link without text (not C++'s lambda, [](…)).
var emptyLink = regexp.MustCompile(`(?:^|[^!])\[\]\((?:https?|mailto):`)

// maxRealDoc skips the largest pages (Node.js's all.html), for time.
const maxRealDoc = 600 << 10

// TestRealDocs reads the HTML manuals installed on this machine and
// compares each with the page's own visible text: at least 97 % of its
// words are read, and no link is empty.
func TestRealDocs(t *testing.T) {
	if testing.Short() {
		t.Skip("reads some 150 manuals (about 10 s, a minute under -race); not with -short")
	}
	var files []string
	for _, g := range realDocs {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Skip("no Debian HTML manuals under /usr/share/doc on this machine (install valgrind, nodejs-doc or python3 to test on them)")
	}
	slices.Sort(files)
	read := 0
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil || len(body) > maxRealDoc || len(body) < 2048 {
			continue
		}
		body = toUTF8(body, "text/html", true)
		u := &url.URL{Scheme: "https", Host: "docs.example.org", Path: f}
		_, md := Extract(body, u)
		want := visibleWords(t, body)
		if len(want) < 50 {
			continue // an index of frames, a redirect
		}
		read++
		got := wordCounts(md)
		missing := 0
		var lost []string
		for w, n := range want {
			if k := min(n, got[w]); k < n {
				missing += n - k
				if len(lost) < 30 {
					lost = append(lost, w)
				}
			}
		}
		total := 0
		for _, n := range want {
			total += n
		}
		share := 1 - float64(missing)/float64(total)
		if share < 0.97 && !shortDocs.MatchString(f) {
			t.Errorf("%s: %.1f%% of its %d words read; lost %q", f, 100*share, total, lost)
		}
		if emptyLink.MatchString(md) {
			t.Errorf("%s: an empty link", f)
		}
		t.Logf("%s: %.1f%%", f, 100*share)
	}
	t.Logf("%d pages read", read)
}

// visibleWords counts the words of the page's visible text: its body
// without scripts, styles, navigation, forms and hidden elements.
func visibleWords(t *testing.T, body []byte) map[string]int {
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	var visit func(*html.Node)
	visit = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
			b.WriteByte(' ')
			return
		}
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.Head, atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Nav, atom.Form, atom.Button,
				atom.Select, atom.Textarea, atom.Svg:
				return
			}
			role := attr(n, "role")
			st := strings.ReplaceAll(attr(n, "style"), " ", "")
			if role == "navigation" || role == "search" || hasAttr(n, "hidden") || attr(n, "aria-hidden") == "true" ||
				strings.Contains(st, "display:none") || siteNav(n) {
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c)
		}
	}
	visit(docRoot(doc))
	return wordCounts(b.String())
}

// docRoot is where a generator writes the page's own text: Node.js's
// #apicontent, Sphinx's role=main, else the body.
func docRoot(doc *html.Node) *html.Node {
	var byID, main *html.Node
	walk(doc, func(n *html.Node) bool {
		if n.Type == html.ElementNode {
			if byID == nil && attr(n, "id") == "apicontent" {
				byID = n
			}
			if main == nil && attr(n, "role") == "main" {
				main = n
			}
		}
		return true
	})
	switch {
	case byID != nil:
		return byID
	case main != nil:
		return main
	}
	return doc
}

// siteNav reports whether n is a generator's navigation between pages,
// by the class names they give it: texinfo's header and nav-panel,
// DocBook's navheader, navfooter and nav tables, tables of contents,
// Sphinx's related and sidebar bars.
func siteNav(n *html.Node) bool {
	for _, c := range strings.Fields(strings.ToLower(attr(n, "class"))) {
		switch c {
		case "header", "nav-panel", "navheader", "navfooter", "nav", "toc", "related", "sphinxsidebar", "contents":
			return true
		}
	}
	return false
}

// wordCounts counts the words (runs of letters and digits, lower case) of s.
func wordCounts(s string) map[string]int {
	out := map[string]int{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		out[w]++
	}
	return out
}
