package web

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/internal/clock"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/results"
)

// Searcher answers searches; *proxy.Proxy is one.
type Searcher interface {
	Search(ctx context.Context, req proxy.Request) (*proxy.Response, error)
}

// Autocompleter suggests completions of a prefix; *proxy.Proxy is one.
type Autocompleter interface {
	Autocomplete(ctx context.Context, q, language string) ([]string, error)
}

// Operator applies the operator's changes to the pool and keeps them.
// Errors of Add that wrap ErrBadInstance are the client's (400); others are
// the server's (500).
type Operator interface {
	// Add adds an instance of the operator's own and returns its
	// normalised URL.
	Add(ctx context.Context, rawURL string) (string, error)
	// Remove reports false when the instance was not in the pool.
	Remove(rawURL string) (bool, error)
	// SetDisabled reports false when the instance is not in the pool.
	SetDisabled(rawURL string, disabled bool) (bool, error)
	// Reset forgets what the pool learned (not the operator's changes).
	Reset() error
}

// ErrBadInstance is what an Operator wraps when the URL it was given is
// not one it accepts (unparsable, not http(s), a non-public address): the
// instance API answers it with 400.
var ErrBadInstance = errors.New("not an acceptable instance URL")

// Config is what the HTTP face needs.
type Config struct {
	Proxy        *proxy.Proxy  // nil only in tests that give Searcher
	Search       Searcher      // defaults to Proxy
	Autocomplete Autocompleter // defaults to Proxy; nil answers no suggestions
	Pool         *pool.Pool    // read only; nil leaves /status and /metrics without instances
	Operator     Operator      // the instance API's writes; nil = not available
	Logger       *slog.Logger
	Version      string
	// InstanceName is what /config and the pages call this gateway.
	InstanceName string
	// AdminToken allows the instance API's writes as "Authorization:
	// Bearer <token>"; empty refuses every write with 403.
	AdminToken string
	// PublicURL is the address people reach searxgate at, for the links
	// of /opensearch.xml and RSS. Empty = the Host each request named,
	// and then those answers are Cache-Control: private (a poisoned Host
	// reaches no one but its sender).
	PublicURL string
	// Images is how result thumbnails and infobox images reach the page:
	// through /image_proxy (signed links, the address guard on every fetch
	// and redirect), or not at all (Images.Off). The browser never loads
	// an address an instance chose.
	Images ImageConfig
	// Formats are the formats /search serves (html, json, csv, rss); a
	// request for another is refused with 403, as SearXNG refuses a format
	// its settings do not enable. Empty = all four.
	Formats []string
	// JSONShape is the shape of format=json answers: results.Classic
	// (the zero value; what SearXNG's clients read) or results.Current.
	JSONShape results.Shape
	// Client names the client of a request for proxy.Request.Client (the
	// per-client admission and fair share); nil = the peer's address.
	Client func(ctx *fasthttp.RequestCtx) string
	// Problem, when set, says why searxgate cannot search at all right now
	// (for example: every instance of the list was refused as private);
	// /status shows it as a banner. "" = nothing is wrong.
	Problem func() string
	// CacheTTL is how long an answer is served from the cache, and
	// CacheKeep how long it is kept in all (past its TTL it answers only
	// when no instance does), for the privacy note of /about (0 = no
	// answer is kept); cache.Cache.Lifetime says both.
	CacheTTL, CacheKeep time.Duration
	// Clock tells the time, read once per request; nil is the real clock.
	Clock clock.Clock
	// MCP, when set, serves /mcp (the MCP face, which checks its own
	// access); nil = 404.
	MCP fasthttp.RequestHandler
	// ToolCalls, when set, counts the MCP tool calls for /metrics and
	// /status.
	ToolCalls func() []ToolCalls
	// Doors are more faces of the same search at paths of their own (the
	// search APIs of other services, package api), each checking its own
	// method and access; a path here wins over the table's.
	Doors map[string]fasthttp.RequestHandler
}

