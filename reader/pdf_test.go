package reader

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/searxgate/searxgate/internal/clock"
	"github.com/searxgate/searxgate/reader/pdf"
	"github.com/searxgate/searxgate/reader/pdf/pdftest"
)

// TestMain lets this test binary be a PDF worker, as searxgate is.
func TestMain(m *testing.M) {
	pdf.ServeIfWorker()
	os.Exit(m.Run())
}

// pdfLim are the reader's default limits.
var pdfLim = pdf.Limits{Pages: 50, Chars: 500_000, Time: 5 * time.Second}

// fixedNow is a clock that does not move.
func fixedNow() time.Time { return time.Unix(1_700_000_000, 0) }

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
	fromFile, err := pdf.Extract(context.Background(), file, pdfLim, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	fromSpec, err := pdf.Extract(context.Background(), pdftest.Paper().Bytes(), pdfLim, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	if fromFile.Markdown != fromSpec.Markdown || fromFile.Title != fromSpec.Title || fromFile.Summary() != fromSpec.Summary() {
		t.Errorf("paper.pdf is not what paperSpec writes (-args -update writes it):\n%s\n---\n%s", fromFile.Markdown, fromSpec.Markdown)
	}
}

// TestReadPDF reads the paper through the whole reader: its citation
// header, its content type, and the views an agent asks for (headings, a
// section, paragraphs, a window of characters) on its text.
func TestReadPDF(t *testing.T) {
	paper := pdftest.Paper().Bytes()
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

// TestPDFThroughReader: a PDF the reader cannot read is an ErrType error
// naming its URL; the PDF's time is the reader's clock; a caller who has
// gone gets an error and nothing is cached.
func TestPDFThroughReader(t *testing.T) {
	paper := pdftest.Paper().Bytes()
	t.Run("unreadable", func(t *testing.T) {
		// Through the reader: ErrType, naming the URL.
		srv := pdfServer(t, map[string]struct {
			ctype string
			body  []byte
		}{"/broken.pdf": {"application/pdf", paper[:len(paper)/2]}})
		r, base := publicReader(t, srv, nil)
		_, err := r.Read(context.Background(), Request{URL: base + "/broken.pdf"})
		if !errors.Is(err, ErrType) || !strings.Contains(err.Error(), base+"/broken.pdf is a PDF searxgate cannot read") {
			t.Errorf("%v", err)
		}
	})
	t.Run("time", func(t *testing.T) {
		clk := steppingClock{clock.NewFake(time.Unix(1_700_000_000, 0))}
		// Through the reader, with its clock.
		srv := pdfServer(t, map[string]struct {
			ctype string
			body  []byte
		}{"/long.pdf": {"application/pdf", pdftest.TextPages(20).Bytes()}})
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
		if _, err := r.pdfPage(ctx, p, pdftest.Paper().Bytes(), ""); !errors.Is(err, ErrTimeout) {
			t.Errorf("cancelled: %v", err)
		}
	})
	t.Run("hostile", func(t *testing.T) {
		// With a worker, as searxgate reads them: each file that would end
		// the process is an ErrType error naming the URL.
		exe, err := os.Executable()
		if err != nil {
			t.Skipf("cannot find the test binary to start it as a PDF worker: %v", err)
		}
		files := map[string]struct {
			ctype string
			body  []byte
		}{}
		for name, body := range pdftest.Hostile() {
			files["/"+strings.ReplaceAll(name, " ", "-")+".pdf"] = struct {
				ctype string
				body  []byte
			}{"application/pdf", body}
		}
		paperAt := "/paper.pdf"
		srv := pdfServer(t, mapsWith(files, paperAt, paper))
		worker := pdf.NewWorker(pdf.WorkerConfig{Command: []string{exe}})
		r, base := publicReader(t, srv, func(c *Config) { c.PDFWorker = worker; c.PerHostPerMinute = 1000 })
		for path := range files {
			if path == paperAt {
				continue
			}
			_, err := r.Read(context.Background(), Request{URL: base + path})
			if !errors.Is(err, ErrType) || !strings.Contains(err.Error(), base+path+" is a PDF searxgate cannot read (") {
				t.Errorf("%s: %v", path, err)
			}
		}
		// And the reader goes on reading.
		if res, err := r.Read(context.Background(), Request{URL: base + paperAt}); err != nil || res.Pages != "3 of 3" {
			t.Errorf("the paper after the hostile files: %v", err)
		}
	})
	t.Run("no text", func(t *testing.T) {
		scan := pdftest.Spec{Pages: []string{"q 468 0 0 648 72 72 cm /Im1 Do Q\n0.9 g 72 72 468 648 re f", ""}}
		srv := pdfServer(t, map[string]struct {
			ctype string
			body  []byte
		}{"/scan.pdf": {"application/pdf", scan.Bytes()}})
		r, base := publicReader(t, srv, nil)
		_, err := r.Read(context.Background(), Request{URL: base + "/scan.pdf"})
		if !errors.Is(err, ErrType) || !strings.Contains(err.Error(), "is a PDF without a text layer") {
			t.Errorf("%v", err)
		}
	})
}

// mapsWith is files with body served at path as a PDF.
func mapsWith(files map[string]struct {
	ctype string
	body  []byte
}, path string, body []byte) map[string]struct {
	ctype string
	body  []byte
} {
	files[path] = struct {
		ctype string
		body  []byte
	}{"application/pdf", body}
	return files
}

// steppingClock moves a second each time it is read: reading a PDF costs
// a second a page, and nothing sleeps.
type steppingClock struct{ *clock.Fake }

func (c steppingClock) Now() time.Time {
	c.Advance(time.Second)
	return c.Fake.Now()
}
