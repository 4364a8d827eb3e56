package upstream

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/detect"
)

// Formats an instance answers in, as SearXNG names them.
const (
	FormatHTML = "html"
	FormatJSON = "json"
	FormatCSV  = "csv"
	FormatRSS  = "rss"
)

// Transport errors, as reasons the pool and the 503 body understand.
var (
	ErrTimeout   = errors.New("timeout")
	ErrTransport = errors.New("transport")
	ErrTooLarge  = errors.New("too_large")
	// ErrTransport is narrowed, where the cause is known, to one of these:
	// a name that does not resolve (often: no network at all), nothing
	// listening, a TLS failure, a connection reset or cut mid-answer.
	ErrDNS     = fmt.Errorf("%w: dns", ErrTransport)
	ErrRefused = fmt.Errorf("%w: connection refused", ErrTransport)
	ErrTLS     = fmt.Errorf("%w: tls", ErrTransport)
	ErrReset   = fmt.Errorf("%w: connection reset", ErrTransport)
	// ErrBusy: searxgate's own connections to the instance are all in use;
	// the instance did nothing wrong.
	ErrBusy = errors.New("busy")
)

// Config is how searxgate talks to instances.
type Config struct {
	UserAgent string // sent as is: "searxgate/<version> (+contact)"
	// MaxBody caps an answer, compressed and decompressed alike (default
	// 4 MiB). A larger answer is too_large, never read whole.
	MaxBody int
	// MaxConnLifetime renews keep-alive connections after this long, give or
	// take a fifth chosen per instance so they do not all renew together
	// (default 5 min).
	MaxConnLifetime time.Duration
	// Dial replaces the dialer (tests use the sim fleet's in-memory one; the
	// server uses one that refuses non-public addresses unless allowed).
	Dial fasthttp.DialFunc
	// MaxConns caps the connections to one instance (default 8); past it a
	// search waits up to a second for one, then gives up without blaming
	// the instance (ErrBusy).
	MaxConns int
	// AllowRetry is asked before a search is sent again on a fresh
	// connection because the kept-alive one was closed under it (see
	// retryStaleConn); the proxy counts it against the instance's budget.
	// nil allows it.
	AllowRetry func(instance string) bool
	// Authorization, when set, gives the Authorization header to send to
	// an instance ("" = none): an own instance behind HTTP basic auth.
	// The instance is known by its URL without credentials everywhere.
	Authorization func(instance string) string
	// TLS is the client TLS configuration; nil = the system's roots.
	TLS  *tls.Config
	Rand *rand.Rand // for the lifetime jitter; nil = a random seed
}

// Client is searxgate's client of the instances: one fasthttp HostClient
// per instance (a Host), so that each keeps its own connections and
// lifetime.
type Client struct {
	cfg Config

	mu    sync.Mutex // guards cfg.Rand, and hosts when it is a mapHosts
	hosts Hosts
}

// Hosts keeps each instance's Host for a Client. The proxy keeps them in
// its instance records, so that forgetting an instance drops its
// connections with the rest of what is kept about it; a Client given none
// keeps them in a map of its own. A Client calls Hosts under its own lock,
// one call at a time.
type Hosts interface {
	// Host returns instance's Host, nil when none is kept.
	Host(instance string) *Host
	// Keep remembers h for instance when the store may (a record store
	// keeps nothing for an instance that has no record).
	Keep(instance string, h *Host)
}

type mapHosts map[string]*Host // guarded by Client.mu

func (m mapHosts) Host(instance string) *Host    { return m[instance] }
func (m mapHosts) Keep(instance string, h *Host) { m[instance] = h }

// Host is one instance's client: its connections, their lifetime, and
// where its pages are.
type Host struct {
	hc     *fasthttp.HostClient
	prefix string // the instance's path, ending in "/"
	host   string // Host header value
}

// CloseIdle closes h's idle connections (its instance was forgotten); a
// nil h has none.
func (h *Host) CloseIdle() {
	if h != nil {
		h.hc.CloseIdleConnections()
	}
}

