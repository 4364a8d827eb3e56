package reader

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/net/html/charset"

	"github.com/searxgate/searxgate/egress"
	"github.com/searxgate/searxgate/internal/clock"
	"github.com/searxgate/searxgate/reader/internal/mdtext"
	"github.com/searxgate/searxgate/reader/pdf"
)

// Errors of Read. Each wraps into an error whose text an agent can act on.
var (
	// ErrBadURL: not an absolute http(s) URL with a host.
	ErrBadURL = errors.New("not an http(s) URL")
	// ErrPrivate: the host is, or resolves to, an address that is not public.
	ErrPrivate = errors.New("address is not public")
	// ErrTooLarge: the page is larger than MaxBytes.
	ErrTooLarge = errors.New("page too large")
	// ErrType: the page is neither HTML, Markdown, JSON, text nor PDF, or
	// is a PDF whose text cannot be read (malformed, encrypted, no text
	// layer).
	ErrType = errors.New("unsupported content type")
	// ErrStatus: the server answered with a status other than 2xx.
	ErrStatus = errors.New("page not available")
	// ErrUnreachable: the host did not resolve, refused, or the connection
	// failed.
	ErrUnreachable = errors.New("host unreachable")
	// ErrTimeout: the page did not arrive within Timeout.
	ErrTimeout = errors.New("page timed out")
	// ErrRedirects: more than MaxRedirects redirects.
	ErrRedirects = errors.New("too many redirects")
	// ErrBusy is wrapped by *BusyError.
	ErrBusy = errors.New("host busy")
	// ErrLimited is wrapped by *LimitedError.
	ErrLimited = errors.New("client rate limited")
)

// BusyError refuses a read because its host's turn (a slot of its
// PerHostInFlight, a request of its PerHostPerMinute) cannot come within
// what the read waits: half its Timeout, and never past its caller's
// deadline. RetryAfter is when the turn comes: the minute's exactly, a
// slot's at the latest (when the reads holding them must have ended).
// Waited is how long the read waited before it gave up.
type BusyError struct {
	Host       string
	RetryAfter time.Duration
	Waited     time.Duration
}

func (e *BusyError) Error() string {
	if e.Waited > 0 {
		return fmt.Sprintf("%s: %s is being read politely (a few pages at a time); its turn did not come in the %s this read waited; retry in %d s",
			ErrBusy, e.Host, waitedText(e.Waited), seconds(e.RetryAfter))
	}
	return fmt.Sprintf("%s: %s is being read politely (a few pages at a time); its next turn is later than this read can wait; retry in %d s",
		ErrBusy, e.Host, seconds(e.RetryAfter))
}

// waitedText writes a wait as "1.2 s".
func waitedText(d time.Duration) string {
	return fmt.Sprintf("%.1f s", max(d, 100*time.Millisecond).Seconds())
}

func (e *BusyError) Unwrap() error { return ErrBusy }

// LimitedError refuses a read because Config.Admit refused its client.
type LimitedError struct{ RetryAfter time.Duration }

func (e *LimitedError) Error() string {
	return fmt.Sprintf("%s: too many reads from this client; retry in %d s", ErrLimited, seconds(e.RetryAfter))
}

func (e *LimitedError) Unwrap() error { return ErrLimited }

func seconds(d time.Duration) int {
	return max(1, int((d+time.Second-1)/time.Second))
}

// Resolver resolves host names to addresses; *net.Resolver is one. It is
// the guarded fetcher's (egress.Fetcher) own.
type Resolver = egress.IPResolver

