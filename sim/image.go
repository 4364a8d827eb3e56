package sim

import (
	"bytes"
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
