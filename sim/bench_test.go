package sim

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// BenchmarkSearch measures one search answered by an in-memory instance
// with no latency, through a fasthttp client: the fleet's own cost per
// search in a proxy benchmark.
func BenchmarkSearch(b *testing.B) {
	for _, format := range []string{"json", "html"} {
		for _, gz := range []bool{false, true} {
			name := format
			if gz {
				name += "-gzip"
			}
			b.Run(name, func(b *testing.B) {
				f := startFleet(b, Config{InMemory: true, Instances: []InstanceConfig{{Latency: -1, JSON: true}}})
				c := memClient(f)
				u := searchURL(f.Instances()[0], "hello world", format)
				req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
				defer fasthttp.ReleaseRequest(req)
				defer fasthttp.ReleaseResponse(resp)
				req.SetRequestURI(u)
				for k, v := range honest {
					req.Header.Set(k, v)
				}
				if !gz {
					req.Header.Set("Accept-Encoding", "deflate")
				}
				b.ReportAllocs()
				for b.Loop() {
					if err := c.Do(req, resp); err != nil || resp.StatusCode() != 200 {
						b.Fatalf("status %d, %v", resp.StatusCode(), err)
					}
				}
			})
		}
	}
}

// BenchmarkRender measures building one answer of ten results.
func BenchmarkRender(b *testing.B) {
	f := startFleet(b, Config{InMemory: true, Instances: []InstanceConfig{{Latency: -1, JSON: true}}})
	in := f.Instances()[0]
	for _, format := range []string{"json", "html"} {
		b.Run(format, func(b *testing.B) {
			s := search{q: "hello world", format: format, pageno: 1}
			b.ReportAllocs()
			for b.Loop() {
				if len(in.render(s)) == 0 {
					b.Fatal("empty")
				}
			}
		})
	}
}