// Config is what a Reader needs; zero values take defaults.
type Config struct {
	// AllowPrivate lets the reader fetch loopback and private addresses
	// (--reader-allow-private: its own switch, not --allow-private's).
	AllowPrivate bool
	Resolver     Resolver // nil is the system's
	UserAgent    string   // default "searxgate"
	Timeout      time.Duration
	MaxBytes     int64 // the largest body read (default 5 MiB)
	MaxRedirects int   // default 5
	// CacheTTL is how long a read page is served from the cache (default
	// 1 h); CacheEntries and CacheBytes bound the cache (default 256 pages
	// and 32 MiB of Markdown). NoCache keeps no page: every read fetches.
	CacheTTL     time.Duration
	CacheEntries int
	CacheBytes   int
	NoCache      bool
	// PerHostInFlight and PerHostPerMinute keep the reader polite to each
	// host (defaults 2 and 30). A read past either waits for its turn, at
	// most half its Timeout (the fetch keeps the rest).
	PerHostInFlight  int
	PerHostPerMinute int
	// PDFPages, PDFChars and PDFTime bound what one PDF costs beyond its
	// bytes: the pages read (default the first 50), the characters of
	// text kept (default 500,000) and the time spent extracting them
	// (default 5 s). A PDF cut short says so, and why, in Page.Pages.
	PDFPages int
	PDFChars int
	PDFTime  time.Duration
	// PDFWorker, when set, reads each PDF in a child process whose
	// memory, stack and time are bounded, so that no file can end this
	// one (searxgate sets it). Nil reads PDFs in this process, guarded
	// against the known bombs only. Its time is charged to the client:
	// each second a child runs past the first costs one more turn of
	// Admit, paid at the client's next read.
	PDFWorker *pdf.Worker
	// QueueBytes bounds the bytes held by the PDFs being read, from when
	// their body starts to download until their worker is done with it,
	// all clients together (default 32 MiB); ClientQueueBytes bounds one
	// client's (default a quarter of QueueBytes, at least MaxBytes). A
	// PDF past either is refused before its body is read, with a
	// *QueueError.
	QueueBytes       int64
	ClientQueueBytes int64
	// Admit, when set, is asked for each read that is not served from the
	// cache (the per-client limit, client.Limiter's Admit), with
	// Request.Client.
	Admit func(client string, now time.Time) (bool, time.Duration)
	// Clock tells the time, read once per Page; nil is the real clock.
	Clock  clock.Clock
	Logger *slog.Logger
	// Dial makes the connection once the guard has allowed the address
	// (tests point public addresses at 127.0.0.1 with it); nil = a
	// net.Dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Proxy, when set, is the outbound HTTP proxy to reach a host through
	// (HTTPS_PROXY, NO_PROXY): the guard checks the target first, and the
	// proxy is asked for the address it checked.
	Proxy egress.ProxyFunc
	// TLS, when set, is the client TLS configuration (roots besides the
	// system's, --ca-file); nil: the system's.
	TLS *tls.Config
}

func (c *Config) defaults() {
	if c.UserAgent == "" {
		c.UserAgent = "searxgate"
	}
	if c.Timeout <= 0 {
		c.Timeout = 15 * time.Second
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = 5 << 20
	}
	if c.MaxRedirects <= 0 {
		c.MaxRedirects = 5
	}
	if c.CacheTTL <= 0 {
		c.CacheTTL = time.Hour
	}
	if c.CacheEntries <= 0 {
		c.CacheEntries = 256
	}
	if c.CacheBytes <= 0 {
		c.CacheBytes = 32 << 20
	}
	if c.PerHostInFlight <= 0 {
		c.PerHostInFlight = 2
	}
	if c.PerHostPerMinute <= 0 {
		c.PerHostPerMinute = 30
	}
	if c.PDFPages <= 0 {
		c.PDFPages = 50
	}
	if c.PDFChars <= 0 {
		c.PDFChars = 500_000
	}
	if c.PDFTime <= 0 {
		c.PDFTime = 5 * time.Second
	}
	if c.QueueBytes <= 0 {
		c.QueueBytes = 32 << 20
	}
	if c.ClientQueueBytes <= 0 {
		c.ClientQueueBytes = max(c.QueueBytes/4, c.MaxBytes)
	}
	c.Clock = clock.Or(c.Clock)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Resolver == nil {
		c.Resolver = net.DefaultResolver
	}
}

