package pdf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/ledongthuc/pdf"
	"github.com/searxgate/searxgate/reader/internal/mdtext"
)

// Limits bound what one PDF may cost beyond its bytes (Config.MaxBytes
// bounds those).
type Limits struct {
	Pages int           // pages read at most
	Chars int           // characters of text kept at most
	Time  time.Duration // time spent extracting at most
}

// Doc is what the reader takes from a PDF: what its Info dictionary
// says, its text as Markdown, and how much of it was read.
type Doc struct {
	Title, Author, Published string
	Markdown                 string
	Read, Total              int    // pages read, pages the file has
	Stopped                  string // why reading stopped before the last page, "" when it did not
	Unreadable               []int  // pages whose content could not be read
}

// Why a PDF could not be read at all. The reader turns them into ErrType
// errors that name the page.
var (
	ErrMalformed = errors.New("is a PDF searxgate cannot read")
	ErrEncrypted = errors.New("is an encrypted PDF searxgate cannot decrypt (it needs a password, or is encrypted with AES-256); its text cannot be read")
	ErrNoText    = errors.New("is a PDF without a text layer (scanned pages or images only); searxgate does not run OCR")
)

// errPDFTime is what the PDF's bytes answer once its time has run out: the
// library stops at the next read.
var errPDFTime = errors.New("time for the PDF ran out")

// pdfStop ends reading from inside the library's callbacks: its time ran
// out, or (chars) the text reached its limit. Recovered where a page is
// read.
type pdfStop struct{ chars bool }

// Extract reads the text of the PDF in body: at most lim.Pages pages and
// lim.Chars characters, stopping between pages once lim.Time has passed by
// now (the reader's clock), and within a page once it has passed in real
// time (ctx). Whatever the library does with a hostile file, it returns an
// error: its panics are recovered.
func Extract(ctx context.Context, body []byte, lim Limits, now func() time.Time) (*Doc, error) {
	start := now()
	ctx, cancel := context.WithTimeout(ctx, lim.Time)
	defer cancel()
	rd, err := openPDF(ctx, body)
	if err != nil {
		return nil, err
	}
	doc := &Doc{}
	if err := guard(func() { pdfInfo(rd, doc) }); err != nil {
		return nil, fmt.Errorf("%w (%v)", ErrMalformed, err)
	}
	var pages []pdf.Page
	if err := guard(func() { pages, doc.Total = pdfPages(rd, lim.Pages) }); err != nil || len(pages) == 0 {
		return nil, fmt.Errorf("%w (no pages found)", ErrMalformed)
	}
	budget := lim.Chars
	var texts [][]pdfLine
	for i, p := range pages {
		if i > 0 && now().Sub(start) >= lim.Time {
			doc.Stopped = fmt.Sprintf("reading stopped after %s, searxgate's time for one PDF", lim.Time)
			break
		}
		lines, stop, ok := readPDFPage(ctx, p, &budget)
		if stop == nil || len(lines) > 0 {
			texts = append(texts, lines)
			if !ok {
				doc.Unreadable = append(doc.Unreadable, i+1)
			}
		}
		if stop != nil {
			doc.Stopped = fmt.Sprintf("reading stopped after %s, searxgate's time for one PDF", lim.Time)
			if stop.chars {
				doc.Stopped = fmt.Sprintf("the text stops at %d characters, searxgate's limit for one PDF", lim.Chars)
			}
			break
		}
	}
	doc.Read = len(texts)
	if doc.Stopped == "" && doc.Read < doc.Total {
		doc.Stopped = fmt.Sprintf("searxgate reads the first %d pages of a PDF", lim.Pages)
	}
	if doc.Read == 0 {
		return nil, fmt.Errorf("%w (it took longer than searxgate's time for one PDF)", ErrMalformed)
	}
	if len(doc.Unreadable) == doc.Read {
		return nil, fmt.Errorf("%w (no page's content could be read)", ErrMalformed)
	}
	if !slices.ContainsFunc(texts, func(lines []pdfLine) bool { return len(lines) > 0 }) {
		return nil, ErrNoText
	}
	md, heading := pdfMarkdown(texts)
	doc.Markdown = cutChars(md, lim.Chars)
	if doc.Title == "" {
		doc.Title = heading
	}
	return doc, nil
}

