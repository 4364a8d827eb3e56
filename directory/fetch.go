package directory

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/searxgate/searxgate/egress"
)

// Errors of a fetch.
var (
	// ErrStatus: the server answered with a status other than 200 or 304.
	ErrStatus = errors.New("directory: unexpected HTTP status")
	// ErrTooLarge: the body is larger than the fetcher's cap.
	ErrTooLarge = errors.New("directory: instance list too large")
	// ErrRedirect: a redirect to a scheme other than http or https, to an
	// address the guard refuses, or too many redirects. It is the guarded
	// fetcher's (egress.ErrRedirect).
	ErrRedirect = egress.ErrRedirect
)

// Saved is a copy of the instance list as it was fetched, as the Cache keeps
// it.
type Saved struct {
	Raw          []byte
	ETag         string
	LastModified string
	FetchedAt    time.Time // wall-clock time of the fetch (or of the last 304)
}

// Cache keeps the last good instance list across restarts. The store
// satisfies it through a small adapter.
type Cache interface {
	// LoadDirectory returns the saved copy; ok is false when there is none.
	LoadDirectory() (s Saved, ok bool, err error)
	// SaveDirectory replaces the saved copy.
	SaveDirectory(Saved) error
}

// FetchResult is what a Fetcher got.
type FetchResult struct {
	Body         []byte
	ETag         string
	LastModified string
	NotModified  bool // the server answered 304: prev is still current
}

// Fetcher gets the instance list from a URL.
type Fetcher interface {
	// Fetch does a conditional GET (If-None-Match / If-Modified-Since from
	// prev); it returns NotModified=true on 304.
	Fetch(ctx context.Context, url string, prev Saved) (FetchResult, error)
}

// httpFetcher is the Fetcher of NewFetcher.
type httpFetcher struct {
	f *egress.Fetcher
}

// NewHTTPFetcher returns a Fetcher that checks no address (a guard with
// private addresses allowed: only the scheme and host syntax): each
// fetch is bounded by timeout (0 means none), a body larger than maxBytes
// fails with ErrTooLarge (maxBytes ≤ 0 means no cap), it sends userAgent,
// follows at most 5 redirects and only to http or https, and decodes
// gzip. For tests and lists on the caller's own network.
func NewHTTPFetcher(timeout time.Duration, maxBytes int64, userAgent string) Fetcher {
	return NewFetcher(egress.NewFetcher(egress.Config{AllowPrivate: true, Timeout: timeout, MaxBytes: maxBytes, UserAgent: userAgent}))
}

// NewFetcher returns a Fetcher on the guarded fetcher f, whose guard,
// dialer, limits and redirect policy every fetch keeps.
func NewFetcher(f *egress.Fetcher) Fetcher {
	return &httpFetcher{f: f}
}

func (f *httpFetcher) Fetch(ctx context.Context, url string, prev Saved) (FetchResult, error) {
	h := http.Header{"Accept": {"application/json"}}
	if prev.ETag != "" {
		h.Set("If-None-Match", prev.ETag)
	}
	if prev.LastModified != "" {
		h.Set("If-Modified-Since", prev.LastModified)
	}
	resp, err := f.f.Get(ctx, url, h)
	if err != nil {
		return FetchResult{}, fmt.Errorf("directory: fetch %s: %w", url, err)
	}
	defer resp.Body.Close()
	res := FetchResult{ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified")}
	switch resp.StatusCode {
	case http.StatusNotModified:
		res.NotModified = true
		if res.ETag == "" {
			res.ETag = prev.ETag
		}
		if res.LastModified == "" {
			res.LastModified = prev.LastModified
		}
		return res, nil
	case http.StatusOK:
	default:
		return FetchResult{}, fmt.Errorf("%w: %s answered %d", ErrStatus, url, resp.StatusCode)
	}
	res.Body, err = resp.ReadAll()
	switch {
	case errors.Is(err, egress.ErrTooLarge):
		return FetchResult{}, fmt.Errorf("%w: %s: %w", ErrTooLarge, url, err)
	case err != nil:
		return FetchResult{}, fmt.Errorf("directory: fetch %s: reading body: %w", url, err)
	}
	return res, nil
}