// Reader reads pages for agents. It is safe for concurrent use.
type Reader struct {
	cfg    Config
	fetch  *egress.Fetcher
	cache  *cache
	hosts  *hosts
	queued *queued // the memory of the PDFs being read
	costs  costs   // worker time owed to the client limit
}

// QueueBytes is the most the PDFs being read hold.
func (r *Reader) QueueBytes() int64 { return r.cfg.QueueBytes }

// CacheBytes is the most the page cache holds (0 with NoCache).
func (r *Reader) CacheBytes() int64 {
	if r.cfg.NoCache {
		return 0
	}
	return int64(r.cfg.CacheBytes)
}

// New returns a Reader.
func New(cfg Config) *Reader {
	cfg.defaults()
	r := &Reader{cfg: cfg, hosts: newHosts(cfg.Clock, cfg.PerHostInFlight, cfg.PerHostPerMinute),
		queued: newQueued(cfg.QueueBytes, cfg.ClientQueueBytes, cfg.PDFTime)}
	if !cfg.NoCache {
		r.cache = newCache(cfg.CacheEntries, cfg.CacheBytes)
	}
	r.fetch = egress.NewFetcher(egress.Config{
		AllowPrivate: cfg.AllowPrivate, Resolver: cfg.Resolver, Connect: cfg.Dial, DialTimeout: 5 * time.Second,
		Proxy: cfg.Proxy, TLS: cfg.TLS, UserAgent: cfg.UserAgent,
		// Each read bounds its own time (what its wait left of the
		// Timeout); Timeout is the outer bound.
		MaxBytes: cfg.MaxBytes, Timeout: cfg.Timeout, MaxRedirects: cfg.MaxRedirects,
		// Every hop is checked by the guard as the first was (scheme,
		// literal addresses, localhost names; the dialer checks what names
		// resolve to), and counts against its server's minute.
		OnRedirect: func(req *http.Request) error {
			host := req.URL.Hostname()
			return r.hosts.charge(req.Context(), r.serverKey(req.Context(), host), host)
		},
	})
	return r
}

// serverKey is what the per-server politeness counts a host as: the
// lowest address its name resolves to (names of one server count as
// one), or the name itself when it does not resolve (the read then
// fails anyway).
func (r *Reader) serverKey(ctx context.Context, host string) string {
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return ip.Unmap().String()
	}
	res := r.cfg.Resolver
	if res == nil {
		res = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	ips, err := res.LookupNetIP(ctx, "ip", host)
	if err != nil || len(ips) == 0 {
		return host
	}
	low := ips[0].Unmap()
	for _, ip := range ips[1:] {
		if ip = ip.Unmap(); ip.Less(low) {
			low = ip
		}
	}
	return low.String()
}

// Request is one read.
type Request struct {
	URL string
	// StartChar and MaxLength cut the Markdown (in characters); MaxLength
	// 0 = everything from StartChar.
	StartChar, MaxLength int
	// Section, when set, starts at the first heading that contains it
	// (case-insensitive) and ends before the next heading of the same or a
	// higher level.
	Section string
	// ParagraphRange, when set, keeps only these paragraphs (Paragraphs)
	// of the page or section: "3", "3-7" or "10-", counted from 1.
	ParagraphRange string
	// ReadHeadings lists the page's headings only.
	ReadHeadings bool
	// Client names who asked, for Config.Admit and the shares: its client
	// key as the face made it (package client), read as is.
	Client string
}

