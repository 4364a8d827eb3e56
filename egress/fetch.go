package egress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"
)

// Errors of a fetch.
var (
	// ErrRedirect is wrapped by *RedirectError.
	ErrRedirect = errors.New("egress: refused redirect")
	// ErrTooManyRedirects: a fetch met more than MaxRedirects redirects.
	ErrTooManyRedirects = errors.New("egress: too many redirects")
	// ErrTooLarge: a body announced or sent more than MaxBytes.
	ErrTooLarge = errors.New("egress: body too large")
)

// RedirectError refuses a redirect. To is where it pointed. Err says why:
// ErrTooManyRedirects, the guard's refusal, or Config.OnRedirect's.
type RedirectError struct {
	To  *url.URL
	Err error
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("%v to %q: %v", ErrRedirect, e.To.Redacted(), e.Err)
}

// Unwrap gives ErrRedirect and the reason.
func (e *RedirectError) Unwrap() []error { return []error{ErrRedirect, e.Err} }

// Config is what a Fetcher needs. Each door of searxgate builds its own.
type Config struct {
	// AllowPrivate lets the fetcher reach loopback and private addresses.
	// Each door has its own switch: --allow-private for instances and the
	// list, --reader-allow-private, --image-proxy-allow-private.
	AllowPrivate bool
	// Dialer, when set, makes the connections (cmd shares one, which
	// notes failures). The fetcher uses a copy with its own AllowPrivate.
	// Nil builds one from Resolver, Connect, DialTimeout and Proxy.
	Dialer *Dialer
	// Resolver resolves names; nil is the system's.
	Resolver IPResolver
	// Connect opens a connection to an allowed address; nil dials TCP.
	// Tests route it to loopback.
	Connect func(ctx context.Context, network, addr string) (net.Conn, error)
	// DialTimeout bounds a lookup and connection, and a TLS handshake.
	// Zero: 10 s for the handshake, the context for the rest.
	DialTimeout time.Duration
	// Proxy is the outbound HTTP proxy (HTTPS_PROXY, NO_PROXY). The guard
	// checks each target first; the proxy is asked for the checked address.
	Proxy ProxyFunc
	// TLS is the client TLS configuration (roots, see Roots); nil is the
	// system's.
	TLS *tls.Config
	// UserAgent is sent unless the request sets its own.
	UserAgent string
	// MaxBytes caps a body (Response.ReadAll); ≤ 0: no cap.
	MaxBytes int64
	// Timeout bounds a whole fetch, redirects and body included; 0: the
	// context only.
	Timeout time.Duration
	// MaxRedirects bounds the redirects followed (default 5).
	MaxRedirects int
	// OnRedirect, when set, is asked about each redirect the guard
	// allowed; its error stops the fetch as it is.
	OnRedirect func(req *http.Request) error
	// MaxConnsPerHost bounds the connections to one host (0: no bound);
	// IdleConnsPerHost, those kept idle (default 2).
	MaxConnsPerHost  int
	IdleConnsPerHost int
}

// MaxHeaderBytes bounds a response's headers. A page's headers are a
// few KiB; net/http would read 10 MB.
const MaxHeaderBytes = 64 << 10

// Fetcher makes guarded GET requests. The guard checks the URL and every
// redirect; the dialer checks every address it connects to. It never
// keeps cookies and never uses a proxy from the environment: that proxy
// would be asked for the name, past the guard. It is safe for concurrent
// use.
type Fetcher struct {
	cfg    Config
	guard  Guard
	client *http.Client
}

// NewFetcher returns a Fetcher for cfg.
func NewFetcher(cfg Config) *Fetcher {
	if cfg.MaxRedirects <= 0 {
		cfg.MaxRedirects = 5
	}
	if cfg.IdleConnsPerHost <= 0 {
		cfg.IdleConnsPerHost = 2
	}
	var d Dialer
	if cfg.Dialer != nil {
		d = *cfg.Dialer
	} else {
		d = Dialer{Resolver: cfg.Resolver, Timeout: cfg.DialTimeout, Connect: cfg.Connect, Proxy: cfg.Proxy}
	}
	d.AllowPrivate = cfg.AllowPrivate
	handshake := cfg.DialTimeout
	if handshake <= 0 {
		handshake = 10 * time.Second
	}
	f := &Fetcher{cfg: cfg, guard: Guard{AllowPrivate: cfg.AllowPrivate}}
	rt := &http.Transport{
		Proxy:                  nil, // the dialer tunnels through cfg.Proxy
		DialContext:            d.DialContext,
		TLSClientConfig:        cfg.TLS.Clone(),
		MaxResponseHeaderBytes: MaxHeaderBytes,
		TLSHandshakeTimeout:    handshake,
		MaxConnsPerHost:        cfg.MaxConnsPerHost,
		MaxIdleConnsPerHost:    cfg.IdleConnsPerHost,
		IdleConnTimeout:        30 * time.Second,
	}
	f.client = &http.Client{
		Transport:     rt,
		Jar:           nil, // no cookies, ever
		Timeout:       cfg.Timeout,
		CheckRedirect: f.checkRedirect,
	}
	return f
}

// checkRedirect checks each hop as the first URL was checked.
func (f *Fetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > f.cfg.MaxRedirects {
		return &RedirectError{To: req.URL, Err: fmt.Errorf("%w: more than %d", ErrTooManyRedirects, f.cfg.MaxRedirects)}
	}
	if err := f.guard.CheckLiteral(req.URL.String()); err != nil {
		return &RedirectError{To: req.URL, Err: err}
	}
	if f.cfg.OnRedirect != nil {
		return f.cfg.OnRedirect(req)
	}
	return nil
}

// Get fetches rawURL with header. The guard checks rawURL first: a scheme
// other than http(s), a literal address that is not public, a localhost
// name. Names are checked by the dialer. The caller closes the body.
func (f *Fetcher) Get(ctx context.Context, rawURL string, header http.Header) (*Response, error) {
	if err := f.guard.CheckLiteral(rawURL); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadURL, err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if f.cfg.UserAgent != "" && req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", f.cfg.UserAgent)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, err
	}
	return &Response{Response: resp, max: f.cfg.MaxBytes}, nil
}

// Response is an answer of Get.
type Response struct {
	*http.Response
	max int64 // MaxBytes
}

// Announced reports whether the headers announce a body over MaxBytes.
func (r *Response) Announced() bool {
	return r.max > 0 && r.ContentLength > r.max
}

// ReadAll reads the body, at most MaxBytes: ErrTooLarge when more is
// announced or sent.
func (r *Response) ReadAll() ([]byte, error) {
	if r.Announced() {
		return nil, fmt.Errorf("%w: %d bytes announced, more than %d", ErrTooLarge, r.ContentLength, r.max)
	}
	var body io.Reader = r.Body
	if r.max > 0 {
		body = io.LimitReader(r.Body, r.max+1)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	if r.max > 0 && int64(len(b)) > r.max {
		return nil, fmt.Errorf("%w: more than %d bytes sent", ErrTooLarge, r.max)
	}
	return b, nil
}

// Roots is the system's roots plus the PEM certificates in file (the
// operator's --ca-file); nil when file is "".
func Roots(file string) (*x509.CertPool, error) {
	if file == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate", file)
	}
	return pool, nil
}
