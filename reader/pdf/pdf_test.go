package pdf

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/searxgate/searxgate/internal/clock"
	"github.com/searxgate/searxgate/reader/pdf/pdftest"
)

// pdfLim are the reader's default limits.
var pdfLim = Limits{Pages: 50, Chars: 500_000, Time: 5 * time.Second}

// fixedNow is a clock that does not move.
func fixedNow() time.Time { return time.Unix(1_700_000_000, 0) }

// TestPDFUnreadable: a PDF the library cannot make sense of, whole or in
// part, is an ErrType error that says so (or a note on the pages lost),
// never a panic.
func TestPDFUnreadable(t *testing.T) {
	paper := pdftest.Paper().Bytes()
	shifted := bytes.Replace(paper, []byte("1 0 obj"), []byte("\n\n\n1 0 obj"), 1) // every offset wrong
	for name, body := range map[string][]byte{
		"empty":           {},
		"header only":     []byte("%PDF-1.4"),
		"truncated":       paper[:len(paper)*3/5],
		"no xref":         []byte("%PDF-1.4\n1 0 obj\n<< >>\nendobj\n%%EOF\n"),
		"xref is garbage": []byte("%PDF-1.4\nstartxref\n9\n%%EOF\n"),
		"offsets wrong":   shifted,
		"html":            []byte("<!doctype html><title>Not found</title>"),
		"no pages":        pdftest.Write([]string{"<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [] /Count 0 >>"}, "/Size 3 /Root 1 0 R"),
		"pages loop":      pdftest.Write([]string{"<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [2 0 R] /Count 1 >>"}, "/Size 3 /Root 1 0 R"),
	} {
		doc, err := Extract(context.Background(), body, pdfLim, fixedNow)
		if !errors.Is(err, ErrMalformed) || doc != nil {
			t.Errorf("%s: %v %+v", name, err, doc)
		}
	}

	// A page whose font's ToUnicode map makes the library panic is lost,
	// and said to be; the others are read.
	s := pdftest.TextPages(2)
	s.Extra = []string{pdftest.Stream("/CIDInit /ProcSet findresource begin begincmap endbfchar endcmap", false)}
	s.Fonts = map[string]string{"F9": "<< /Type /Font /Subtype /Type1 /BaseFont /Broken /ToUnicode 7 0 R >>"}
	s.Pages[1] = "BT /F9 10 Tf 72 700 Td (x) Tj ET"
	doc, err := Extract(context.Background(), s.Bytes(), pdfLim, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Summary() != "2 of 2; page 2 could not be read" || !strings.Contains(doc.Markdown, "text of page 1") {
		t.Errorf("%q\n%s", doc.Summary(), doc.Markdown)
	}
	// Only that page: nothing could be read.
	s.Pages = s.Pages[1:]
	if _, err := Extract(context.Background(), s.Bytes(), pdfLim, fixedNow); !errors.Is(err, ErrMalformed) ||
		!strings.Contains(err.Error(), "no page's content") {
		t.Errorf("%v", err)
	}

}

// TestPDFLargePage: a page whose content decodes to more than a page of
// text ever does (a drawing; here 5 MiB of spaces, compressed to a few KiB)
// is not interpreted.
func TestPDFLargePage(t *testing.T) {
	s := pdftest.TextPages(2)
	s.Compress = true
	s.Pages[0] = strings.Repeat(" ", maxPageContent+1) + "BT /F1 10 Tf 72 700 Td (drawn) Tj ET"
	doc, err := Extract(context.Background(), s.Bytes(), pdfLim, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Summary() != "2 of 2; page 1 could not be read" || strings.Contains(doc.Markdown, "drawn") ||
		!strings.HasPrefix(doc.Markdown, "[Page 1: no text]\n\n[Page 2]\n\nThis is the text of page 2") {
		t.Errorf("%q\n%s", doc.Summary(), doc.Markdown)
	}
}

// TestPDFPageCap: the reader reads the first PDFPages pages and says how
// many the file has.
func TestPDFPageCap(t *testing.T) {
	doc, err := Extract(context.Background(), pdftest.TextPages(60).Bytes(), pdfLim, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Summary() != "50 of 60 (searxgate reads the first 50 pages of a PDF)" ||
		!strings.Contains(doc.Markdown, "[Page 50]\n\nThis is the text of page 50,") || strings.Contains(doc.Markdown, "page 51") {
		t.Errorf("%q\n%s", doc.Summary(), doc.Markdown[len(doc.Markdown)-200:])
	}
	// A page tree that claims more pages than it has: the walk counts.
	lying := bytes.Replace(pdftest.TextPages(3).Bytes(), []byte("/Count 3"), []byte("/Count 9"), 1)
	if doc, err := Extract(context.Background(), lying, pdfLim, fixedNow); err != nil || doc.Summary() != "3 of 3" {
		t.Errorf("%v %+v", err, doc)
	}
}

// steppingClock moves a second each time it is read: reading a PDF costs
// a second a page, and nothing sleeps.
type steppingClock struct{ *clock.Fake }

func (c steppingClock) Now() time.Time {
	c.Advance(time.Second)
	return c.Fake.Now()
}

// TestPDFTimeBudget: between pages the reader looks at its clock, and once
// PDFTime has passed it stops with what it read, saying why.
func TestPDFTimeBudget(t *testing.T) {
	clk := steppingClock{clock.NewFake(time.Unix(1_700_000_000, 0))}
	lim := pdfLim
	lim.Time = 3 * time.Second
	doc, err := Extract(context.Background(), pdftest.TextPages(6).Bytes(), lim, clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	// Read at 0 s (the start), 1 s and 2 s; at 3 s the time is up.
	if doc.Summary() != "3 of 6 (reading stopped after 3s, searxgate's time for one PDF)" ||
		!strings.Contains(doc.Markdown, "page 3,") || strings.Contains(doc.Markdown, "page 4") {
		t.Errorf("%q\n%s", doc.Summary(), doc.Markdown)
	}

}

// TestPDFTextCap: past PDFChars characters the text stops, and says so;
// what is kept is no longer than the limit.
func TestPDFTextCap(t *testing.T) {
	lim := pdfLim
	lim.Chars = 1000
	doc, err := Extract(context.Background(), pdftest.TextPages(60).Bytes(), lim, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	if n := len([]rune(doc.Markdown)); n > 1000 || n < 800 {
		t.Errorf("%d characters kept", n)
	}
	if !strings.HasSuffix(doc.Summary(), " of 60 (the text stops at 1000 characters, searxgate's limit for one PDF)") || doc.Read >= 50 {
		t.Errorf("%q", doc.Summary())
	}
}

// TestPDFNoText: an encrypted PDF, and one with no text layer (a scan),
// get errors that say which.
func TestPDFNoText(t *testing.T) {
	const o = "<" + "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff" + ">"
	for name, enc := range map[string]string{
		"RC4, a user password":         "<< /Filter /Standard /V 1 /R 2 /O " + o + " /U " + o + " /P -44 >>",
		"AES-256, a user password":     "<< /Filter /Standard /V 5 /R 6 /Length 256 /O " + o + " /U " + o + " /P -44 >>",
		"a filter of its own":          "<< /Filter /Vendor /V 2 >>",
		"RC4 128-bit, a user password": "<< /Filter /Standard /V 2 /R 3 /Length 128 /O " + o + " /U " + o + " /P -1 >>",
	} {
		s := pdftest.TextPages(1)
		s.Encrypt = enc
		if _, err := Extract(context.Background(), s.Bytes(), pdfLim, fixedNow); !errors.Is(err, ErrEncrypted) {
			t.Errorf("%s: %v", name, err)
		}
	}
	scan := pdftest.Spec{Pages: []string{"q 468 0 0 648 72 72 cm /Im1 Do Q\n0.9 g 72 72 468 648 re f", ""}}
	if _, err := Extract(context.Background(), scan.Bytes(), pdfLim, fixedNow); !errors.Is(err, ErrNoText) {
		t.Errorf("scan: %v", err)
	}

}

// TestPDFBombs: numbers the library would size an allocation by, or loop
// on without reading, are checked first: a file that makes them larger
// than any real PDF's is refused (without the check each of these would
// have it allocate gigabytes, or spin for hours).
func TestPDFBombs(t *testing.T) {
	paper := pdftest.Paper().Bytes()
	in := func(dict string) []byte {
		return bytes.Replace(paper, []byte("<< /Type /Catalog"), []byte("<< "+dict+" /Type /Catalog"), 1)
	}
	for name, body := range map[string][]byte{
		"an xref section that starts far out":    bytes.Replace(paper, []byte("xref\n0 "), []byte("xref\n900000000 "), 1),
		"a trailer's /Size":                      bytes.Replace(paper, []byte("/Size "), []byte("/Size 900000000"), 1),
		"an xref stream's /Size":                 in("/Type /XRef /Size 900000000 /W [1 2 1]"),
		"an xref stream's /Index":                in("/Type /XRef /Size 7 /Index [0 5 800000000 2]"),
		"an xref stream with fields of no width": in("/Type /XRef /Size 7 /W [0 0 0]"),
		"an object stream's /N":                  in("/Type /ObjStm /N 1000000000000 /First 4"),
		"a /Size whose name is escaped":          in("/Type /XRef /S#69ze 900000000 /W [1 2 1]"),
		"an /Index whose name is escaped":        in("/Type /XRef /Size 7 /I#6edex [0 5 800000000 2]"),
		"a subsection line ending in a comment":  bytes.Replace(paper, []byte("xref\n0 "), []byte("xref\n900000000 % far\n"), 1),
	} {
		_, err := Extract(context.Background(), body, pdfLim, fixedNow)
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "larger than any real PDF's") {
			t.Errorf("%s: %v", name, err)
		}
	}
	// What real files hold passes: a CID font's widths, small counts.
	for _, ok := range []string{"/W [3 5 700]", "/W [1 [500 600] 3 5 700]", "/N 3", "/Size 40", "/Index [0 40]", "/Sizes 9999999999"} {
		if err := pdfSane([]byte("%PDF-1.7\n" + ok + "\n%%EOF")); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}

	// A ToUnicode map whose block claims more entries than any has: the
	// font's text is dropped, not decoded.
	if cmapSane([]byte("1 begincodespacerange <00> <ff> endcodespacerange 900000000 beginbfchar endbfchar")) ||
		!cmapSane([]byte("1 begincodespacerange <00> <ff> endcodespacerange 2 beginbfchar <01> <0041> <02> <0042> endbfchar")) {
		t.Error("cmapSane")
	}
	s := pdftest.TextPages(1)
	s.Extra = []string{pdftest.Stream("/CIDInit /ProcSet findresource begin 1 begincodespacerange <00> <ff> endcodespacerange "+
		"900000000 beginbfchar endbfchar endcmap", false)}
	s.Fonts = map[string]string{"F9": "<< /Type /Font /Subtype /Type1 /BaseFont /Bomb /ToUnicode 7 0 R >>"}
	s.Pages[0] = "BT /F9 10 Tf 72 700 Td (x) Tj ET"
	if _, err := Extract(context.Background(), s.Bytes(), pdfLim, fixedNow); !errors.Is(err, ErrNoText) {
		t.Errorf("cmap bomb: %v", err)
	}
}

// TestPDFTolerated: what real files and servers do that the library alone
// refuses: a PDF 2.0 header, a header line that goes on, bytes before the
// header (offsets count from it), bytes after the last %%EOF.
func TestPDFTolerated(t *testing.T) {
	paper := pdftest.Paper().Bytes()
	for name, body := range map[string][]byte{
		"PDF 2.0":            bytes.Replace(paper, []byte("%PDF-1.4\n"), []byte("%PDF-2.0\n"), 1),
		"header goes on":     bytes.Replace(paper, []byte("%PDF-1.4\n"), []byte("%PDF-1.4 "), 1),
		"a byte-order mark":  append([]byte("\xef\xbb\xbf\r\n"), paper...),
		"a footer after EOF": append(bytes.Clone(paper), strings.Repeat("-- served by a CMS --\n", 30)...),
	} {
		doc, err := Extract(context.Background(), body, pdfLim, fixedNow)
		if err != nil || doc.Summary() != "3 of 3" || !strings.Contains(doc.Markdown, "## References") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestPDFParagraph: a block's lines become one line, but for list items and
// references; a trailing hyphen joins without a space; the PDF's own "#"
// and fences at a line's start are escaped, not Markdown.
func TestPDFParagraph(t *testing.T) {
	lines := func(ts ...string) []pdfLine {
		out := make([]pdfLine, len(ts))
		for i, s := range ts {
			out[i].text = s
		}
		return out
	}
	for _, tc := range []struct {
		in   []pdfLine
		want string
	}{
		{lines("a first line", "and its end."), "a first line and its end."},
		{lines("quarter-", "diurnal tides", "a - b"), "quarter-diurnal tides a - b"},
		// A word cut at a line's end is joined when the document has it
		// whole (here, in the same paragraph).
		{lines("incre-", "mental dumps are incremental"), "incremental dumps are incremental"},
		{lines("GNU-", "format"), "GNU-format"},
		{lines("a list:", "• one", "continued", "◦ two"), "a list:\n- one continued\n- two"},
		{lines("[1] A. Author.", "A title.", "[2] B. Author."), "[1] A. Author. A title.\n[2] B. Author."},
		{lines("# 1 is a number, not a heading"), `\# 1 is a number, not a heading`},
		{lines("```not a fence"), "\\```not a fence"},
	} {
		if got := dehyphenate(paragraph(tc.in)); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
}
