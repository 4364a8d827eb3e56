// Package pdftest writes the PDFs the reader's tests read, object by object,
// as PDF producers write them, and the hostile ones an attacker would send.
package pdftest

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Spec is a PDF the tests write, object by object, the way a PDF
// producer does: a catalog, a page tree, the standard Helvetica,
// Helvetica-Bold and Courier fonts (WinAnsi-encoded; Helvetica with its
// widths), an Info dictionary, one content stream per page, a correct
// cross-reference table and trailer.
type Spec struct {
	Info     [][2]string // Info entries, in order: {"Title", "…"}
	Pages    []string    // each page's content stream
	Compress bool        // FlateDecode the content streams
	// Encrypt, when set, is an /Encrypt dictionary written as is (with an
	// /ID in the trailer, as encryption needs).
	Encrypt string
	// Fonts adds font dictionaries to every page's resources, by name
	// ("F9": "<< … >>"), written as is.
	Fonts map[string]string
	// Extra objects, written as is after the others (numbered from
	// len(objects)+1, in order): what the Fonts above may refer to.
	Extra []string
}

// helveticaWidths are Helvetica's widths (thousandths of an em) of the
// codes 32 to 126, from its AFM.
var helveticaWidths = []int{
	278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278,
	556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556,
	1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778,
	667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556,
	333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556,
	556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584,
}

// bytes writes the PDF.
func (s Spec) Bytes() []byte {
	var w strings.Builder
	for i, n := range helveticaWidths {
		if i > 0 {
			w.WriteByte(' ')
		}
		fmt.Fprint(&w, n)
	}
	fonts := "/F1 3 0 R /F2 4 0 R /F3 5 0 R"
	for _, name := range slices.Sorted(maps.Keys(s.Fonts)) {
		fonts += " /" + name + " " + s.Fonts[name]
	}
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"", // the page tree, once the pages are numbered
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding /FirstChar 32 /LastChar 126 /Widths [" + w.String() + "] >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Courier /Encoding /WinAnsiEncoding >>",
		"<< " + infoDict(s.Info) + ">>",
	}
	objs = append(objs, s.Extra...)
	var kids []string
	streams := map[string]string{} // by content: pages alike are compressed once
	for _, content := range s.Pages {
		n := len(objs) + 1
		kids = append(kids, fmt.Sprintf("%d 0 R", n))
		objs = append(objs, fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << %s >> >> /Contents %d 0 R >>", fonts, n+1))
		stream, ok := streams[content]
		if !ok {
			stream = Stream(content, s.Compress)
			streams[content] = stream
		}
		objs = append(objs, stream)
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(kids))
	trailer := fmt.Sprintf("/Size %d /Root 1 0 R /Info 6 0 R", len(objs)+1)
	if s.Encrypt != "" {
		objs = append(objs, s.Encrypt)
		trailer = fmt.Sprintf("/Size %d /Root 1 0 R /Info 6 0 R /Encrypt %d 0 R /ID [<0123456789abcdef0123456789abcdef> <0123456789abcdef0123456789abcdef>]",
			len(objs)+1, len(objs))
	}
	return Write(objs, trailer)
}

// Write writes the objects (numbered from 1), the cross-reference table
// with each one's offset, and the trailer.
func Write(objs []string, trailer string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< %s >>\nstartxref\n%d\n%%%%EOF\n", trailer, xref)
	return b.Bytes()
}

func infoDict(info [][2]string) string {
	var b strings.Builder
	for _, kv := range info {
		fmt.Fprintf(&b, "/%s (%s) ", kv[0], String(kv[1]))
	}
	return b.String()
}

// Stream writes a stream object holding data, compressed or not.
func Stream(data string, compress bool) string {
	if !compress {
		return fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(data), data)
	}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	_, _ = zw.Write([]byte(data))
	_ = zw.Close()
	return fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", z.Len(), z.String())
}

// winAnsi are the WinAnsiEncoding codes of the characters outside Latin-1
// the tests write.
var winAnsi = map[rune]byte{'€': 0x80, '‘': 0x91, '’': 0x92, '“': 0x93, '”': 0x94, '•': 0x95, '–': 0x96, '—': 0x97}