// New returns a client of the instances, keeping their Hosts in hosts
// (nil: a map of its own).
func New(cfg Config, hosts Hosts) *Client {
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 4 << 20
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = 8
	}
	if cfg.MaxConnLifetime <= 0 {
		cfg.MaxConnLifetime = 5 * time.Minute
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	if hosts == nil {
		hosts = mapHosts{}
	}
	return &Client{cfg: cfg, hosts: hosts}
}

// MaxBody is the cap on an answer, decoded (Config.MaxBody with its
// default).
func (u *Client) MaxBody() int { return u.cfg.MaxBody }

func (u *Client) host(instance string) (*Host, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if h := u.hosts.Host(instance); h != nil {
		return h, nil
	}
	pu, err := url.Parse(instance)
	if err != nil || pu.Host == "" || (pu.Scheme != "http" && pu.Scheme != "https") {
		return nil, fmt.Errorf("%w: bad instance URL %q", ErrTransport, instance)
	}
	addr := pu.Host
	if pu.Port() == "" {
		if pu.Scheme == "https" {
			addr = net.JoinHostPort(pu.Hostname(), "443")
		} else {
			addr = net.JoinHostPort(pu.Hostname(), "80")
		}
	}
	prefix := pu.EscapedPath()
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	h := &Host{hc: u.hostClient(instance, addr, pu.Scheme == "https"), prefix: prefix, host: pu.Host}
	u.hosts.Keep(instance, h)
	return h, nil
}

// hostClient is the fasthttp client of one instance at addr; u.mu is held.
func (u *Client) hostClient(instance, addr string, isTLS bool) *fasthttp.HostClient {
	life := u.cfg.MaxConnLifetime
	life += time.Duration((u.cfg.Rand.Float64()*0.4 - 0.2) * float64(life))
	return &fasthttp.HostClient{
		Addr:               addr,
		Name:               u.cfg.UserAgent,
		IsTLS:              isTLS,
		TLSConfig:          u.cfg.TLS,
		Dial:               u.cfg.Dial,
		MaxConns:           u.cfg.MaxConns,
		MaxConnWaitTimeout: time.Second,
		MaxConnDuration:    life,
		// Shorter than the idle timeouts servers commonly use (nginx 75 s,
		// many 15 to 60 s), so that an idle connection is mostly dropped by
		// us before the server closes it under a request.
		MaxIdleConnDuration:       10 * time.Second,
		MaxResponseBodySize:       u.cfg.MaxBody,
		MaxIdemponentCallAttempts: 2,
		RetryIfErr: func(req *fasthttp.Request, attempts int, err error) (bool, bool) {
			if _, retry := retryStaleConn(req, attempts, err); !retry {
				return false, false
			}
			return false, u.cfg.AllowRetry == nil || u.cfg.AllowRetry(instance)
		},
		NoDefaultUserAgentHeader:      true,
		DisableHeaderNamesNormalizing: false,
		ReadBufferSize:                16 << 10,
	}
}

// retryStaleConn retries a search once, on a fresh connection, when the
// connection was closed before the first byte of an answer: mostly a
// kept-alive connection the server had closed, which never read the
// request. (fasthttp cannot tell that from a server that read the request
// and hung up, so the retry also asks the politeness budget.) Nothing else
// is retried here; a search's own attempts go to other instances.
func retryStaleConn(_ *fasthttp.Request, attempts int, err error) (resetTimeout, retry bool) {
	return false, attempts < 2 && (errors.Is(err, fasthttp.ErrConnectionClosed) || errors.Is(err, io.EOF))
}

// maxGetQuery is the longest query string sent in a GET; a search with a
// longer one is POSTed.
const maxGetQuery = 2048

// Reply is one upstream answer, owned by the caller (nothing points into
// fasthttp's buffers).
type Reply struct {
	Status int
	Header detect.Headers // the few response headers verdicts read (keptHeaders)
	Body   []byte         // decoded
}

// Release gives the reply's body back for a later answer to be decoded
// into: a miss decoded every answer into a new buffer of its size. The
// reply's Body must not be used after, nor anything that points into it
// (detect's verdicts never do).
func (r *Reply) Release() {
	if r == nil || cap(r.Body) == 0 || cap(r.Body) > maxPooledBody {
		return
	}
	b := r.Body[:0]
	r.Body = nil
	bodies.Put(&b)
}

