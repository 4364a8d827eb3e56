package web

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/sim"
)

// tenResults is an answer of ten ordinary results.
func tenResults() string {
	var b strings.Builder
	b.WriteString(`{"query":"bench","number_of_results":10,"results":[`)
	for i := range 10 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"url":"https://site%d.example/a/page","title":"Bench result %d about bench","content":"%s","engine":"duckduckgo","engines":["duckduckgo","brave"],"score":1,"category":"general","thumbnail":"https://img.example/%d.jpg"}`,
			i, i, strings.Repeat("bench words ", 20), i)
	}
	b.WriteString(`],"answers":[],"corrections":[],"infoboxes":[],"suggestions":["bench press"],"unresponsive_engines":[]}`)
	return b.String()
}

func benchRequest(b *testing.B, h fasthttp.RequestHandler, uri string) {
	b.Helper()
	var req fasthttp.Request
	req.SetRequestURI(uri)
	b.ReportAllocs()
	b.ResetTimer()
	var ctx fasthttp.RequestCtx // reused, as the server reuses it
	for b.Loop() {
		ctx.Response.Reset()
		ctx.Init(&req, nil, nil)
		h(&ctx)
		if ctx.Response.StatusCode() != 200 {
			b.Fatalf("status %d", ctx.Response.StatusCode())
		}
	}
}

func BenchmarkResultsPage(b *testing.B) {
	body := tenResults()
	fs := &fakeSearch{answer: func(proxy.Request) (*proxy.Response, error) {
		return &proxy.Response{JSON: []byte(body), Instance: "https://up.example/"}, nil
	}}
	s, err := New(Config{Search: fs})
	if err != nil {
		b.Fatal(err)
	}
	benchRequest(b, s.Handler(), "http://gateway.test/search?q=bench")
}

func BenchmarkMetrics100Instances(b *testing.B) {
	p, px := publicPool(b, hundredURLs()...)
	s, err := New(Config{Proxy: px, Pool: p})
	if err != nil {
		b.Fatal(err)
	}
	benchRequest(b, s.Handler(), "http://gateway.test/metrics")
}

func BenchmarkStatusPage100Instances(b *testing.B) {
	p, px := publicPool(b, hundredURLs()...)
	s, err := New(Config{Proxy: px, Pool: p})
	if err != nil {
		b.Fatal(err)
	}
	benchRequest(b, s.Handler(), "http://gateway.test/status")
}

// BenchmarkCachedJSON is the hot path of an agent repeating a search: a
// JSON answer from the proxy's cache, through the whole handler.
func BenchmarkCachedJSON(b *testing.B) {
	live := startLive(b, []sim.InstanceConfig{{Behaviour: sim.Fast, Latency: -1, JSON: true}})
	s, err := New(Config{Proxy: live.proxy, Pool: live.pool})
	if err != nil {
		b.Fatal(err)
	}
	const uri = "/search?q=hello+world&format=json"
	// The first search fills the cache.
	var warm fasthttp.Request
	warm.SetRequestURI(uri)
	var ctx fasthttp.RequestCtx
	ctx.Init(&warm, nil, nil)
	s.Handler()(&ctx)
	if ctx.Response.StatusCode() != 200 {
		b.Fatalf("warm-up: %d %s", ctx.Response.StatusCode(), ctx.Response.Body())
	}
	benchRequest(b, s.Handler(), uri)
}

// hundredURLs names 100 instances.
func hundredURLs() []string {
	urls := make([]string, 100)
	for i := range urls {
		urls[i] = fmt.Sprintf("https://i%03d.example/", i)
	}
	return urls
}

// BenchmarkSearchMissJSON is the miss path through the whole handler: a
// JSON search never asked before, answered by four in-memory instances
// whose terms are known (JSON everywhere, as in steady state), with the
// budgets lifted: parse the request, check out an instance, ask it, decode,
// judge and sanitise its answer, re-encode it, cache it, write the
// response. The instances send one gzipped ten-result answer made once, so
// that the profile is searxgate's alone (the sim's rendering would be half
// of it); the answer echoes no query, so it is judged on its results,
// which mention the query's words.
func BenchmarkSearchMissJSON(b *testing.B) {
	h := missHandler(b)
	var n atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var req fasthttp.Request
		var ctx fasthttp.RequestCtx // reused, as the server reuses it
		for pb.Next() {
			req.SetRequestURI("/search?format=json&q=bench+miss+" + strconv.FormatInt(n.Add(1), 10))
			ctx.Response.Reset()
			ctx.Init(&req, nil, nil)
			h(&ctx)
			if ctx.Response.StatusCode() != 200 || ctx.Response.Header.Peek("X-Searxgate-Cache") != nil && string(ctx.Response.Header.Peek("X-Searxgate-Cache")) != "miss" {
				b.Errorf("status %d (%s): %.200s", ctx.Response.StatusCode(), ctx.Response.Header.Peek("X-Searxgate-Cache"), ctx.Response.Body())
				return
			}
		}
	})
}

// BenchmarkSearchMissJSONOverTCP is BenchmarkSearchMissJSON with real
// sockets on loopback between the client, searxgate and the instances, 64
// connections at once, as sim/load/load.sh drives it: its profile shows
// what the system calls and the hand-offs between goroutines cost a miss.
func BenchmarkSearchMissJSONOverTCP(b *testing.B) {
	h := missHandlerWith(b, func(tb testing.TB) func(string) (net.Conn, error) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		serveFixedAnswer(tb, ln)
		addr := ln.Addr().String()
		return func(string) (net.Conn, error) { return net.Dial("tcp", addr) }
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = ln.Close() })
	c := &fasthttp.HostClient{Addr: ln.Addr().String(), MaxConns: 64}
	var n atomic.Int64
	b.SetParallelism(32) // 64 clients on 2 CPUs
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		for pb.Next() {
			req.SetRequestURI("http://" + c.Addr + "/search?format=json&q=bench+miss+" + strconv.FormatInt(n.Add(1), 10))
			if err := c.Do(req, resp); err != nil || resp.StatusCode() != 200 {
				b.Errorf("%v %d: %.200s", err, resp.StatusCode(), resp.Body())
				return
			}
		}
	})
}

// missHandler is searxgate's handler over four in-memory instances that
// answer every search with one gzipped answer (see
// BenchmarkSearchMissJSON).
func missHandler(b *testing.B) fasthttp.RequestHandler {
	return missHandlerWith(b, func(tb testing.TB) func(string) (net.Conn, error) {
		ln := fasthttputil.NewInmemoryListener()
		serveFixedAnswer(tb, ln)
		return func(string) (net.Conn, error) { return ln.Dial() }
	})
}

// serveFixedAnswer serves one gzipped ten-result answer to every request
// on ln until the test ends.
func serveFixedAnswer(tb testing.TB, ln net.Listener) {
	body := strings.Replace(tenResults(), `"query":"bench",`, "", 1)
	body = strings.ReplaceAll(body, "bench words", "bench miss words")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte(body))
	_ = zw.Close()
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		ctx.SetContentType("application/json")
		ctx.Response.Header.Set("Content-Encoding", "gzip")
		ctx.SetBody(gz.Bytes())
	}}
	go func() { _ = srv.Serve(ln) }()
	tb.Cleanup(func() { _ = ln.Close() })
}

// missHandlerWith is missHandler over instances listen starts (it returns
// their dialer).
func missHandlerWith(b *testing.B, listen func(testing.TB) func(string) (net.Conn, error)) fasthttp.RequestHandler {
	dial := listen(b)
	p := pool.New(pool.Config{MaxInFlight: -1})
	caps := map[string]proxy.Caps{}
	now := time.Now()
	for i := range 4 {
		u := fmt.Sprintf("http://up%d.example/", i)
		p.Add(u, pool.Public)
		caps[u] = proxy.Caps{ConfigAt: now, ConfigOK: true, JSON: proxy.Yes, JSONAt: now}
	}
	px, err := proxy.New(proxy.Config{Pool: p, Budget: []proxy.Window{},
		Upstream: proxy.UpstreamConfig{UserAgent: "searxgate-bench/1", MaxConns: 256, Dial: dial}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(px.Close)
	px.Instances().ImportCaps(caps)
	s, err := New(Config{Proxy: px, Pool: p})
	if err != nil {
		b.Fatal(err)
	}
	return s.Handler()
}
