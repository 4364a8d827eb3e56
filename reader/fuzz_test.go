package reader

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"
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

// FuzzPDF feeds any bytes to the PDF reader: whatever the library does with
// them, it must not panic, and what comes out must be valid UTF-8, within
// the text limit, with as many pages read as the file has at most.
func FuzzPDF(f *testing.F) {
	paper, err := os.ReadFile("testdata/corpus/paper.pdf")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(paper)
	f.Add(paper[:len(paper)/2])
	f.Add(textPages(2).bytes())
	f.Add([]byte("%PDF-1.4\n%%EOF\n"))
	f.Add([]byte("%PDF-1.7\nstartxref\n0\n%%EOF"))
	lim := pdfLimits{Pages: 5, Chars: 2000, Time: 2 * time.Second}
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > 1<<16 {
			return
		}
		doc, err := extractPDF(context.Background(), body, lim, time.Now)
		if err != nil {
			return
		}
		if !utf8.ValidString(doc.Markdown) || !utf8.ValidString(doc.Title) || !utf8.ValidString(doc.Author) {
			t.Fatalf("invalid UTF-8 out")
		}
		if utf8.RuneCountInString(doc.Markdown) > lim.Chars || doc.Read > lim.Pages || doc.Read > doc.Total {
			t.Fatalf("%d characters, %s", utf8.RuneCountInString(doc.Markdown), doc.pages())
		}
		_ = Headings(doc.Markdown)
		_ = Paragraphs(doc.Markdown)
	})
}
