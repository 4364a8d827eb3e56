package reader

import (
	"net/url"
	"os"
	"strings"
	"testing"
)

// BenchmarkExtract reduces the test article, and a long page of many
// sections, to Markdown.
func BenchmarkExtract(b *testing.B) {
	article, err := os.ReadFile("testdata/article.html")
	if err != nil {
		b.Fatal(err)
	}
	var long strings.Builder
	long.WriteString("<html><body><nav>menu</nav><main>")
	for i := range 200 {
		long.WriteString("<h2>Section</h2><p>" + strings.Repeat("Words of a long page, section after section. ", 10) + "</p>")
		if i%10 == 0 {
			long.WriteString(`<ul><li><a href="/a">a link</a></li></ul>`)
		}
	}
	long.WriteString("</main></body></html>")
	base, _ := url.Parse("https://example.org/page")
	for name, page := range map[string][]byte{"article": article, "long": []byte(long.String())} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(page)))
			for b.Loop() {
				if _, md := Extract(page, base); md == "" {
					b.Fatal("nothing extracted")
				}
			}
		})
	}
}