// String writes s as the inside of a PDF literal string, in
// WinAnsiEncoding (Latin-1 as it is), with (, ) and \ escaped.
func String(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '(' || r == ')' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x80:
			b.WriteRune(r)
		case winAnsi[r] != 0:
			fmt.Fprintf(&b, "\\%03o", winAnsi[r])
		case r <= 0xff:
			fmt.Fprintf(&b, "\\%03o", r)
		default:
			b.WriteByte('?')
		}
	}
	return b.String()
}

// PageText writes a page's content stream as a layout program would:
// blocks of lines in one font and size, each line moved down by the
// leading.
type PageText struct{ b strings.Builder }

// Lines writes lines in font (F1 Helvetica, F2 Helvetica-Bold, F3 Courier)
// at size, the first line's baseline at (x, y), each next one leading
// lower; it returns the baseline below the last line.
func (p *PageText) Lines(font string, size, leading, x, y float64, lines ...string) float64 {
	fmt.Fprintf(&p.b, "BT\n/%s %g Tf\n%g TL\n%g %g Td\n", font, size, leading, x, y)
	for i, l := range lines {
		if i > 0 {
			p.b.WriteString("T*\n")
		}
		fmt.Fprintf(&p.b, "(%s) Tj\n", String(l))
	}
	p.b.WriteString("ET\n")
	return y - leading*float64(len(lines))
}

// Raw adds content as it is.
func (p *PageText) Raw(content string) { p.b.WriteString(content) }

func (p *PageText) String() string { return p.b.String() }