// Server is searxgate's HTTP face.
type Server struct {
	cfg     Config
	log     *slog.Logger
	tmpl    *template.Template
	images  *imageProxy
	started time.Time
	routes  map[string]endpoint // fixed at New
	labels  instanceLabels      // which instances /metrics names, for the life of the process
	gauges  *metrics.Set        // /metrics' gauges of the process's own state (newRuntimeGauges)
	// refusals logs the searches refused, at most a line a second.
	refusals refusalLog
}

// New returns the server; it fails when an embedded template does not
// parse or the public URL is not an http(s) URL.
func New(cfg Config) (*Server, error) {
	if cfg.Search == nil {
		if cfg.Proxy == nil {
			return nil, errors.New("web: Config.Proxy or Config.Search is required")
		}
		cfg.Search = cfg.Proxy
	}
	if cfg.Autocomplete == nil && cfg.Proxy != nil {
		cfg.Autocomplete = cfg.Proxy
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.Clock = clock.Or(cfg.Clock)
	if cfg.InstanceName == "" {
		cfg.InstanceName = "searxgate"
	}
	if cfg.PublicURL != "" {
		if !strings.HasPrefix(cfg.PublicURL, "http://") && !strings.HasPrefix(cfg.PublicURL, "https://") {
			return nil, fmt.Errorf("web: public URL %q is not an http(s) URL", cfg.PublicURL)
		}
		if !strings.HasSuffix(cfg.PublicURL, "/") {
			cfg.PublicURL += "/"
		}
	}
	tmpl, err := parseTemplates()
	if err != nil {
		return nil, fmt.Errorf("web: templates: %w", err)
	}
	images, err := newImageProxy(cfg.Images, cfg.Version)
	if err != nil {
		return nil, err
	}
	srv := &Server{cfg: cfg, log: cfg.Logger, tmpl: tmpl, images: images, started: cfg.Clock.Now(), refusals: refusalLog{now: cfg.Clock.Now},
		gauges: newRuntimeGauges()}
	srv.routes = srv.table()
	return srv, nil
}

// tokenChar tells the bytes of an HTTP token (RFC 9110 section 5.6.2):
// what a header's name is made of.
var tokenChar = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// tokenNames reports whether every header name of h is a token.
func tokenNames(h *fasthttp.RequestHeader) bool {
	for k := range h.All() {
		if len(k) == 0 {
			return false
		}
		for _, c := range k {
			if !tokenChar[c] {
				return false
			}
		}
	}
	return true
}

// Handler routes every request.
func (s *Server) Handler() fasthttp.RequestHandler {
	return s.route
}

// contentSecurityPolicy allows nothing but searxgate's own stylesheet,
// script (/static/searxgate.js, a file: no inline code, no eval) and
// images (upstream thumbnails come through /image_proxy); the script
// talks to searxgate only (connect-src), and no image comes from any
// other origin.
const contentSecurityPolicy = "default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' data:; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// securityHeaders are set on every response.
func securityHeaders(h *fasthttp.ResponseHeader) {
	for _, kv := range securityHeaderLines {
		h.SetCanonical(kv[0], kv[1])
	}
}

// securityHeaderLines are securityHeaders' names, already canonical (set
// on every response: SetCanonical spares normalising them each time).
var securityHeaderLines = [...][2][]byte{
	{[]byte("Content-Security-Policy"), []byte(contentSecurityPolicy)},
	{[]byte("X-Content-Type-Options"), []byte("nosniff")},
	{[]byte("Referrer-Policy"), []byte("no-referrer")},
	{[]byte("X-Frame-Options"), []byte("DENY")},
	{[]byte("X-Robots-Tag"), []byte("noindex, nofollow")},
}

func (s *Server) route(ctx *fasthttp.RequestCtx) {
	defer s.recoverPanic(ctx)
	securityHeaders(&ctx.Response.Header)
	if !tokenNames(&ctx.Request.Header) {
		// fasthttp refuses most such names itself, not one with a space.
		plainError(ctx, fasthttp.StatusBadRequest, "Bad Request: a header name that is not an HTTP token")
		return
	}
	path := string(ctx.Path())
	if h, ok := s.cfg.Doors[path]; ok {
		h(ctx)
		return
	}
	if r, ok := s.routes[path]; ok {
		if allow(ctx, r.methods...) {
			r.handle(ctx)
		}
		return
	}
	if strings.HasPrefix(path, "/api/instances/") {
		s.apiInstance(ctx)
		return
	}
	s.notFound(ctx)
}

// recoverPanic turns a handler's panic into a 500 for its request alone
// (fasthttp recovers none: one bad request would stop the gateway), and
// logs the stack once. Every route is under it: the search page, the
// image proxy, /mcp and its page reader.
func (s *Server) recoverPanic(ctx *fasthttp.RequestCtx) {
	r := recover()
	if r == nil {
		return
	}
	s.log.Error("a request's handler panicked: answered 500", "path", string(ctx.Path()), "panic", r, "stack", string(debug.Stack()))
	ctx.Response.Reset()
	securityHeaders(&ctx.Response.Header)
	plainError(ctx, fasthttp.StatusInternalServerError, "Internal Server Error")
}

// endpoint is one path's handler and the methods it answers (HEAD counts
// as GET).
type endpoint struct {
	methods []string
	handle  fasthttp.RequestHandler
}

var (
	getOnly    = []string{fasthttp.MethodGet}
	getOrPost  = []string{fasthttp.MethodGet, fasthttp.MethodPost}
	postOnly   = []string{fasthttp.MethodPost}
	staticFile = func(ctx *fasthttp.RequestCtx) { serveStatic(ctx, string(ctx.Path())) }
)

// table is every fixed path searxgate answers.
func (s *Server) table() map[string]endpoint {
	return map[string]endpoint{
		"/search": {getOrPost, s.search},
		// SearXNG clients (LangChain's Python one among them) search at "/".
		// SearXNG redirects "/" with a q to /search, with the same query
		// string, by 308 (method and body kept); clients follow it.
		"/": {getOrPost, func(ctx *fasthttp.RequestCtx) {
			if len(param(ctx, "q")) > 0 {
				s.searchRedirect(ctx)
				return
			}
			s.index(ctx)
		}},
		"/healthz": {getOnly, func(ctx *fasthttp.RequestCtx) {
			ctx.SetContentType("text/plain; charset=utf-8")
			ctx.SetBodyString("OK")
		}},
		"/robots.txt": {getOnly, func(ctx *fasthttp.RequestCtx) {
			ctx.SetContentType("text/plain; charset=utf-8")
			ctx.SetBodyString(robotsTxt)
		}},
		"/opensearch.xml":      {getOrPost, s.openSearch},
		"/autocompleter":       {getOrPost, s.autocompleter},
		"/config":              {getOnly, s.config},
		"/status":              {getOnly, s.statusPage},
		"/preferences":         {getOrPost, s.preferences},
		"/about":               {getOnly, s.about},
		"/static/searxgate.js": {getOnly, staticFile},
		"/status.json":         {getOnly, s.statusJSON},
		"/metrics":             {getOnly, s.metrics},
		"/image_proxy":         {getOnly, s.imageProxyHandler},
		"/static/style.css":    {getOnly, staticFile},
		"/static/favicon.svg":  {getOnly, staticFile},
		"/favicon.ico":         {getOnly, staticFile},
		"/api/pool/reset":      {postOnly, s.apiReset},
		"/api/cache/purge":     {postOnly, s.apiPurgeCache},
		"/api/instances":       {getOrPost, s.apiInstances},
		"/api/instances/":      {getOrPost, s.apiInstances},
		"/mcp": {[]string{fasthttp.MethodGet, fasthttp.MethodPost, fasthttp.MethodDelete}, func(ctx *fasthttp.RequestCtx) {
			if s.cfg.MCP == nil {
				s.notFound(ctx)
				return
			}
			s.cfg.MCP(ctx)
		}},
	}
}

// robotsTxt is SearXNG's robots.txt (fixture a-robots.txt), with
// searxgate's own pages that no crawler should read.
const robotsTxt = "User-agent: *\n" +
	"Allow: /info/en/about\n" +
	"Disallow: /stats\n" +
	"Disallow: /image_proxy\n" +
	"Disallow: /preferences\n" +
	"Disallow: /*?*q=*\n" +
	"Disallow: /status\n" +
	"Disallow: /metrics\n" +
	"Disallow: /api/\n"

// notFound answers 404 as SearXNG does, with a page (fixture a-404.txt),
// to every client that takes HTML; plain text to one whose Accept names
// other types only (an API client asking for JSON).
func (s *Server) notFound(ctx *fasthttp.RequestCtx) {
	if takesHTML(ctx) {
		s.render(ctx, fasthttp.StatusNotFound, "error.html", pageData{Title: "Not found", Status: fasthttp.StatusNotFound,
			Message: "There is no page at this address."})
		return
	}
	plainError(ctx, fasthttp.StatusNotFound, "Not Found")
}

// takesHTML reports whether the client takes a page: it sent no Accept,
// or one that names text/html, text/* or */*.
func takesHTML(ctx *fasthttp.RequestCtx) bool {
	accept := string(ctx.Request.Header.Peek("Accept"))
	if strings.TrimSpace(accept) == "" {
		return true
	}
	for _, part := range strings.Split(accept, ",") {
		typ, params, _ := strings.Cut(part, ";")
		typ = strings.ToLower(strings.TrimSpace(typ))
		if typ != "text/html" && typ != "text/*" && typ != "*/*" {
			continue
		}
		if q, ok := strings.CutPrefix(strings.ReplaceAll(strings.TrimSpace(params), " ", ""), "q="); ok && (q == "0" || strings.Trim(q, "0.") == "") {
			continue // q=0: not acceptable
		}
		return true
	}
	return false
}

// allow answers 405 unless the method is one of methods (HEAD counts as GET).
func allow(ctx *fasthttp.RequestCtx, methods ...string) bool {
	m := string(ctx.Method())
	for _, a := range methods {
		if m == a || (m == fasthttp.MethodHead && a == fasthttp.MethodGet) {
			return true
		}
	}
	ctx.Response.Header.Set("Allow", strings.Join(methods, ", "))
	plainError(ctx, fasthttp.StatusMethodNotAllowed, "Method Not Allowed")
	return false
}

// param reads a parameter as SearXNG does: the form body first, then the
// query string; nil when absent.
func param(ctx *fasthttp.RequestCtx, name string) []byte {
	v, _ := peekParam(ctx, name)
	return v
}

// peekParam is param, saying whether the parameter was there at all.
func peekParam(ctx *fasthttp.RequestCtx, name string) ([]byte, bool) {
	if ctx.IsPost() && ctx.PostArgs().Has(name) {
		return ctx.PostArgs().Peek(name), true
	}
	if ctx.QueryArgs().Has(name) {
		return ctx.QueryArgs().Peek(name), true
	}
	return nil, false
}

// params adapts a request to proxy.Params.
type params struct{ ctx *fasthttp.RequestCtx }

func (p params) Get(name string) (string, bool) {
	v, ok := peekParam(p.ctx, name)
	return string(v), ok
}

// plainError answers status with a plain-text message. Unlike
// RequestCtx.Error it keeps the headers already set (the security ones).
func plainError(ctx *fasthttp.RequestCtx, status int, msg string) {
	ctx.SetStatusCode(status)
	ctx.SetContentType("text/plain; charset=utf-8")
	ctx.SetBodyString(msg)
}
