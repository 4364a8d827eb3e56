package reader

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/searxgate/searxgate/reader/pdf"
)

// pdfPage fills p from the PDF in body: in the worker process when the
// reader has one (Config.PDFWorker), in client's turn, whose time client
// is charged; in this one otherwise.
func (r *Reader) pdfPage(ctx context.Context, p *Page, body []byte, client string) (*Page, error) {
	lim := pdf.Limits{Pages: r.cfg.PDFPages, Chars: r.cfg.PDFChars, Time: r.cfg.PDFTime}
	var doc *pdf.Doc
	var err error
	if r.cfg.PDFWorker != nil {
		var used time.Duration
		doc, used, err = r.cfg.PDFWorker.Read(ctx, client, body, lim)
		r.costs.charge(client, used)
		if errors.Is(err, pdf.ErrNoWorker) && ctx.Err() == nil {
			return nil, &QueueError{RetryAfter: r.cfg.PDFTime, Reason: fmt.Sprintf(
				"no PDF worker was free for %s within %s (searxgate reads a few PDFs at a time, its clients taking turns)",
				p.URL, waitedText(r.cfg.PDFWorker.Wait()))}
		}
	} else {
		doc, err = pdf.Extract(ctx, body, lim, r.cfg.Clock.Now)
	}
	if ctx.Err() != nil {
		// The caller gave up (or its deadline passed): what was read is
		// not the PDF's, and is not cached.
		return nil, fmt.Errorf("%w: reading the PDF %s was cut short", ErrTimeout, p.URL)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s %v", ErrType, p.URL, err)
	}
	p.Title, p.Byline, p.Published, p.Markdown = doc.Title, doc.Author, doc.Published, doc.Markdown
	p.Pages = doc.Summary()
	return p, nil
}
