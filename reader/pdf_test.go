package reader

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/searxgate/searxgate/internal/clock"
)

// pdfLim are the reader's default limits.
var pdfLim = pdfLimits{Pages: 50, Chars: 500_000, Time: 5 * time.Second}

// fixedNow is a clock that does not move.
func fixedNow() time.Time { return time.Unix(1_700_000_000, 0) }

// textPages is a PDF of n pages, each with one line of text naming it.
func textPages(n int) pdfSpec {
	var s pdfSpec
	for i := range n {
		var p pageText
		p.lines("F1", 10, 12, 72, 720, fmt.Sprintf("This is the text of page %d, and only of it.", i+1))
		s.Pages = append(s.Pages, p.String())
	}
	return s
}

// pdfServer serves each body at its path with its content type.
func pdfServer(t *testing.T, files map[string]struct {
	ctype string
	body  []byte
}) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	for path, f := range files {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", f.ctype)
			_, _ = w.Write(f.body)
		})
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestPaperPDFGenerated: testdata/corpus/paper.pdf is what paperSpec
// writes (compared by what the reader reads of each, which does not
// change with the compressor's bytes); go test -run TestCorpus -args
// -update writes it again.
func TestPaperPDFGenerated(t *testing.T) {
	file, err := os.ReadFile("testdata/corpus/paper.pdf")
	if err != nil {
		t.Fatal(err)
	}
	fromFile, err := extractPDF(context.Background(), file, pdfLim, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	fromSpec, err := extractPDF(context.Background(), paperSpec().bytes(), pdfLim, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	if fromFile.Markdown != fromSpec.Markdown || fromFile.Title != fromSpec.Title || fromFile.pages() != fromSpec.pages() {
		t.Errorf("paper.pdf is not what paperSpec writes (-args -update writes it):\n%s\n---\n%s", fromFile.Markdown, fromSpec.Markdown)
	}
}

// TestReadPDF reads the paper through the whole reader: its citation
// header, its content type, and the views an agent asks for (headings, a
// section, paragraphs, a window of characters) on its text.
func TestReadPDF(t *testing.T) {
	paper := paperSpec().bytes()
	srv := pdfServer(t, map[string]struct {
		ctype string
		body  []byte
	}{
		"/paper.pdf":     {"application/pdf", paper},
		"/download":      {"application/octet-stream", paper},
		"/x-pdf":         {"application/x-pdf", paper},
		"/blob":          {"application/octet-stream", []byte("\x00\x01 not a document")},
		"/trailing-junk": {"application/pdf", append(bytes.Clone(paper), strings.Repeat("<!-- a server's footer -->\n", 20)...)},
	})
	r, base := publicReader(t, srv, func(c *Config) { c.PerHostPerMinute = 1000 })
	ctx := context.Background()
	res, err := r.Read(ctx, Request{URL: base + "/paper.pdf"})
	if err != nil {
		t.Fatal(err)
	}
	if res.ContentType != "application/pdf" || res.Pages != "3 of 3" || res.Cached {
		t.Errorf("type %q pages %q cached %v", res.ContentType, res.Pages, res.Cached)
	}
	wantHeader := "Title: Harmonic Tide Prediction for Small Harbours Without a Tide Gauge\nAuthor: Mara Lindqvist, Tomás Ferreira\n" +
		"Published: 2024-05-21\nURL: " + base + "/paper.pdf\nPages: 3 of 3"
	if h := res.Header(); h != wantHeader {
		t.Errorf("header:\n%s\nwant:\n%s", h, wantHeader)
	}
	heads, err := r.Read(ctx, Request{URL: base + "/paper.pdf", ReadHeadings: true})
	if err != nil || !heads.Cached {
		t.Fatalf("%v cached %v", err, heads != nil && heads.Cached)
	}
	want := "# Harmonic Tide Prediction for Small Harbours Without a Tide Gauge|### Abstract|## 1 Introduction|## 2 Method|" +
		"### 2.1 Data|### 2.2 Harmonic fit|## 3 Results|## 4 Conclusion|## References"
	if got := strings.Join(heads.Headings, "|"); got != want {
		t.Errorf("headings %s", got)
	}
	sec, err := r.Read(ctx, Request{URL: base + "/paper.pdf", Section: "method"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sec.Content, "## 2 Method\n\n### 2.1 Data") || !strings.Contains(sec.Content, "harbour.tides\n```") ||
		strings.Contains(sec.Content, "Results") {
		t.Errorf("section:\n%s", sec.Content)
	}
	paras, err := r.Read(ctx, Request{URL: base + "/paper.pdf", Section: "2.1 Data", ParagraphRange: "3"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(paras.Content, "- hourly levels") || strings.Count(paras.Content, "\n- ") != 2 || paras.TotalParagraphs != 3 {
		t.Errorf("paragraphs %s of %d:\n%s", paras.Paragraphs, paras.TotalParagraphs, paras.Content)
	}
	win, err := r.Read(ctx, Request{URL: base + "/paper.pdf", StartChar: 8, MaxLength: 20})
	if err != nil || win.Content != "\n\n# Harmonic Tide Pr" || win.NextChar != 28 {
		t.Errorf("%v %q next %d", err, win.Content, win.NextChar)
	}
	for _, path := range []string{"/download", "/x-pdf", "/trailing-junk"} {
		res, err := r.Read(ctx, Request{URL: base + path})
		if err != nil || res.ContentType != "application/pdf" || !strings.Contains(res.Content, "## 4 Conclusion") {
			t.Errorf("%s: %v %+v", path, err, res)
		}
	}
	if _, err := r.Read(ctx, Request{URL: base + "/blob"}); !errors.Is(err, ErrType) || !strings.Contains(err.Error(), "application/octet-stream") {
		t.Errorf("a binary that is not a PDF: %v", err)
	}
}

// TestPDFUnreadable: a PDF the library cannot make sense of, whole or in
// part, is an ErrType error that says so (or a note on the pages lost),
// never a panic.
func TestPDFUnreadable(t *testing.T) {
	paper := paperSpec().bytes()
	shifted := bytes.Replace(paper, []byte("1 0 obj"), []byte("\n\n\n1 0 obj"), 1) // every offset wrong
	for name, body := range map[string][]byte{
		"empty":           {},
		"header only":     []byte("%PDF-1.4"),
		"truncated":       paper[:len(paper)*3/5],
		"no xref":         []byte("%PDF-1.4\n1 0 obj\n<< >>\nendobj\n%%EOF\n"),
		"xref is garbage": []byte("%PDF-1.4\nstartxref\n9\n%%EOF\n"),
		"offsets wrong":   shifted,
		"html":            []byte("<!doctype html><title>Not found</title>"),
		"no pages":        writePDF([]string{"<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [] /Count 0 >>"}, "/Size 3 /Root 1 0 R"),
		"pages loop":      writePDF([]string{"<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [2 0 R] /Count 1 >>"}, "/Size 3 /Root 1 0 R"),
	} {
		doc, err := extractPDF(context.Background(), body, pdfLim, fixedNow)
		if !errors.Is(err, errPDFMalformed) || doc != nil {
			t.Errorf("%s: %v %+v", name, err, doc)
		}
	}

	// A page whose font's ToUnicode map makes the library panic is lost,
	// and said to be; the others are read.
	s := textPages(2)
	s.Extra = []string{stream("/CIDInit /ProcSet findresource begin begincmap endbfchar endcmap", false)}
	s.Fonts = map[string]string{"F9": "<< /Type /Font /Subtype /Type1 /BaseFont /Broken /ToUnicode 7 0 R >>"}
	s.Pages[1] = "BT /F9 10 Tf 72 700 Td (x) Tj ET"
	doc, err := extractPDF(context.Background(), s.bytes(), pdfLim, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	if doc.pages() != "2 of 2; page 2 could not be read" || !strings.Contains(doc.Markdown, "text of page 1") {
		t.Errorf("%q\n%s", doc.pages(), doc.Markdown)
	}
	// Only that page: nothing could be read.
	s.Pages = s.Pages[1:]
	if _, err := extractPDF(context.Background(), s.bytes(), pdfLim, fixedNow); !errors.Is(err, errPDFMalformed) ||
		!strings.Contains(err.Error(), "no page's content") {
		t.Errorf("%v", err)
	}

	// Through the reader: ErrType, naming the URL.
	srv := pdfServer(t, map[string]struct {
		ctype string
		body  []byte
	}{"/broken.pdf": {"application/pdf", paper[:len(paper)/2]}})
	r, base := publicReader(t, srv, nil)
	_, err = r.Read(context.Background(), Request{URL: base + "/broken.pdf"})
	if !errors.Is(err, ErrType) || !strings.Contains(err.Error(), base+"/broken.pdf is a PDF searxgate cannot read") {
		t.Errorf("%v", err)
	}
}

// TestPDFLargePage: a page whose content decodes to more than a page of
// text ever does (a drawing; here 5 MiB of spaces, compressed to a few KiB)
// is not interpreted.
func TestPDFLargePage(t *testing.T) {
	s := textPages(2)
	s.Compress = true
	s.Pages[0] = strings.Repeat(" ", maxPageContent+1) + "BT /F1 10 Tf 72 700 Td (drawn) Tj ET"
	doc, err := extractPDF(context.Background(), s.bytes(), pdfLim, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	if doc.pages() != "2 of 2; page 1 could not be read" || strings.Contains(doc.Markdown, "drawn") ||
		!strings.HasPrefix(doc.Markdown, "[Page 1: no text]\n\n[Page 2]\n\nThis is the text of page 2") {
		t.Errorf("%q\n%s", doc.pages(), doc.Markdown)
	}
}

// TestPDFPageCap: the reader reads the first PDFPages pages and says how
// many the file has.
func TestPDFPageCap(t *testing.T) {
	doc, err := extractPDF(context.Background(), textPages(60).bytes(), pdfLim, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	if doc.pages() != "50 of 60 (searxgate reads the first 50 pages of a PDF)" ||
		!strings.Contains(doc.Markdown, "[Page 50]\n\nThis is the text of page 50,") || strings.Contains(doc.Markdown, "page 51") {
		t.Errorf("%q\n%s", doc.pages(), doc.Markdown[len(doc.Markdown)-200:])
	}
	// A page tree that claims more pages than it has: the walk counts.
	lying := bytes.Replace(textPages(3).bytes(), []byte("/Count 3"), []byte("/Count 9"), 1)
	if doc, err := extractPDF(context.Background(), lying, pdfLim, fixedNow); err != nil || doc.pages() != "3 of 3" {
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
	doc, err := extractPDF(context.Background(), textPages(6).bytes(), lim, clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	// Read at 0 s (the start), 1 s and 2 s; at 3 s the time is up.
	if doc.pages() != "3 of 6 (reading stopped after 3s, searxgate's time for one PDF)" ||
		!strings.Contains(doc.Markdown, "page 3,") || strings.Contains(doc.Markdown, "page 4") {
		t.Errorf("%q\n%s", doc.pages(), doc.Markdown)
	}

	// Through the reader, with its clock.
	srv := pdfServer(t, map[string]struct {
		ctype string
		body  []byte
	}{"/long.pdf": {"application/pdf", textPages(20).bytes()}})
	r, base := publicReader(t, srv, func(c *Config) { c.Clock = clk; c.PDFTime = 4 * time.Second })
	res, err := r.Read(context.Background(), Request{URL: base + "/long.pdf"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pages != "4 of 20 (reading stopped after 4s, searxgate's time for one PDF)" {
		t.Errorf("pages %q", res.Pages)
	}

	// A reader whose caller has gone: an error, nothing cached.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := &Page{URL: base + "/x.pdf"}
	if _, err := r.pdfPage(ctx, p, paperSpec().bytes()); !errors.Is(err, ErrTimeout) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestPDFTextCap: past PDFChars characters the text stops, and says so;
// what is kept is no longer than the limit.
func TestPDFTextCap(t *testing.T) {
	lim := pdfLim
	lim.Chars = 1000
	doc, err := extractPDF(context.Background(), textPages(60).bytes(), lim, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	if n := len([]rune(doc.Markdown)); n > 1000 || n < 800 {
		t.Errorf("%d characters kept", n)
	}
	if !strings.HasSuffix(doc.pages(), " of 60 (the text stops at 1000 characters, searxgate's limit for one PDF)") || doc.Read >= 50 {
		t.Errorf("%q", doc.pages())
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
		s := textPages(1)
		s.Encrypt = enc
		if _, err := extractPDF(context.Background(), s.bytes(), pdfLim, fixedNow); !errors.Is(err, errPDFEncrypted) {
			t.Errorf("%s: %v", name, err)
		}
	}
	scan := pdfSpec{Pages: []string{"q 468 0 0 648 72 72 cm /Im1 Do Q\n0.9 g 72 72 468 648 re f", ""}}
	if _, err := extractPDF(context.Background(), scan.bytes(), pdfLim, fixedNow); !errors.Is(err, errPDFNoText) {
		t.Errorf("scan: %v", err)
	}

	srv := pdfServer(t, map[string]struct {
		ctype string
		body  []byte
	}{"/scan.pdf": {"application/pdf", scan.bytes()}})
	r, base := publicReader(t, srv, nil)
	_, err := r.Read(context.Background(), Request{URL: base + "/scan.pdf"})
	if !errors.Is(err, ErrType) || !strings.Contains(err.Error(), "is a PDF without a text layer") {
		t.Errorf("%v", err)
	}
}

// TestPDFBombs: numbers the library would size an allocation by, or loop
// on without reading, are checked first: a file that makes them larger
// than any real PDF's is refused (without the check each of these would
// have it allocate gigabytes, or spin for hours).
func TestPDFBombs(t *testing.T) {
	paper := paperSpec().bytes()
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
	} {
		_, err := extractPDF(context.Background(), body, pdfLim, fixedNow)
		if !errors.Is(err, errPDFMalformed) || !strings.Contains(err.Error(), "larger than any real PDF's") {
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
	s := textPages(1)
	s.Extra = []string{stream("/CIDInit /ProcSet findresource begin 1 begincodespacerange <00> <ff> endcodespacerange "+
		"900000000 beginbfchar endbfchar endcmap", false)}
	s.Fonts = map[string]string{"F9": "<< /Type /Font /Subtype /Type1 /BaseFont /Bomb /ToUnicode 7 0 R >>"}
	s.Pages[0] = "BT /F9 10 Tf 72 700 Td (x) Tj ET"
	if _, err := extractPDF(context.Background(), s.bytes(), pdfLim, fixedNow); !errors.Is(err, errPDFNoText) {
		t.Errorf("cmap bomb: %v", err)
	}
}

// TestPDFTolerated: what real files and servers do that the library alone
// refuses: a PDF 2.0 header, a header line that goes on, bytes before the
// header (offsets count from it), bytes after the last %%EOF.
func TestPDFTolerated(t *testing.T) {
	paper := paperSpec().bytes()
	for name, body := range map[string][]byte{
		"PDF 2.0":            bytes.Replace(paper, []byte("%PDF-1.4\n"), []byte("%PDF-2.0\n"), 1),
		"header goes on":     bytes.Replace(paper, []byte("%PDF-1.4\n"), []byte("%PDF-1.4 "), 1),
		"a byte-order mark":  append([]byte("\xef\xbb\xbf\r\n"), paper...),
		"a footer after EOF": append(bytes.Clone(paper), strings.Repeat("-- served by a CMS --\n", 30)...),
	} {
		doc, err := extractPDF(context.Background(), body, pdfLim, fixedNow)
		if err != nil || doc.pages() != "3 of 3" || !strings.Contains(doc.Markdown, "## References") {
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
		{lines("a list:", "• one", "continued", "◦ two"), "a list:\n- one continued\n- two"},
		{lines("[1] A. Author.", "A title.", "[2] B. Author."), "[1] A. Author. A title.\n[2] B. Author."},
		{lines("# 1 is a number, not a heading"), `\# 1 is a number, not a heading`},
		{lines("```not a fence"), "\\```not a fence"},
	} {
		if got := paragraph(tc.in); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
}