// Paper is testdata/corpus/paper.pdf: a three-page paper, as a
// typesetter lays one out. A two-line title in 18 pt bold, authors and
// affiliation, an abstract under a bold heading, numbered sections (12 pt
// bold) and subsections (bold, body size), paragraphs in 10 pt with 12 pt
// leading and space between them, a line hyphenated across two, a bulleted
// list with a hanging indent, a paragraph written as TeX writes one (no
// space characters, TJ offsets between words), a command in Courier,
// numbered references, centred page numbers in the foot; the content
// streams compressed.
func Paper() Spec {
	var p1, p2, p3 PageText
	y := p1.Lines("F2", 18, 22, 128, 720, "Harmonic Tide Prediction for Small", "Harbours Without a Tide Gauge")
	y = p1.Lines("F1", 11, 13, 214, y-8, "Mara Lindqvist and Tomás Ferreira")
	y = p1.Lines("F1", 10, 12, 206, y, "Coastal Observatory, Harbour Road, Dover")
	y = p1.Lines("F2", 10, 12, 72, y-18, "Abstract")
	y = p1.Lines("F1", 10, 12, 72, y, "Small harbours rarely have a tide gauge of their own, yet their users need the times",
		"and heights of high and low water. We predict them from the harmonic constants of a",
		"gauge nearby, corrected by a few days of levels read from a staff, and find errors",
		"under 6 cm at three harbours on the Channel coast.")
	y = p1.Lines("F2", 12, 14, 72, y-14, "1 Introduction")
	y = p1.Lines("F1", 10, 12, 72, y-2, "Tide tables are published for the standard ports only; a small harbour between two of",
		"them is left to interpolate. Interpolation is poor where the tide changes shape along the",
		"coast, as it does in the Dover Strait, where the quarter-diurnal tides are strong.")
	p1.Lines("F1", 10, 12, 72, y-6, "Levels are given above chart datum (the Lowest Astronomical Tide, LAT); a level",
		"< 1 m & > 5 m above it is rare, and “mean” always means the mean over 19 years. We",
		"call the harmonic method’s output a predic-",
		"tion, and the gauge’s reading an observation.")
	p1.Lines("F1", 9, 11, 303, 40, "1")

	y = p2.Lines("F2", 12, 14, 72, 720, "2 Method")
	y = p2.Lines("F2", 10, 12, 72, y-2, "2.1 Data")
	y = p2.Lines("F1", 10, 12, 72, y, "We used three sources of levels, each resampled to one reading every 10 minutes:")
	y = p2.Lines("F1", 10, 12, 72, y-6, "• hourly levels from the Dover gauge, 2019–2023;",
		"• levels read from a tide staff at each harbour, by the harbour master, over")
	y = p2.Lines("F1", 10, 12, 81, y, "fourteen days in spring and fourteen in autumn;")
	y = p2.Lines("F1", 10, 12, 72, y, "• the harmonic constants published for Dover (M2, S2, N2, K1, O1 and M4).")
	y = p2.Lines("F2", 10, 12, 72, y-6, "2.2 Harmonic fit")
	p2.Raw(fmt.Sprintf("BT\n/F1 10 Tf\n12 TL\n72 %g Td\n", y) +
		"[(The)-333(fit)-333(keeps)-333(the)-333(Dover)-333(phases)-333(and)-333(solves)-333(for)-333(a)-333(ratio)-333(of)-333(amplitudes)-333(and)-333(a)-333(lag)] TJ\n" +
		"T*\n[(per)-333(constituen)25(t,)-333(by)-333(least)-333(squares)-333(o)15(v)15(er)-333(the)-333(staff)-333(readings.)] TJ\nET\n")
	y = p2.Lines("F1", 10, 12, 72, y-30, "The fit is run for each harbour with one command:")
	y = p2.Lines("F3", 9, 11, 90, y-6, "tidefit --station dover --staff readings.csv \\")
	p2.Lines("F3", 9, 11, 90+4*5.4, y, "--constituents M2,S2,N2,K1,O1,M4 > harbour.tides")
	p2.Lines("F1", 9, 11, 303, 40, "2")

	y = p3.Lines("F2", 12, 14, 72, 720, "3 Results")
	y = p3.Lines("F1", 10, 12, 72, y-2, "At Folkestone, Rye and Hythe the predicted times of high water fell within 9 minutes of",
		"those observed, and the heights within 6 cm; interpolating between the standard ports",
		"gave errors of up to 21 cm.")
	y = p3.Lines("F2", 12, 14, 72, y-14, "4 Conclusion")
	y = p3.Lines("F1", 10, 12, 72, y-2, "A fortnight of staff readings is enough to carry a standard port’s tide to a small",
		"harbour nearby, with errors a harbour’s users can live with.")
	y = p3.Lines("F2", 12, 14, 72, y-14, "References")
	p3.Lines("F1", 9, 11, 72, y-2, "[1] Doodson, A. T. (1921). The harmonic development of the tide-generating potential.",
		"Proceedings of the Royal Society of London A, 100, 305–329.",
		"[2] Pugh, D. and Woodworth, P. (2014). Sea-Level Science. Cambridge University Press.")
	p3.Lines("F1", 9, 11, 303, 40, "3")
	return Spec{
		Info: [][2]string{{"Title", "Harmonic Tide Prediction for Small Harbours Without a Tide Gauge"},
			{"Author", "Mara Lindqvist, Tomás Ferreira"}, {"CreationDate", "D:20240521093000Z"},
			{"Producer", "searxgate reader tests (reader/pdf/pdftest)"}},
		Pages:    []string{p1.String(), p2.String(), p3.String()},
		Compress: true,
	}
}

// TextPages is a PDF of n pages, each with one line of text naming it.
func TextPages(n int) Spec {
	var s Spec
	for i := range n {
		var p PageText
		p.Lines("F1", 10, 12, 72, 720, fmt.Sprintf("This is the text of page %d, and only of it.", i+1))
		s.Pages = append(s.Pages, p.String())
	}
	return s
}

// Slow is a PDF of about 285 KB whose 120 pages cost a reader tens of
// milliseconds each (hundreds of thousands of text moves that draw
// nothing): read whole, it takes longer than searxgate's 5 s for one PDF.
func Slow() []byte {
	page := "BT /F1 12 Tf 72 700 Td " + strings.Repeat("1 0 Td ", 200_000) + "ET"
	pages := make([]string, 120)
	for i := range pages {
		pages[i] = page
	}
	return Spec{Pages: pages, Compress: true}.Bytes()
}

// Large is a readable PDF of about size bytes: one page of text, and a
// stream no page uses that pads it.
func Large(size int) []byte {
	var p PageText
	p.Lines("F1", 12, 14, 72, 700, "A large PDF, mostly padding.")
	s := Spec{Pages: []string{p.String()}}
	pad := size - len(s.Bytes()) - 64
	s.Extra = []string{Stream(strings.Repeat("x", max(pad, 0)), false)}
	return s.Bytes()
}
