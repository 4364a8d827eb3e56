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