// readPDFPage reads one page's lines. stop, when set, says why reading
// must stop here; ok is false when the page could not be read, even in
// part.
func readPDFPage(ctx context.Context, p pdf.Page, budget *int) (lines []pdfLine, stop *pdfStop, ok bool) {
	pr := newPageReader(ctx, p, budget)
	err := guard(pr.read)
	var st pdfStop
	switch {
	case errors.As(err, &st):
		stop = &st
	case ctx.Err() != nil:
		stop = &pdfStop{}
	}
	ok = !pr.skipped && (err == nil || len(pr.runs) > 0)
	return linesOf(pr.runs), stop, ok
}

// guard runs f, turning a panic into an error: a pdfStop as itself,
// anything else (the library's parse errors, its runtime faults on a
// malformed file) as a short description.
func guard(f func()) (err error) {
	defer func() {
		x := recover()
		if x == nil {
			return
		}
		switch v := x.(type) {
		case pdfStop:
			err = v
		case runtime.Error:
			err = errors.New("malformed PDF")
		case error:
			err = errors.New(short(v.Error()))
		default:
			err = errors.New(short(fmt.Sprint(v)))
		}
	}()
	f()
	return nil
}

func (s pdfStop) Error() string {
	if s.chars {
		return "text limit"
	}
	return "time limit"
}

// short keeps an error's text to a line an agent can read.
func short(s string) string {
	s = mdtext.OneLine(s)
	if len(s) > 160 {
		s = strings.ToValidUTF8(s[:160], "") + "…"
	}
	return s
}

