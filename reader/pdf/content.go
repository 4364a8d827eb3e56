package pdf

import (
	"context"
	"io"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
)

// Bounds on one page's content: what its content streams decode to (larger
// is a drawing, not text, and the library's interpreter would hold it all
// on its stack), the nesting of saved graphics states, the bytes of one
// string shown, and a font's ToUnicode map.
const (
	maxPageContent = 4 << 20
	maxSavedStates = 64
	maxShownString = 16 << 10
	maxFontMap     = 1 << 20
	maxFontCodes   = 2048 // entries of an encoding's Differences
)

// textRun is one string a page shows, where it starts and ends on the
// page (in points), its size and whether its font is bold.
type textRun struct {
	x, y, endX, size float64
	bold, mono       bool // its font is bold; its font is monospaced (code)
	space            bool // a gap before it (a TJ offset) as wide as a space
	text             string
}

// affine is a PDF transformation matrix [a b c d e f].
type affine [6]float64

var identity = affine{1, 0, 0, 1, 0, 0}

// times is m×n: m applied first.
func (m affine) times(n affine) affine {
	return affine{
		m[0]*n[0] + m[1]*n[2], m[0]*n[1] + m[1]*n[3],
		m[2]*n[0] + m[3]*n[2], m[2]*n[1] + m[3]*n[3],
		m[4]*n[0] + m[5]*n[2] + n[4], m[4]*n[1] + m[5]*n[3] + n[5],
	}
}

func translate(x, y float64) affine { return affine{1, 0, 0, 1, x, y} }

// pageReader interprets one page's content stream for its text: the text
// state and the transformation matrices, enough to know where each string
// lands and how large it is.
type pageReader struct {
	ctx     context.Context
	page    pdf.Page
	budget  *int // characters the document may still keep
	fonts   map[string]*pdfFont
	runs    []textRun
	skipped bool // the page's content is too large to read
	ops     int

	ctm, tm, tlm              affine
	saved                     []affine
	font                      *pdfFont
	tfs, th, tc, tw, tl, rise float64
	space                     bool
}

func newPageReader(ctx context.Context, p pdf.Page, budget *int) *pageReader {
	return &pageReader{ctx: ctx, page: p, budget: budget, fonts: map[string]*pdfFont{},
		ctm: identity, tm: identity, tlm: identity, th: 1}
}

// read interprets the page; it panics (recovered by guard) when the
// library does, or with a pdfStop when the time or the text runs out.
func (r *pageReader) read() {
	content := r.page.V.Key("Contents")
	if content.Kind() != pdf.Stream && content.Kind() != pdf.Array {
		return
	}
	if decodedSize(content, maxPageContent) > maxPageContent {
		r.skipped = true
		return
	}
	pdf.Interpret(content, r.op)
}

// decodedSize is how many bytes the stream (or array of streams) v decodes
// to, counting no further than limit+1 (an array of more streams than a
// page has is past it).
func decodedSize(v pdf.Value, limit int64) int64 {
	streams := []pdf.Value{v}
	if v.Kind() == pdf.Array {
		if v.Len() > 4096 {
			return limit + 1
		}
		streams = streams[:0]
		for i := 0; i < v.Len(); i++ {
			streams = append(streams, v.Index(i))
		}
	}
	var n int64
	for _, s := range streams {
		rd := s.Reader()
		m, _ := io.Copy(io.Discard, io.LimitReader(rd, limit+1-n))
		_ = rd.Close()
		if n += m; n > limit {
			break
		}
	}
	return n
}

// readStream reads the stream v, and reports whether it ends within limit
// bytes.
func readStream(v pdf.Value, limit int64) ([]byte, bool) {
	rd := v.Reader()
	defer rd.Close()
	data, _ := io.ReadAll(io.LimitReader(rd, limit+1))
	return data, int64(len(data)) <= limit
}