// Page is one page read, whole.
type Page struct {
	URL   string // where it was read from, after redirects
	Title string
	// What an agent needs to cite an HTML page, when the page says it:
	// its author, its publication date (YYYY-MM-DD), the site's name, and
	// the canonical URL it gives itself.
	Byline, Published, SiteName, Canonical string
	ContentType                            string // text/html, text/plain, text/markdown, application/json or application/pdf
	// Pages, for a PDF, says how many of its pages were read, of how
	// many, and why reading stopped early ("50 of 212 (searxgate reads
	// the first 50 pages of a PDF)").
	Pages     string
	Markdown  string
	FetchedAt time.Time
}

// Result is the part of a page a Request asked for.
type Result struct {
	URL          string   `json:"url"`
	Title        string   `json:"title,omitempty"`
	Byline       string   `json:"byline,omitempty"`
	Published    string   `json:"published,omitempty"`
	SiteName     string   `json:"site_name,omitempty"`
	CanonicalURL string   `json:"canonical_url,omitempty"`
	ContentType  string   `json:"content_type"`
	Pages        string   `json:"pages,omitempty"` // a PDF's pages read, of how many
	Content      string   `json:"content"`
	Headings     []string `json:"headings,omitempty"`
	StartChar    int      `json:"start_char"`
	TotalChars   int      `json:"total_chars"` // of the whole page (or of the section)
	NextChar     int      `json:"next_char"`   // where the next call should start; 0 = nothing left
	Cached       bool     `json:"cached"`      // served from the cache
	// Waited says how long the read waited for its host's turn ("2.0 s
	// for example.org's turn"); "" when it did not.
	Waited  string `json:"waited,omitempty"`
	Section string `json:"section,omitempty"`
	// Paragraphs is the range of paragraphs given ("3-7"), of
	// TotalParagraphs, when ParagraphRange was asked.
	Paragraphs      string `json:"paragraphs,omitempty"`
	TotalParagraphs int    `json:"total_paragraphs,omitempty"`
}

// Read fetches (or finds in the cache) req.URL and returns the part asked.
func (r *Reader) Read(ctx context.Context, req Request) (*Result, error) {
	page, cached, waited, err := r.page(ctx, req.URL, req.Client)
	if err != nil {
		return nil, err
	}
	res, err := View(page, req)
	if err != nil {
		return nil, err
	}
	res.Cached = cached
	if waited > 0 {
		host := hostOf(req.URL)
		if u, err := parseURL(req.URL); err == nil {
			host = u.Hostname()
		}
		res.Waited = waitedText(waited) + " for " + host + "'s turn"
	}
	return res, nil
}

// Page returns the whole page at rawURL, from the cache when it is there
// (cached true).
func (r *Reader) Page(ctx context.Context, rawURL, client string) (*Page, bool, error) {
	p, cached, _, err := r.page(ctx, rawURL, client)
	return p, cached, err
}

// page is Page, and how long the read waited for its host's turn.
func (r *Reader) page(ctx context.Context, rawURL, client string) (*Page, bool, time.Duration, error) {
	u, err := parseURL(rawURL)
	if err != nil {
		return nil, false, 0, err
	}
	key := u.String()
	now := r.cfg.Clock.Now()
	if p, ok := r.cache.get(key, now); ok {
		return p, true, 0, nil
	}
	if err := r.checkURL(key); err != nil {
		return nil, false, 0, err
	}
	if r.cfg.Admit != nil {
		if ok, wait := r.costs.admit(r.cfg.Admit, client, now); !ok {
			return nil, false, 0, &LimitedError{RetryAfter: wait}
		}
	}
	host := u.Hostname()
	t := newTurn(ctx, now, r.cfg.Timeout/2)
	release, err := r.hosts.acquire(ctx, r.serverKey(ctx, host), host, client, t, now.Add(r.cfg.Timeout))
	if err != nil {
		return nil, false, t.waited, err
	}
	if t.waited > 0 {
		now = now.Add(t.waited)
		// A read of the same page may have ended while this one waited.
		if p, ok := r.cache.get(key, now); ok {
			release()
			return p, true, t.waited, nil
		}
	}
	// The download keeps what the wait left of the Timeout; the slot is
	// the server's, let go of once the body is in.
	d, err := r.download(context.WithValue(ctx, turnKey{}, t), u, client, r.cfg.Timeout-t.waited)
	release()
	if err != nil {
		return nil, false, t.waited, err
	}
	p, err := r.convert(ctx, d, client)
	d.hold.release()
	if err != nil {
		return nil, false, t.waited, err
	}
	p.FetchedAt = now
	r.cache.put(key, p, now.Add(r.cfg.CacheTTL))
	if p.URL != key {
		r.cache.put(p.URL, p, now.Add(r.cfg.CacheTTL))
	}
	return p, false, t.waited, nil
}