// openPDF opens body with the library, telling an encrypted file from a
// malformed one.
func openPDF(ctx context.Context, body []byte) (*pdf.Reader, error) {
	src := newPDFSource(ctx, body)
	if err := pdfSane(src.body); err != nil {
		return nil, fmt.Errorf("%w (%v)", ErrMalformed, err)
	}
	var rd *pdf.Reader
	err := guard(func() {
		var err error
		if rd, err = pdf.NewReader(src, int64(len(src.body))); err != nil {
			panic(err)
		}
	})
	switch {
	case err == nil:
		return rd, nil
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%w (it took longer than searxgate's time for one PDF)", ErrMalformed)
	case bytes.Contains(body, []byte("/Encrypt")):
		return nil, ErrEncrypted
	}
	return nil, fmt.Errorf("%w (%v)", ErrMalformed, err)
}

// pdfSource is a PDF's bytes as the library reads them: from its "%PDF-"
// on, up to its last "%%EOF" (what some servers add after it is not the
// file's), with a header line the library accepts (it refuses PDF 2.0's
// and a header line that goes on after the version). Every read checks
// the PDF's time.
type pdfSource struct {
	ctx  context.Context
	body []byte
	head []byte // what the first bytes read as
}

func newPDFSource(ctx context.Context, body []byte) *pdfSource {
	if i := bytes.Index(body[:min(len(body), 1024)], []byte("%PDF-")); i > 0 {
		body = body[i:]
	}
	if i := bytes.LastIndex(body, []byte("%%EOF")); i >= 0 {
		body = body[:i+5]
	}
	s := &pdfSource{ctx: ctx, body: body}
	if len(body) > 9 && bytes.HasPrefix(body, []byte("%PDF-")) {
		s.head = []byte("%PDF-1.7\n")
	}
	return s
}

func (s *pdfSource) ReadAt(p []byte, off int64) (int, error) {
	if s.ctx.Err() != nil {
		return 0, errPDFTime
	}
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	if off >= int64(len(s.body)) {
		return 0, io.EOF
	}
	n := copy(p, s.body[off:])
	if off < int64(len(s.head)) {
		copy(p, s.head[off:])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

var _ io.ReaderAt = (*pdfSource)(nil)

// pdfInfo reads the title, author and creation date of the PDF's Info
// dictionary. Titles that are a file's name or a placeholder are not
// titles.
func pdfInfo(rd *pdf.Reader, doc *Doc) {
	info := rd.Trailer().Key("Info")
	if info.Kind() != pdf.Dict {
		return
	}
	doc.Title = infoText(info.Key("Title"))
	doc.Author = infoText(info.Key("Author"))
	doc.Published = pdfDate(info.Key("CreationDate").Text())
	low := strings.ToLower(doc.Title)
	for _, junk := range []string{".doc", ".docx", ".pdf", ".tex", ".dvi", ".rtf", ".odt", ".indd", ".ps", ".txt"} {
		if strings.HasSuffix(low, junk) {
			doc.Title = ""
		}
	}
	switch low {
	case "untitled", "title", "document", "slide 1", "microsoft word":
		doc.Title = ""
	}
	if strings.HasPrefix(low, "microsoft word - ") {
		doc.Title = ""
	}
}

func infoText(v pdf.Value) string {
	s := mdtext.OneLine(cleanText(v.Text()))
	if len(s) > 300 {
		return ""
	}
	return s
}

// pdfDate reads a PDF date ("D:20240314120000Z", "D:20240314") as
// YYYY-MM-DD.
func pdfDate(s string) string {
	s = strings.TrimPrefix(strings.TrimSpace(s), "D:")
	if len(s) < 8 {
		return ""
	}
	t, err := time.Parse("20060102", s[:8])
	if err != nil {
		return ""
	}
	return t.Format("2006-01-02")
}

// pdfPages walks the page tree (depth-first, in order) and returns its
// first limit pages and how many the file has. The walk is bounded (in
// depth and in nodes visited), so a tree that loops or lies about its
// size costs little.
func pdfPages(rd *pdf.Reader, limit int) ([]pdf.Page, int) {
	const maxDepth, maxVisits = 32, 20000
	root := rd.Trailer().Key("Root").Key("Pages")
	type level struct {
		kids pdf.Value
		next int
	}
	stack := []level{{kids: root.Key("Kids")}}
	var pages []pdf.Page
	visits, complete := 0, true
	for len(stack) > 0 && len(pages) <= limit {
		if visits++; visits > maxVisits {
			complete = false
			break
		}
		top := &stack[len(stack)-1]
		if top.next >= top.kids.Len() {
			stack = stack[:len(stack)-1]
			continue
		}
		kid := top.kids.Index(top.next)
		top.next++
		if kids := kid.Key("Kids"); kids.Kind() == pdf.Array {
			if len(stack) < maxDepth {
				stack = append(stack, level{kids: kids})
			}
			continue
		}
		if kid.Kind() == pdf.Dict && kid.Key("Type").Name() != "Pages" {
			pages = append(pages, pdf.Page{V: kid})
		}
	}
	total := int(min(max(root.Key("Count").Int64(), 0), 1<<30))
	switch {
	case len(pages) > limit:
		pages = pages[:limit]
		total = max(total, limit+1)
	case complete && len(stack) == 0:
		total = len(pages)
	default:
		total = max(total, len(pages))
	}
	return pages, total
}

// cutChars keeps the first n characters of s, ending between words when
// a space is near.
func cutChars(s string, n int) string {
	at := mdtext.RuneOffset(s, n)
	if at >= len(s) {
		return s
	}
	cut := s[:at]
	if i := strings.LastIndexAny(cut, " \n"); i > len(cut)-200 && i > 0 {
		cut = cut[:i]
	}
	return strings.TrimSpace(cut)
}

// pages says how many pages were read, of how many, why reading stopped
// early and which pages could not be read.
func (d *Doc) Summary() string {
	s := fmt.Sprintf("%d of %d", d.Read, d.Total)
	if d.Stopped != "" {
		s += " (" + d.Stopped + ")"
	}
	if n := len(d.Unreadable); n > 0 {
		list := make([]string, 0, 10)
		for _, p := range d.Unreadable[:min(n, 10)] {
			list = append(list, fmt.Sprint(p))
		}
		if n > 10 {
			list = append(list, fmt.Sprintf("… %d more", n-10))
		}
		word := "page"
		if n > 1 {
			word = "pages"
		}
		s += fmt.Sprintf("; %s %s could not be read", word, strings.Join(list, ", "))
	}
	return s
}