// bodies keeps decoded bodies given back (Release) for reuse.
var bodies sync.Pool // of *[]byte

// maxPooledBody is the largest body kept for reuse: a rare large answer
// is not held on to.
const maxPooledBody = 256 << 10

// bodyBuffer returns an empty buffer of at least n bytes, one given back
// when it is large enough.
func bodyBuffer(n int) []byte {
	if b, _ := bodies.Get().(*[]byte); b != nil && cap(*b) >= n {
		return (*b)[:0]
	}
	return make([]byte, 0, n)
}

// keptHeaders are the response headers copied out of an answer.
var keptHeaders = []string{"Retry-After", "RateLimit-Reset", "RateLimit", "X-RateLimit-Reset", "Location",
	"Content-Type", "Server", "Cf-Mitigated", "Cf-Ray", "Set-Cookie"}

// Get sends GET <instance><path>?<args> with searxgate's header set and
// returns the decoded answer, or ErrTimeout, ErrTransport or ErrTooLarge.
// Redirects are never followed. acceptLanguage must not be empty.
//
// timeout is the time the answer has: the caller's deadline less its
// clock's now. The deadline fasthttp and the connection keep is real time
// (time.Now plus timeout), whatever clock the caller's deadline was read
// on (a test's fake one is far from real time).
func (u *Client) Get(instance, path string, args *fasthttp.Args, acceptLanguage string, timeout time.Duration) (*Reply, error) {
	h, err := u.host(instance)
	if err != nil {
		return nil, err
	}
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)

	uri := req.URI()
	if h.hc.IsTLS {
		uri.SetScheme("https")
	} else {
		uri.SetScheme("http")
	}
	uri.SetHost(h.host)
	uri.SetPath(h.prefix + path)
	req.Header.SetMethod(fasthttp.MethodGet)
	if args != nil {
		if qs := args.QueryString(); len(qs) > maxGetQuery && path == "search" {
			// A long search goes as a form, as SearXNG's own page posts
			// it: a request line this long is over many servers' limit
			// (nginx's is 8 KiB, fasthttp's 4 KiB).
			req.Header.SetMethod(fasthttp.MethodPost)
			req.Header.SetContentType("application/x-www-form-urlencoded")
			req.SetBody(qs)
		} else {
			uri.SetQueryStringBytes(qs)
		}
	}
	req.Header.SetUserAgent(u.cfg.UserAgent)
	req.Header.Set("Accept", "text/html,application/json;q=0.9,*/*;q=0.8")
	req.Header.Set("Accept-Encoding", "gzip")
	req.Header.Set("Accept-Language", acceptLanguage)
	if u.cfg.Authorization != nil {
		if a := u.cfg.Authorization(instance); a != "" {
			req.Header.Set("Authorization", a)
		}
	}

	if err := h.hc.DoDeadline(req, resp, time.Now().Add(timeout)); err != nil {
		return nil, classifyTransport(err)
	}
	r := &Reply{Status: resp.StatusCode(), Header: make(detect.Headers, 4)}
	for _, k := range keptHeaders {
		if v := resp.Header.Peek(k); len(v) > 0 {
			r.Header[k] = string(v)
		}
	}
	r.Body, err = decodeBody(resp.Header.ContentEncoding(), resp.Body(), u.cfg.MaxBody)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// classifyTransport maps a client error to ErrTimeout, ErrTooLarge or
