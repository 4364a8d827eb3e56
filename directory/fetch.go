package directory

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// Errors of a fetch.
var (
	// ErrStatus: the server answered with a status other than 200 or 304.
	ErrStatus = errors.New("directory: unexpected HTTP status")
	// ErrTooLarge: the body is larger than the fetcher's cap.
	ErrTooLarge = errors.New("directory: instance list too large")
	// ErrRedirect: a redirect to a scheme other than http or https, to an
	// address the guard refuses, or too many redirects.
	ErrRedirect = errors.New("directory: refused redirect")
)

// maxRedirects bounds the redirects a fetch follows.
const maxRedirects = 5

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
	client    *http.Client
	maxBytes  int64
	userAgent string
	guard     *Guard
}

// FetchOptions configures NewFetcher.
type FetchOptions struct {
	Timeout   time.Duration // of a whole fetch, redirects included; 0: none
	MaxBytes  int64         // a larger body fails with ErrTooLarge; ≤ 0: no cap
	UserAgent string
	// DialContext, when set, makes every connection, and no HTTP proxy from
	// the environment is used (it would connect in the dialer's place):
	// searxgate passes the dialer that checks each address it connects to.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// TLS, when set, is the client TLS configuration (roots besides the
	// system's); nil: the system's.
	TLS *tls.Config
	// Guard, when set, checks the URL and every redirect target before it
	// is requested: a scheme other than http(s), a literal address that is
	// not public or a localhost name is refused (ErrPrivateAddress, or
	// ErrRedirect for a redirect); names are left to the dialer
	// (Guard.CheckLiteral).
	Guard *Guard
}

// NewHTTPFetcher returns a Fetcher on net/http: each fetch is bounded by
// timeout (0 means none), a body larger than maxBytes fails with
// ErrTooLarge (maxBytes ≤ 0 means no cap), it sends userAgent, follows at
// most 5 redirects and only to http or https, and decodes gzip. It dials
// with net/http's default transport: NewFetcher can guard the addresses.
func NewHTTPFetcher(timeout time.Duration, maxBytes int64, userAgent string) Fetcher {
	return NewFetcher(FetchOptions{Timeout: timeout, MaxBytes: maxBytes, UserAgent: userAgent})
}

// NewFetcher returns a Fetcher on net/http as NewHTTPFetcher does, with
// the dialer and the address guard of o.
func NewFetcher(o FetchOptions) Fetcher {
	var transport http.RoundTripper = http.DefaultTransport
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t = t.Clone()
		if o.DialContext != nil {
			t.DialContext = o.DialContext
			t.Proxy = nil
		}
		if o.TLS != nil {
			t.TLSClientConfig = o.TLS.Clone()
		}
		transport = t
	}
	f := &httpFetcher{maxBytes: o.MaxBytes, userAgent: o.UserAgent, guard: o.Guard}
	f.client = &http.Client{
		Transport: transport,
		Timeout:   o.Timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if s := req.URL.Scheme; s != "http" && s != "https" {
				return fmt.Errorf("%w: to %q", ErrRedirect, req.URL.Redacted())
			}
			if len(via) >= maxRedirects {
				return fmt.Errorf("%w: more than %d", ErrRedirect, maxRedirects)
			}
			if err := f.check(req.URL.String()); err != nil {
				return fmt.Errorf("%w: to %q: %w", ErrRedirect, req.URL.Redacted(), err)
			}
			return nil
		},
	}
	return f
}

// check runs the guard on rawURL, leaving names to the dialer, which
// checks what it connects to (Guard.CheckLiteral).
func (f *httpFetcher) check(rawURL string) error {
	if f.guard == nil {
		return nil
	}
	return f.guard.CheckLiteral(rawURL)
}

func (f *httpFetcher) Fetch(ctx context.Context, url string, prev Saved) (FetchResult, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return FetchResult{}, fmt.Errorf("directory: fetch %s: %w", url, err)
	}
	if err := f.check(url); err != nil {
		return FetchResult{}, fmt.Errorf("directory: fetch %s: %w", url, err)
	}
	if f.userAgent != "" {
		req.Header.Set("User-Agent", f.userAgent)
	}
	req.Header.Set("Accept", "application/json")
	if prev.ETag != "" {
		req.Header.Set("If-None-Match", prev.ETag)
	}
	if prev.LastModified != "" {
		req.Header.Set("If-Modified-Since", prev.LastModified)
	}
	resp, err := f.client.Do(req)
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
	if f.maxBytes > 0 && resp.ContentLength > f.maxBytes {
		return FetchResult{}, fmt.Errorf("%w: %s announces %d bytes, cap %d", ErrTooLarge, url, resp.ContentLength, f.maxBytes)
	}
	var body io.Reader = resp.Body
	if f.maxBytes > 0 {
		body = io.LimitReader(resp.Body, f.maxBytes+1)
	}
	res.Body, err = io.ReadAll(body)
	if err != nil {
		return FetchResult{}, fmt.Errorf("directory: fetch %s: reading body: %w", url, err)
	}
	if f.maxBytes > 0 && int64(len(res.Body)) > f.maxBytes {
		return FetchResult{}, fmt.Errorf("%w: %s sent more than %d bytes", ErrTooLarge, url, f.maxBytes)
	}
	return res, nil
}