// parseURL reads an absolute http(s) URL, without its fragment.
func parseURL(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if len(raw) > egress.MaxURLLength {
		return nil, fmt.Errorf("%w: longer than %d bytes", ErrBadURL, egress.MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %q does not parse", ErrBadURL, raw)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%w: %q (only http:// and https:// pages can be read)", ErrBadURL, raw)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("%w: %q has no host", ErrBadURL, raw)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%w: %q carries credentials", ErrBadURL, raw)
	}
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}

// checkURL runs the address guard on one URL, leaving names to the dialer
// (egress.Guard.CheckLiteral), and turns its errors into the reader's.
func (r *Reader) checkURL(raw string) error {
	err := egress.Guard{AllowPrivate: r.cfg.AllowPrivate}.CheckLiteral(raw)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, egress.ErrPrivateAddress):
		return fmt.Errorf("%w: %s (searxgate reads public pages only; its operator can allow private addresses with --reader-allow-private)", ErrPrivate, hostOf(raw))
	default:
		return fmt.Errorf("%w: %v", ErrBadURL, err)
	}
}

func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Host
	}
	return raw
}

// Accept says what the reader can read, HTML first.
const accept = "text/html,application/xhtml+xml;q=0.9,text/markdown;q=0.9,text/plain;q=0.8,application/json;q=0.8," +
	"application/pdf;q=0.7,*/*;q=0.1"

// convert makes a downloaded page Markdown.
func (r *Reader) convert(ctx context.Context, d *downloaded, client string) (*Page, error) {
	p := &Page{URL: d.final, ContentType: d.kind}
	switch d.kind {
	case kindPDF:
		// The PDF's time is its own, not what is left of the download's.
		return r.pdfPage(ctx, p, d.body, client)
	case kindHTML:
		a := extractArticle(d.body, d.url)
		p.Title, p.Byline, p.Published, p.SiteName, p.Canonical, p.Markdown = a.Title, a.Byline, a.Published, a.SiteName, a.Canonical, a.Markdown
	case kindJSON:
		p.Markdown = mdtext.Fenced("json", prettyJSON(d.body))
	default:
		if d.lang != "" {
			p.Markdown = mdtext.Fenced(d.lang, string(d.body))
		} else {
			p.Markdown = strings.TrimSpace(string(d.body))
		}
	}
	return p, nil
}

// downloaded is a page's body as it came, with what its headers said.
type downloaded struct {
	url        *url.URL // after redirects
	final      string   // url, written
	kind, lang string   // kindOf its content type
	body       []byte   // text decoded to UTF-8; a PDF's bytes as they came
	hold       *hold    // a PDF's share of the memory for PDFs being read
}

