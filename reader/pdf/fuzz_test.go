package pdf

import (
	"context"
	"errors"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/searxgate/searxgate/reader/pdf/pdftest"
)

// FuzzPDF feeds any bytes to the PDF reader as searxgate runs it, in a
// worker with a memory limit: whatever the library does with them, the
// answer is a document or an error, never this process's end; what comes
// out is valid UTF-8, within the text limit, with as many pages read as
// the file has at most. The hostile files are among its seeds.
func FuzzPDF(f *testing.F) {
	f.Add(pdftest.Paper().Bytes())
	f.Add(pdftest.Paper().Bytes()[:3000])
	f.Add(pdftest.TextPages(2).Bytes())
	f.Add([]byte("%PDF-1.4\n%%EOF\n"))
	f.Add([]byte("%PDF-1.7\nstartxref\n0\n%%EOF"))
	for _, body := range pdftest.Hostile() {
		f.Add(body)
	}
	w := testWorker(f)
	lim := Limits{Pages: 5, Chars: 2000, Time: 2 * time.Second}
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > 1<<16 {
			return
		}
		doc, _, err := w.Read(context.Background(), "", body, lim)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrEncrypted) && !errors.Is(err, ErrNoText) {
				t.Fatalf("an error that is none of the PDF's: %v", err)
			}
			return
		}
		if !utf8.ValidString(doc.Markdown) || !utf8.ValidString(doc.Title) || !utf8.ValidString(doc.Author) {
			t.Fatalf("invalid UTF-8 out")
		}
		if utf8.RuneCountInString(doc.Markdown) > lim.Chars || doc.Read > lim.Pages || doc.Read > doc.Total {
			t.Fatalf("%d characters, %s", utf8.RuneCountInString(doc.Markdown), doc.Summary())
		}
	})
}