// op runs one content-stream operator.
func (r *pageReader) op(stk *pdf.Stack, op string) {
	if r.ops++; r.ops%256 == 0 && r.ctx.Err() != nil {
		panic(pdfStop{})
	}
	args := make([]pdf.Value, stk.Len())
	for i := len(args) - 1; i >= 0; i-- {
		args[i] = stk.Pop()
	}
	num := func(i int) float64 {
		if i < len(args) {
			return args[i].Float64()
		}
		return 0
	}
	switch op {
	case "q":
		if len(r.saved) < maxSavedStates {
			r.saved = append(r.saved, r.ctm)
		}
	case "Q":
		if n := len(r.saved); n > 0 {
			r.ctm, r.saved = r.saved[n-1], r.saved[:n-1]
		}
	case "cm":
		r.ctm = affine{num(0), num(1), num(2), num(3), num(4), num(5)}.times(r.ctm)
	case "BT":
		r.tm, r.tlm = identity, identity
	case "Td", "TD":
		if op == "TD" {
			r.tl = -num(1)
		}
		r.tlm = translate(num(0), num(1)).times(r.tlm)
		r.tm = r.tlm
	case "Tm":
		r.tm = affine{num(0), num(1), num(2), num(3), num(4), num(5)}
		r.tlm = r.tm
	case "T*":
		r.nextLine()
	case "TL":
		r.tl = num(0)
	case "Tc":
		r.tc = num(0)
	case "Tw":
		r.tw = num(0)
	case "Tz":
		r.th = num(0) / 100
	case "Ts":
		r.rise = num(0)
	case "Tf":
		r.setFont(args)
	default:
		r.showOp(op, args)
	}
}

func (r *pageReader) nextLine() {
	r.tlm = translate(0, -r.tl).times(r.tlm)
	r.tm = r.tlm
}

// showOp runs the operators that show text: Tj, ', " and TJ.
func (r *pageReader) showOp(op string, args []pdf.Value) {
	switch op {
	case "Tj":
		if len(args) == 1 {
			r.show(args[0].RawString())
		}
	case "'":
		r.nextLine()
		if len(args) == 1 {
			r.show(args[0].RawString())
		}
	case "\"":
		r.nextLine()
		if len(args) == 3 {
			r.tw, r.tc = args[0].Float64(), args[1].Float64()
			r.show(args[2].RawString())
		}
	case "TJ":
		if len(args) != 1 {
			return
		}
		a := args[0]
		for i := 0; i < a.Len(); i++ {
			x := a.Index(i)
			if x.Kind() == pdf.String {
				r.show(x.RawString())
				continue
			}
			// A number moves the next glyph left by n thousandths of an
			// em; a move right of a fifth of one is a word's space (TeX
			// writes its spaces so).
			n := x.Float64()
			r.tm = translate(-n/1000*r.tfs*r.th, 0).times(r.tm)
			if n <= -200 {
				r.space = true
			}
		}
	}
}

func (r *pageReader) setFont(args []pdf.Value) {
	if len(args) != 2 {
		return
	}
	name := args[0].Name()
	f, ok := r.fonts[name]
	if !ok {
		f = newPDFFont(pageFont(r.page, name))
		r.fonts[name] = f
	}
	r.font, r.tfs = f, args[1].Float64()
}

// pageFont is the font the page's resources (its own or inherited) name.
func pageFont(p pdf.Page, name string) pdf.Value {
	v := p.V
	for range 32 {
		if v.Kind() != pdf.Dict {
			break
		}
		if res := v.Key("Resources"); res.Kind() == pdf.Dict {
			return res.Key("Font").Key(name)
		}
		v = v.Key("Parent")
	}
	return pdf.Value{}
}

