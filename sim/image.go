package sim

import (
	"bytes"
	"html"
	"image"
	"image/color"
	"image/png"
	"strconv"
	"strings"
)

// simImage is the PNG at path (/sim/img/<n>.png): a small picture of two
// colours that differ with n, so that a grid of them can be told apart.
func simImage(path string) []byte {
	n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(path, "/sim/img/"), ".png"))
	const w, h = 96, 72
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	a := color.RGBA{uint8(40 + 37*n%200), uint8(90 + 53*n%150), uint8(160 + 29*n%90), 255}
	b := color.RGBA{a.B, a.R, a.G, 255}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := a
			if x+y > (w+h)/2+(n%5-2)*8 {
				c = b
			}
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img)
	return buf.Bytes()
}

// simPage is the page at path (/sim/page/<id>/<query-slug>/<n>): a short
// article about the query, with a title, headings and paragraphs, such as
// a page reader extracts.
func simPage(path string) []byte {
	parts := strings.Split(strings.TrimPrefix(path, "/sim/page/"), "/")
	for len(parts) < 3 {
		parts = append(parts, "")
	}
	id, n := html.EscapeString(parts[0]), html.EscapeString(parts[2])
	q := html.EscapeString(strings.ReplaceAll(parts[1], "-", " "))
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>` + q + `: result ` + n + `</title>` +
		`<meta name="author" content="` + id + `"></head><body><nav><a href="/">Home</a></nav><main><article>` +
		`<h1>` + q + `: result ` + n + `</h1>`)
	for i, h := range []string{"Overview", "Details", "Further reading"} {
		b.WriteString(`<h2>` + h + `</h2>`)
		for j := range 2 {
			b.WriteString(`<p>Paragraph ` + strconv.Itoa(2*i+j+1) + ` of result ` + n + ` about ` + q +
				`, a page the simulated instance ` + id + ` serves on loopback so that a page reader has something to read. ` +
				`It says nothing true about ` + q + `, at some length, so that it reads as an article.</p>`)
		}
	}
	b.WriteString(`</article></main><footer>Served by ` + id + `.</footer></body></html>`)
	return []byte(b.String())
}