// download fetches u within timeout and MaxBytes. A body whose type the
// reader does not read is refused before it is read, except a binary one
// (application/octet-stream), read to see whether it is a PDF. A PDF's
// (or binary) body is read only once client's share of the memory for
// PDFs being read holds it.
func (r *Reader) download(ctx context.Context, u *url.URL, client string, timeout time.Duration) (*downloaded, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := r.fetch.Get(ctx, u.String(), http.Header{"Accept": {accept}, "Accept-Language": {"en-US,en;q=0.9"}})
	if err != nil {
		return nil, r.fetchError(u, err)
	}
	defer resp.Body.Close()
	d := &downloaded{url: resp.Request.URL, final: resp.Request.URL.String()}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("%w: %s answered %s", ErrStatus, d.final, resp.Status)
	}
	if resp.Announced() {
		return nil, fmt.Errorf("%w: %s is %d bytes, more than the %d searxgate reads", ErrTooLarge, d.final, resp.ContentLength, r.cfg.MaxBytes)
	}
	ct := resp.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	d.kind, d.lang = kindOf(mt)
	binary := strings.EqualFold(mt, "application/octet-stream")
	if d.kind == "" && !binary {
		return nil, typeError(d.final, mt)
	}
	if d.kind == kindPDF || binary {
		size := r.cfg.MaxBytes
		if resp.ContentLength > 0 {
			size = min(size, resp.ContentLength)
		}
		if d.hold, err = r.queued.take(client, size); err != nil {
			return nil, err
		}
	}
	body, err := resp.ReadAll()
	d.hold.resize(int64(len(body)))
	if err != nil {
		d.hold.release()
	}
	if errors.Is(err, egress.ErrTooLarge) {
		return nil, fmt.Errorf("%w: %s is more than the %d bytes searxgate reads", ErrTooLarge, d.final, r.cfg.MaxBytes)
	}
	if err != nil {
		return nil, transportError(u, err)
	}
	if binary {
		if !bytes.Contains(body[:min(len(body), 1024)], []byte("%PDF-")) {
			d.hold.release()
			return nil, typeError(d.final, mt)
		}
		d.kind = kindPDF
	}
	if d.kind != kindPDF {
		body = toUTF8(body, ct, d.kind == kindHTML)
	}
	d.body = body
	return d, nil
}

func typeError(final, mt string) error {
	if mt == "" {
		mt = "no content type"
	}
	return fmt.Errorf("%w: %s is %s; web_url_read reads HTML, Markdown, JSON, text and PDF only", ErrType, final, mt)
}

// prettyJSON indents a JSON document; one that does not parse is kept as
// it came.
func prettyJSON(body []byte) string {
	var b bytes.Buffer
	if err := json.Indent(&b, bytes.TrimSpace(body), "", "  "); err != nil {
		return string(body)
	}
	return b.String()
}

// The kinds of page the reader reads.
const (
	kindHTML     = "text/html"
	kindPlain    = "text/plain"
	kindMarkdown = "text/markdown"
	kindJSON     = "application/json"
	kindPDF      = "application/pdf"
)

// kindOf is the kind of page a media type is, and for text that is a
// data format the language its code block is written with.
func kindOf(mediaType string) (kind, lang string) {
	mt := strings.ToLower(mediaType)
	switch mt {
	case "text/html", "application/xhtml+xml":
		return kindHTML, ""
	case "text/plain":
		return kindPlain, ""
	case "text/markdown", "text/x-markdown":
		return kindMarkdown, ""
	case "application/json", "text/json":
		return kindJSON, ""
	case "application/xml", "text/xml":
		return kindPlain, "xml"
	case "application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml":
		return kindPlain, "yaml"
	case "application/toml", "text/x-toml":
		return kindPlain, "toml"
	case "text/csv":
		return kindPlain, "csv"
	case "application/pdf", "application/x-pdf":
		return kindPDF, ""
	}
	if strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json") {
		return kindJSON, ""
	}
	if strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+xml") {
		return kindPlain, "xml"
	}
	return "", ""
}

