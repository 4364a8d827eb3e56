package web

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"github.com/searxgate/searxgate/internal/clock"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/sim"
)

// fixedNow is the clock of every test.
var fixedNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// fakeSearch answers every search with JSON built by answer, and records
// the requests it got.
type fakeSearch struct {
	mu     sync.Mutex // guards reqs
	reqs   []proxy.Request
	answer func(req proxy.Request) (*proxy.Response, error)
}

func (f *fakeSearch) Search(_ context.Context, req proxy.Request) (*proxy.Response, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	return f.answer(req)
}

func (f *fakeSearch) last() proxy.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reqs[len(f.reqs)-1]
}

// jsonAnswer answers with the given JSON body, served by inst.
func jsonAnswer(body, inst string) func(proxy.Request) (*proxy.Response, error) {
	return func(proxy.Request) (*proxy.Response, error) {
		return &proxy.Response{JSON: []byte(body), Instance: inst, Attempts: 1, Elapsed: 123 * time.Millisecond}, nil
	}
}

const simpleAnswer = `{"query":"hello","number_of_results":0,"results":[` +
	`{"url":"https://example.org/hello","title":"Hello world","content":"A page about hello.","engine":"duckduckgo","engines":["duckduckgo","brave"],"score":1.5,"category":"general","parsed_url":["https","example.org","/hello","","",""],"publishedDate":"2024-05-01T00:00:00"}],` +
	`"answers":["hello is a greeting"],"corrections":["hallo"],"infoboxes":[],"suggestions":["hello kitty"],"unresponsive_engines":[["bing","timeout"]]}`

// tester talks to a Server over fasthttp's in-memory listener.
type tester struct {
	t  testing.TB
	c  *fasthttp.Client
	ln *fasthttputil.InmemoryListener
}

func serve(t testing.TB, cfg Config) (*Server, *tester) {
	t.Helper()
	if cfg.Clock == nil {
		cfg.Clock = clock.NewFake(fixedNow)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln := fasthttputil.NewInmemoryListener()
	srv := &fasthttp.Server{Handler: s.Handler(), MaxRequestBodySize: 64 << 10}
	done := make(chan struct{})
	go func() { _ = srv.Serve(ln); close(done) }()
	t.Cleanup(func() { _ = ln.Close(); <-done })
	c := &fasthttp.Client{Dial: func(string) (net.Conn, error) { return ln.Dial() }, DisablePathNormalizing: true}
	return s, &tester{t: t, c: c, ln: ln}
}

type reply struct {
	status int
	header map[string]string
	body   string
}

// do sends one request; headers alternate name, value.
func (c *tester) do(method, uri, body string, headers ...string) reply {
	c.t.Helper()
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI("http://gateway.test" + uri)
	req.URI().DisablePathNormalizing = true // send percent-encoded instance URLs as they are
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
		if strings.EqualFold(headers[i], "Host") {
			req.UseHostHeader = true
		}
	}
	if body != "" {
		req.SetBodyString(body)
		if req.Header.ContentType() == nil || len(req.Header.ContentType()) == 0 || strings.HasPrefix(string(req.Header.ContentType()), "text/plain") {
			req.Header.SetContentType("application/x-www-form-urlencoded")
		}
	}
	if err := c.c.DoTimeout(req, resp, 10*time.Second); err != nil {
		c.t.Fatalf("%s %s: %v", method, uri, err)
	}
	r := reply{status: resp.StatusCode(), header: map[string]string{}, body: string(resp.Body())}
	for k, v := range resp.Header.All() {
		r.header[string(k)] = string(v)
	}
	return r
}

func (c *tester) get(uri string, headers ...string) reply { return c.do("GET", uri, "", headers...) }

// liveFleet is a pool and a proxy over an in-memory sim fleet.
type liveFleet struct {
	fleet *sim.Fleet
	pool  *pool.Pool
	proxy *proxy.Proxy
}

func startLive(t testing.TB, instances []sim.InstanceConfig) *liveFleet {
	t.Helper()
	return startLiveWith(t, instances, proxy.Config{})
}

// startLiveWith is startLive with the proxy's cfg (its pool, upstream
// client and deadline filled in).
func startLiveWith(t testing.TB, instances []sim.InstanceConfig, cfg proxy.Config) *liveFleet {
	t.Helper()
	f, err := sim.Start(sim.Config{Instances: instances, Seed: 1, InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	p := pool.New(pool.Config{})
	for _, u := range f.URLs() {
		p.Add(u, pool.Public)
	}
	cfg.Pool, cfg.Upstream, cfg.Deadline = p, proxy.UpstreamConfig{UserAgent: "searxgate/test", Dial: f.Dial}, 5*time.Second
	px, err := proxy.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(px.Close)
	return &liveFleet{fleet: f, pool: p, proxy: px}
}

// publicPool returns a pool of public instances urls and a proxy over it,
// closed when the test ends.
func publicPool(tb testing.TB, urls ...string) (*pool.Pool, *proxy.Proxy) {
	tb.Helper()
	p := pool.New(pool.Config{})
	for _, u := range urls {
		p.Add(u, pool.Public)
	}
	px, err := proxy.New(proxy.Config{Pool: p})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(px.Close)
	return p, px
}
