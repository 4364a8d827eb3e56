package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/reader"
	"github.com/searxgate/searxgate/results"
)

// Searcher answers searches; *proxy.Proxy is one.
type Searcher interface {
	Search(ctx context.Context, req proxy.Request) (*proxy.Response, error)
}

// Reader reads pages; *reader.Reader is one.
type Reader interface {
	Read(ctx context.Context, req reader.Request) (*reader.Result, error)
}

// Config is what the doors need.
type Config struct {
	Search Searcher
	// Read reads pages for Tavily's extract and raw content; nil answers
	// extract with 404 and leaves raw_content null.
	Read Reader
	// Keys, when holding any, are required; nil or empty = no keys.
	Keys *Keys
	// Exposed says searxgate can be reached beyond loopback: then the
	// doors without keys are closed (mcp's rule).
	Exposed bool
	// Client names the client of a request without a key (its address);
	// nil = "".
	Client func(ctx *fasthttp.RequestCtx) string
	// Fanout is how many instances Tavily's search_depth "advanced" asks
	// at once (the proxy caps it at its own maximum); 0 = 2.
	Fanout int
	// Now tells the time; nil is time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Server is the doors.
type Server struct {
	cfg Config
	log *slog.Logger
}

// New returns the doors.
func New(cfg Config) *Server {
	if cfg.Client == nil {
		cfg.Client = func(*fasthttp.RequestCtx) string { return "" }
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Fanout <= 0 {
		cfg.Fanout = 2
	}
	return &Server{cfg: cfg, log: cfg.Logger}
}

// Paths of the doors.
const (
	PathTavilySearch  = "/tavily/search"
	PathTavilyExtract = "/tavily/extract"
	PathBrave         = "/res/v1/web/search"
	PathBraveUnder    = "/brave/res/v1/web/search"
	PathOpenWebUI     = "/openwebui"
)

// Routes are the doors by path, for web.Config.Doors.
func (s *Server) Routes() map[string]fasthttp.RequestHandler {
	return map[string]fasthttp.RequestHandler{
		PathTavilySearch:  s.tavilySearch,
		PathTavilyExtract: s.tavilyExtract,
		PathBrave:         s.braveSearch,
		PathBraveUnder:    s.braveSearch,
		PathOpenWebUI:     s.openWebUI,
	}
}

// maxPages bounds the pages one request may walk to fill its count.
const maxPages = 5

// search is one search of a door: what SearXNG is asked, how many results
// are wanted after skip, and which are kept.
type search struct {
	req  proxy.Request
	skip int                          // results to skip before the first kept
	want int                          // results wanted
	keep func(r *results.Result) bool // nil keeps every one
}

// gathered is what a door's search found.
type gathered struct {
	results []results.Result
	first   *results.Page // the first page, for answers and infoboxes
	more    bool          // the last page walked was full: more may come
}

// run asks the proxy page after page until want results are kept (after
// skip), a page brings no new one, or maxPages are walked; the first page
// is asked even for none (its answer and infobox). The first
// page's error is the search's; a later page's ends the walk with what
// was kept.
func (s *Server) run(ctx context.Context, q search) (gathered, error) {
	var g gathered
	seen := map[string]bool{}
	skipped := 0
	for page := q.req.PageNo; page < q.req.PageNo+maxPages; page++ {
		if g.first != nil && len(g.results) >= q.want {
			break // the first page is always asked: its answers count even for no results
		}
		req := q.req
		req.PageNo = page
		res, err := s.cfg.Search.Search(ctx, req)
		if err == nil && res.Redirect != "" {
			break // a bang's redirect: no results to give
		}
		var p *results.Page
		if err == nil {
			p, err = res.Results()
		}
		if err != nil {
			if g.first == nil {
				return g, err
			}
			break
		}
		if g.first == nil {
			g.first = p
		}
		added := 0
		for i := range p.Results {
			r := &p.Results[i]
			if seen[r.URL] || (q.keep != nil && !q.keep(r)) {
				continue
			}
			seen[r.URL] = true
			added++
			if skipped < q.skip {
				skipped++
				continue
			}
			if len(g.results) < q.want {
				g.results = append(g.results, *r)
			} else {
				g.more = true
			}
		}
		if added == 0 {
			g.more = false
			break
		}
		g.more = g.more || len(p.Results) > 0
	}
	return g, nil
}

// readAll reads urls at once (the reader keeps each site's politeness),
// each within ctx; a nil entry of pages is a read that failed, its error
// in errs.
func (s *Server) readAll(ctx context.Context, urls []string, client string) (pages []*reader.Result, errs []error) {
	pages, errs = make([]*reader.Result, len(urls)), make([]error, len(urls))
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pages[i], errs[i] = s.cfg.Read.Read(ctx, reader.Request{URL: u, Client: client})
		}()
	}
	wg.Wait()
	return pages, errs
}

// requestContext is the context of one door's request: its own, since a
// RequestCtx is reused once the handler returns.
func requestContext() (context.Context, context.CancelFunc) {
	return context.WithCancel(context.Background())
}

// writeJSON answers status with v as JSON.
func writeJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = fasthttp.StatusInternalServerError, []byte(`{"error":"internal error"}`)
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}

// hostOf is the host name of a result's URL, lower case, without "www.".
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
}

// inDomains reports whether host is one of domains or under one.
func inDomains(host string, domains []string) bool {
	for _, d := range domains {
		d = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(d)), "www.")
		if d != "" && (host == d || strings.HasSuffix(host, "."+d)) {
			return true
		}
	}
	return false
}

// elapsedSeconds is the time since start, in seconds with two decimals.
func elapsedSeconds(now, start time.Time) float64 {
	return float64(now.Sub(start).Milliseconds()/10) / 100
}
