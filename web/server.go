package web

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"searxgate/pool"
	"searxgate/proxy"
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
	// Client names the client of a request for proxy.Request.Client (the
	// per-client admission and fair share); nil = the peer's address.
	Client func(ctx *fasthttp.RequestCtx) string
	// Problem, when set, says why searxgate cannot search at all right now
	// (for example: every instance of the list was refused as private);
	// /status shows it as a banner. "" = nothing is wrong.
	Problem func() string
	Now     func() time.Time
}

// Server is searxgate's HTTP face.
type Server struct {
	cfg     Config
	log     *slog.Logger
	tmpl    *template.Template
	images  *imageProxy
	started time.Time
	labels  instanceLabels // which instances /metrics names, for the life of the process
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
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
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
	return &Server{cfg: cfg, log: cfg.Logger, tmpl: tmpl, images: images, started: cfg.Now()}, nil
}

// Handler routes every request.
func (s *Server) Handler() fasthttp.RequestHandler {
	return s.route
}

// contentSecurityPolicy allows nothing but searxgate's own stylesheet and
// images (upstream thumbnails come through /image_proxy); no script at
// all, and no image from any other origin.
const contentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self' data:; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// securityHeaders are set on every response.
func securityHeaders(h *fasthttp.ResponseHeader) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Robots-Tag", "noindex, nofollow")
}

func (s *Server) route(ctx *fasthttp.RequestCtx) {
	securityHeaders(&ctx.Response.Header)
	path := string(ctx.Path())
	switch path {
	case "/search":
		if !allow(ctx, fasthttp.MethodGet, fasthttp.MethodPost) {
			return
		}
		s.search(ctx)
	case "/":
		if !allow(ctx, fasthttp.MethodGet, fasthttp.MethodPost) {
			return
		}
		// SearXNG clients (LangChain's Python one among them) search at "/".
		if len(param(ctx, "q")) > 0 {
			s.search(ctx)
			return
		}
		s.index(ctx)
	case "/healthz":
		if !allow(ctx, fasthttp.MethodGet) {
			return
		}
		ctx.SetContentType("text/plain; charset=utf-8")
		ctx.SetBodyString("OK")
	case "/robots.txt":
		if allow(ctx, fasthttp.MethodGet) {
			ctx.SetContentType("text/plain; charset=utf-8")
			ctx.SetBodyString(robotsTxt)
		}
	case "/opensearch.xml":
		if allow(ctx, fasthttp.MethodGet, fasthttp.MethodPost) {
			s.openSearch(ctx)
		}
	case "/autocompleter":
		if allow(ctx, fasthttp.MethodGet, fasthttp.MethodPost) {
			s.autocompleter(ctx)
		}
	case "/config":
		if allow(ctx, fasthttp.MethodGet) {
			s.config(ctx)
		}
	case "/status":
		if allow(ctx, fasthttp.MethodGet) {
			s.statusPage(ctx)
		}
	case "/status.json":
		if allow(ctx, fasthttp.MethodGet) {
			s.statusJSON(ctx)
		}
	case "/metrics":
		if allow(ctx, fasthttp.MethodGet) {
			s.metrics(ctx)
		}
	case "/image_proxy":
		if allow(ctx, fasthttp.MethodGet) {
			s.imageProxyHandler(ctx)
		}
	case "/static/style.css", "/static/favicon.svg", "/favicon.ico":
		if allow(ctx, fasthttp.MethodGet) {
			serveStatic(ctx, path)
		}
	case "/api/pool/reset":
		if allow(ctx, fasthttp.MethodPost) {
			s.apiReset(ctx)
		}
	case "/api/cache/purge":
		if allow(ctx, fasthttp.MethodPost) {
			s.apiPurgeCache(ctx)
		}
	case "/api/instances", "/api/instances/":
		if allow(ctx, fasthttp.MethodGet, fasthttp.MethodPost) {
			s.apiInstances(ctx)
		}
	default:
		if strings.HasPrefix(path, "/api/instances/") {
			s.apiInstance(ctx)
			return
		}
		s.notFound(ctx)
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
