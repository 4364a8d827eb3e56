package web

import (
	"fmt"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

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
	for b.Loop() {
		var ctx fasthttp.RequestCtx
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