// show adds the string raw, in the current font, where the text matrix
// puts it, and moves the text matrix past it.
func (r *pageReader) show(raw string) {
	if len(raw) > maxShownString {
		raw = raw[:maxShownString]
	}
	f := r.font
	if f == nil {
		f = latinFont
	}
	m := r.tm.times(r.ctm)
	vscale, hscale := math.Hypot(m[2], m[3]), math.Hypot(m[0], m[1])
	x, y := m[4]+m[2]*r.rise, m[5]+m[3]*r.rise
	w := f.advance(raw, r.tfs, r.tc, r.tw) * r.th
	r.tm = translate(w, 0).times(r.tm)
	text := f.decode(raw)
	if r.tc*r.th >= 0.15*math.Abs(r.tfs) && r.tfs != 0 {
		// Character spacing as wide as a space between each glyph: how
		// ghostscript writes a word's space inside a string ("they are"
		// as "(he)" and, spaced, "(ya)").
		text = f.decodeSpaced(raw)
	}
	if strings.TrimSpace(text) == "" {
		if text != "" {
			r.space = true
		}
		return
	}
	*r.budget -= utf8.RuneCountInString(text)
	size := math.Abs(r.tfs) * vscale
	r.runs = append(r.runs, textRun{x: x, y: y, endX: x + w*hscale, size: size, bold: f.bold, mono: f.mono, space: r.space, text: text})
	r.space = false
	if *r.budget < 0 {
		panic(pdfStop{chars: true})
	}
}

// pdfFont is what the reader needs of a font: the text of its codes, how
// wide its glyphs are, whether it is bold, and whether it is monospaced.
type pdfFont struct {
	table   *[256]string     // one-byte fonts: the text of each code
	enc     pdf.TextEncoding // two-byte fonts (Type0): the library's map
	memo    map[string]string
	twoByte bool
	bold    bool
	mono    bool
	first   int
	widths  []float64 // thousandths of an em, from first
	// cidWidths are a two-byte font's glyph widths (its W array).
	cidWidths map[int]float64
	missing   float64 // the width of a glyph widths does not give
}

// latinFont reads strings shown before any font was set.
var latinFont = func() *pdfFont {
	f := &pdfFont{table: new([256]string), missing: 500}
	for b := range 256 {
		f.table[b] = string(rune(b))
	}
	return f
}()

// newPDFFont reads the font dictionary v. A font whose ToUnicode map or
// Differences are larger than any real one (guard.go) has its text
// dropped rather than decoded at a cost that grows with their size.
func newPDFFont(v pdf.Value) *pdfFont {
	f := &pdfFont{missing: 500, first: int(v.Key("FirstChar").Int64())}
	base := v.Key("BaseFont").Name()
	if _, after, ok := strings.Cut(base, "+"); ok {
		base = after
	}
	low := strings.ToLower(base)
	for _, w := range []string{"bold", "black", "heavy", "semibold", "demi"} {
		f.bold = f.bold || strings.Contains(low, w)
	}
	f.bold = f.bold || v.Key("FontDescriptor").Key("FontWeight").Float64() >= 600
	for _, w := range []string{"courier", "mono", "cmtt", "sftt", "consol", "menlo", "code"} {
		f.mono = f.mono || strings.Contains(low, w)
	}
	f.mono = f.mono || v.Key("FontDescriptor").Key("Flags").Int64()&1 != 0
	if ws := v.Key("Widths"); ws.Len() <= 256 {
		for i := 0; i < ws.Len(); i++ {
			f.widths = append(f.widths, ws.Index(i).Float64())
		}
	}
	huge := v.Key("Encoding").Key("Differences").Len() > maxFontCodes
	var unicode map[int]string // the ToUnicode map, which comes first
	if tu := v.Key("ToUnicode"); tu.Kind() == pdf.Stream {
		data, whole := readStream(tu, maxFontMap)
		huge = huge || !whole || !cmapSane(data)
		if !huge {
			unicode = toUnicode(data)
		}
	}
	font := pdf.Font{V: v}
	if v.Key("Subtype").Name() == "Type0" {
		f.twoByte, f.missing = true, 1000
		cid := v.Key("DescendantFonts").Index(0)
		if dw := cid.Key("DW"); dw.Kind() == pdf.Integer || dw.Kind() == pdf.Real {
			f.missing = dw.Float64()
		}
		f.cidWidths = cidWidths(cid.Key("W"))
		if !huge {
			f.enc, f.memo = font.Encoder(), map[string]string{}
		}
		return f
	}
	f.table = new([256]string)
	if huge {
		return f
	}
	enc := font.Encoder()
	for b := range 256 {
		if s, ok := unicode[b]; ok && s != "" && utf8.ValidString(s) {
			f.table[b] = s
			continue
		}
		s := enc.Decode(string([]byte{byte(b)}))
		if !utf8.ValidString(s) {
			s = string(rune(b))
		}
		f.table[b] = s
	}
	return f
}