// toUTF8 decodes body from its character set, found as browsers find it:
// a byte order mark, the Content-Type's charset, for HTML a <meta charset>
// or http-equiv in the first 1024 bytes; else UTF-8 when the whole body
// is valid UTF-8, else windows-1252. What is not valid UTF-8 afterwards
// becomes U+FFFD.
func toUTF8(body []byte, contentType string, isHTML bool) []byte {
	label := declaredCharset(body, contentType, isHTML)
	switch {
	case label == "utf-8":
		body = bytes.TrimPrefix(body, utf8BOM)
	case label != "":
		body = bytes.TrimPrefix(decode(body, label), utf8BOM)
	case !utf8.Valid(body):
		body = decode(body, "windows-1252")
	}
	if !utf8.Valid(body) {
		body = []byte(strings.ToValidUTF8(string(body), "\uFFFD"))
	}
	return body
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

func decode(body []byte, label string) []byte {
	rd, err := charset.NewReaderLabel(label, bytes.NewReader(body))
	if err != nil {
		return body
	}
	if b, err := io.ReadAll(rd); err == nil {
		return b
	}
	return body
}

// declaredCharset is the name of the encoding body says it is in (its
// BOM, the Content-Type, an HTML page's <meta>), "" when it says none the
// reader knows.
func declaredCharset(body []byte, contentType string, isHTML bool) string {
	if isHTML {
		// DetermineEncoding guesses when nothing is declared, from the
		// first 1024 bytes only: its guess is not taken.
		_, name, certain := charset.DetermineEncoding(body, contentType)
		if !certain {
			return ""
		}
		return name
	}
	switch {
	case bytes.HasPrefix(body, utf8BOM):
		return "utf-8"
	case bytes.HasPrefix(body, []byte{0xFE, 0xFF}):
		return "utf-16be"
	case bytes.HasPrefix(body, []byte{0xFF, 0xFE}):
		return "utf-16le"
	}
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return ""
	}
	if _, name := charset.Lookup(params["charset"]); name != "" {
		return name
	}
	return ""
}

// fetchError turns the guarded fetcher's refusals into the reader's: a
// redirect refused, a name resolving to an address that is not public.
func (r *Reader) fetchError(u *url.URL, err error) error {
	var re *egress.RedirectError
	switch {
	case errors.As(err, &re) && errors.Is(re.Err, egress.ErrTooManyRedirects):
		return fmt.Errorf("%w: more than %d", ErrRedirects, r.cfg.MaxRedirects)
	case errors.As(err, &re):
		if err := r.checkURL(re.To.String()); err != nil {
			return err
		}
		return fmt.Errorf("%w: %v", ErrBadURL, re.Err)
	case errors.Is(err, egress.ErrNotPublic):
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("%w: %v (searxgate reads public pages only; its operator can allow private addresses with --reader-allow-private)", ErrPrivate, err)
	case errors.Is(err, egress.ErrPrivateAddress), errors.Is(err, egress.ErrScheme), errors.Is(err, egress.ErrBadURL):
		if err := r.checkURL(u.String()); err != nil {
			return err
		}
		return fmt.Errorf("%w: %v", ErrBadURL, err)
	}
	return transportError(u, err)
}

// transportError names why a fetch failed, keeping the guard's refusal.
func transportError(u *url.URL, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
		if last, perr := url.Parse(ue.URL); perr == nil && last.Host != "" {
			u = last // the hop that failed, after any redirects
		}
	}
	var dnsErr *net.DNSError
	var busy *BusyError
	switch {
	case errors.Is(err, ErrPrivate), errors.Is(err, ErrBadURL), errors.Is(err, ErrRedirects), errors.As(err, &busy),
		errors.Is(err, ErrTimeout):
		return err
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return fmt.Errorf("%w: %s did not answer in time", ErrTimeout, u.Host)
	case errors.As(err, &dnsErr):
		name := dnsErr.Name // the name that failed, whatever hop asked it
		if name == "" {
			name = u.Hostname()
		}
		return fmt.Errorf("%w: %s does not resolve", ErrUnreachable, name)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("%w: %s refused the connection", ErrUnreachable, u.Host)
	default:
		return fmt.Errorf("%w: %s: %v", ErrUnreachable, u.Host, err)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