// ErrTransport, keeping the original for the log.
func classifyTransport(err error) error {
	var ne net.Error
	switch {
	case errors.Is(err, fasthttp.ErrTimeout), errors.Is(err, fasthttp.ErrDialTimeout),
		errors.Is(err, fasthttp.ErrTLSHandshakeTimeout),
		errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	case errors.Is(err, fasthttp.ErrNoFreeConns):
		return fmt.Errorf("%w: %w", ErrBusy, err)
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		return fmt.Errorf("%w: %w", ErrTooLarge, err)
	}
	var dns *net.DNSError
	var certErr *tls.CertificateVerificationError
	var recErr tls.RecordHeaderError
	var alert tls.AlertError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(err, &dns):
		return fmt.Errorf("%w: %w", ErrDNS, err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("%w: %w", ErrRefused, err)
	case errors.As(err, &certErr), errors.As(err, &recErr), errors.As(err, &alert),
		errors.As(err, &unknownAuth), errors.As(err, &hostErr), errors.As(err, &invalid),
		strings.HasPrefix(err.Error(), "tls: "):
		return fmt.Errorf("%w: %w", ErrTLS, err)
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, io.EOF), errors.Is(err, fasthttp.ErrConnectionClosed):
		return fmt.Errorf("%w: %w", ErrReset, err)
	}
	return fmt.Errorf("%w: %w", ErrTransport, err)
}

// Reason is the reason a failed upstream search is recorded with, for
// an error Get returned.
func Reason(err error) detect.Reason {
	switch {
	case errors.Is(err, ErrTimeout):
		return detect.Timeout
	case errors.Is(err, ErrTooLarge):
		return detect.TooLarge
	case errors.Is(err, ErrDNS):
		return detect.DNS
	case errors.Is(err, ErrRefused):
		return detect.ConnRefused
	case errors.Is(err, ErrTLS):
		return detect.TLS
	case errors.Is(err, ErrReset):
		return detect.Reset
	default:
		return detect.Transport
	}
}

// decodeBody undoes gzip (the only encoding searxgate asks for), reading
// at most max decoded bytes, so that a small compressed bomb cannot grow
// past the cap. The result is a fresh slice the caller owns.
//
// klauspost/compress (fasthttp's own compression library) inflates from a
// *bytes.Reader about a third faster than compress/gzip; inflating was
// about a tenth of a cache miss's CPU. fasthttp's own gunzip reads through
// a reader type that misses that fast path.
func decodeBody(encoding, body []byte, max int) ([]byte, error) {
	switch {
	case len(encoding) == 0 || bytes.EqualFold(encoding, []byte("identity")):
		return append(bodyBuffer(len(body)), body...), nil
	case !bytes.EqualFold(encoding, []byte("gzip")):
		return nil, fmt.Errorf("%w: unsupported Content-Encoding %q", ErrTransport, encoding)
	}
	src := bytes.NewReader(body)
	zr, _ := gzipReaders.Get().(*gzip.Reader)
	var err error
	if zr == nil {
		zr, err = gzip.NewReader(src)
	} else {
		err = zr.Reset(src)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: gzip: %v", ErrTransport, err)
	}
	w := cappedWriter{b: bodyBuffer(decodedSizeHint(body, max)), max: max}
	_, err = zr.WriteTo(&w)
	if err == nil {
		err = zr.Close()
	}
	// A reader is reused (its window is most of a miss's allocations)
	// unless it failed midway.
	if err == nil {
		gzipReaders.Put(zr)
		return w.b, nil
	}
	if w.over {
		return nil, fmt.Errorf("%w: decoded body over %d bytes", ErrTooLarge, max)
	}
	return nil, fmt.Errorf("%w: gzip: %v", ErrTransport, err)
}

// decodedSizeHint is the decoded length gzip's trailer gives for body
// (RFC 1952 ISIZE), so that the buffer is made once instead of grown. It
// is only a hint: a lying trailer costs a regrowth, or unused capacity of
// at most 32 times the body (JSON rarely compresses past 10) and never past
// limit.
func decodedSizeHint(body []byte, limit int) int {
	n := len(body) * 4
	if len(body) >= 18 { // the smallest gzip member
		n = min(int(binary.LittleEndian.Uint32(body[len(body)-4:])), len(body)*32)
	}
	return min(max(n, len(body)), limit)
}

// gzipReaders keeps gzip readers for reuse.
var gzipReaders sync.Pool

// cappedWriter collects at most max bytes, and fails the write that
// would pass them.
type cappedWriter struct {
	b    []byte
	max  int
	over bool
}

func (w *cappedWriter) Write(p []byte) (int, error) {
	if len(w.b)+len(p) > w.max {
		w.over = true
		return 0, ErrTooLarge
	}
	w.b = append(w.b, p...)
	return len(p), nil
}