// cidWidths reads a CID font's W array: "c [w1 w2 …]" gives the widths of
// c, c+1, …; "c1 c2 w" gives c1 to c2 the width w. It reads at most
// maxCIDWidths widths.
func cidWidths(w pdf.Value) map[int]float64 {
	const maxCIDWidths = 1 << 16
	out := map[int]float64{}
	for i := 0; i+1 < w.Len() && len(out) < maxCIDWidths; {
		c := int(w.Index(i).Int64())
		if next := w.Index(i + 1); next.Kind() == pdf.Array {
			for j := 0; j < next.Len() && len(out) < maxCIDWidths; j++ {
				out[c+j] = next.Index(j).Float64()
			}
			i += 2
			continue
		}
		last, width := int(w.Index(i+1).Int64()), w.Index(i+2).Float64()
		for c2 := c; c2 <= last && c2-c < maxCIDWidths && len(out) < maxCIDWidths; c2++ {
			out[c2] = width
		}
		i += 3
	}
	return out
}

// decode is the text of raw.
func (f *pdfFont) decode(raw string) string {
	if f.table != nil {
		var b strings.Builder
		for i := 0; i < len(raw); i++ {
			b.WriteString(f.table[raw[i]])
		}
		return cleanText(b.String())
	}
	if f.enc == nil {
		return ""
	}
	if s, ok := f.memo[raw]; ok {
		return s
	}
	s := cleanText(f.enc.Decode(raw))
	if len(raw) <= 64 && len(f.memo) < 4096 {
		f.memo[raw] = s
	}
	return s
}

// decodeSpaced is the text of raw with a space between its glyphs.
func (f *pdfFont) decodeSpaced(raw string) string {
	step := 1
	if f.twoByte {
		step = 2
	}
	var parts []string
	for i := 0; i+step <= len(raw); i += step {
		if t := strings.TrimSpace(f.decode(raw[i : i+step])); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, " ")
}

// advance is how far raw moves the text position, in text space.
func (f *pdfFont) advance(raw string, size, charSpace, wordSpace float64) float64 {
	if f.twoByte {
		var w float64
		for i := 0; i+1 < len(raw); i += 2 {
			g, ok := f.cidWidths[int(raw[i])<<8|int(raw[i+1])]
			if !ok {
				g = f.missing
			}
			w += g/1000*size + charSpace
		}
		return w
	}
	var w float64
	for i := 0; i < len(raw); i++ {
		c := int(raw[i])
		g := f.missing
		if c == ' ' {
			g = 250
		}
		if j := c - f.first; j >= 0 && j < len(f.widths) && f.widths[j] > 0 {
			g = f.widths[j]
		}
		w += g/1000*size + charSpace
		if c == ' ' {
			w += wordSpace
		}
	}
	return w
}

// ligatures are the presentation forms fonts map ligature glyphs to.
var ligatures = strings.NewReplacer("\ufb00", "ff", "\ufb01", "fi", "\ufb02", "fl", "\ufb03", "ffi", "\ufb04", "ffl",
	"\ufb05", "st", "\ufb06", "st")

// cleanText makes a PDF's text readable: valid UTF-8, ligatures spelled
// out, no control characters, soft hyphens or replacement characters
// (codes the font gives no text for), tabs as spaces.
func cleanText(s string) string {
	s = ligatures.Replace(strings.ToValidUTF8(s, ""))
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return ' '
		case r == utf8.RuneError, r == '\u00ad', unicode.IsControl(r):
			return -1
		}
		return r
	}, s)
}
