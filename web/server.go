package web

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"time"

	"github.com/valyala/fasthttp"

	"searxgate/pool"
	"searxgate/proxy"
)

// Searcher answers searches; *proxy.Proxy is one.
type Searcher interface {
	Search(ctx context.Context, req proxy.Request) (*proxy.Response, error)
}

// Config is what the HTTP face needs.
type Config struct {
	Proxy   *proxy.Proxy // nil only in tests that give Searcher
	Search  Searcher     // defaults to Proxy
	Pool    *pool.Pool   // read only
	Logger  *slog.Logger
	Version string
	// InstanceName is what /config and the pages call this gateway.
	InstanceName string
	Now          func() time.Time
}

// Server is searxgate's HTTP face.
type Server struct {
	cfg  Config
	log  *slog.Logger
	tmpl *template.Template
}

// New returns the server; it fails when an embedded template does not parse.
func New(cfg Config) (*Server, error) {
	if cfg.Search == nil {
		if cfg.Proxy == nil {
			return nil, errors.New("web: Config.Proxy or Config.Search is required")
		}
		cfg.Search = cfg.Proxy
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
	tmpl, err := parseTemplates()
	if err != nil {
		return nil, fmt.Errorf("web: templates: %w", err)
	}
	return &Server{cfg: cfg, log: cfg.Logger, tmpl: tmpl}, nil
}

// Handler routes every request.
func (s *Server) Handler() fasthttp.RequestHandler {
	return s.route
}

func (s *Server) route(ctx *fasthttp.RequestCtx) {
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
	default:
		ctx.Error("Not Found", fasthttp.StatusNotFound)
	}
}

// allow answers 405 unless the method is one of methods (HEAD counts as GET).
func allow(ctx *fasthttp.RequestCtx, methods ...string) bool {
	m := string(ctx.Method())
	for _, a := range methods {
		if m == a || (m == fasthttp.MethodHead && a == fasthttp.MethodGet) {
			return true
		}
	}
	ctx.Response.Header.Set("Allow", joinMethods(methods))
	ctx.Error("Method Not Allowed", fasthttp.StatusMethodNotAllowed)
	return false
}

func joinMethods(m []string) string {
	out := ""
	for i, x := range m {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}

// param reads a parameter as SearXNG does: the form body first, then the
// query string.
func param(ctx *fasthttp.RequestCtx, name string) []byte {
	if ctx.IsPost() {
		if v := ctx.PostArgs().Peek(name); v != nil {
			return v
		}
	}
	return ctx.QueryArgs().Peek(name)
}

// params adapts a request to proxy.Params.
type params struct{ ctx *fasthttp.RequestCtx }

func (p params) Get(name string) (string, bool) {
	if p.ctx.IsPost() && p.ctx.PostArgs().Has(name) {
		return string(p.ctx.PostArgs().Peek(name)), true
	}
	if p.ctx.QueryArgs().Has(name) {
		return string(p.ctx.QueryArgs().Peek(name)), true
	}
	return "", false
}
