package reader

import (
	"net/url"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzExtract feeds any body to the HTML reduction: it must not panic, its
// output must be valid UTF-8 (after the reader's decoding) and bounded by
// what came in.
func FuzzExtract(f *testing.F) {
	article, err := os.ReadFile("testdata/article.html")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(article)
	f.Add([]byte("<p>hello <a href='/x'>x</a></p>"))
	f.Add([]byte("<table><tr><td>a<td>b</table><pre>```\ncode</pre>"))
	f.Add([]byte(strings.Repeat("<div>", 500) + "deep"))
	f.Add([]byte("<img src=a><img src=b><a href=c></a>"))
	f.Add([]byte("\xff\xfe<\x00p>"))
	f.Add([]byte("<p>a &lt; b &gt; c \uE000\uE001 &lt;div&gt;</p><pre class='language-go'>x &lt; y</pre><div class='ad'>AD</div>"))
	base, _ := url.Parse("https://e.org/p")
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > 1<<16 {
			return
		}
		body = toUTF8(body, "text/html; charset=utf-8", true)
		title, md := Extract(body, base)
		if !utf8.ValidString(md) || !utf8.ValidString(title) {
			t.Fatalf("invalid UTF-8 out")
		}
		if len(md) > 16*len(body)+4096 || len(title) > len(body)+16 {
			t.Fatalf("output %d bytes (title %d) from %d", len(md), len(title), len(body))
		}
		p := &Page{Markdown: md}
		_ = Headings(md)
		if _, err := View(p, Request{StartChar: len(body) % 7, MaxLength: 5}); err != nil && md != "" && utf8.RuneCountInString(md) > 7 {
			t.Fatalf("view: %v", err)
		}
	})
}

// FuzzParagraphs cuts any Markdown by any paragraph range: no panic, and
// what comes out is paragraphs of what went in.
func FuzzParagraphs(f *testing.F) {
	f.Add("# T\n\npara one\n\n```\ncode\n\nmore\n```\n\nlast", "2-3")
	f.Add("a\n\nb", "10-")
	f.Add("", "1")
	f.Add("x", "-")
	f.Fuzz(func(t *testing.T, md, rng string) {
		if len(md) > 1<<14 || len(rng) > 64 {
			return
		}
		paras := Paragraphs(md)
		for _, p := range paras {
			if strings.TrimSpace(p) == "" || !strings.Contains(md, p) {
				t.Fatalf("paragraph %q is not of the input", p)
			}
		}
		res, err := View(&Page{Markdown: md}, Request{ParagraphRange: rng})
		if err != nil {
			return
		}
		if strings.TrimSpace(rng) != "" && res.TotalParagraphs != len(paras) {
			t.Fatalf("total %d, want %d", res.TotalParagraphs, len(paras))
		}
	})
}
