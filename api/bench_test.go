package api

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/reader"
	"github.com/searxgate/searxgate/sim"
)

// benchDoors is the doors over a real proxy and a real page reader, on a
// healthy sim fleet over loopback TCP whose results link to pages the
// instances serve. Every sim page is on 127.0.0.1, where real results
// are on many hosts: the reader's per-host minute (30) is lifted so a
// long run is not paced as one site; its per-host in-flight bound (2)
// stays, stricter than five real hosts would be.
func benchDoors(b *testing.B) (*Server, func()) {
	mix, err := sim.Mix("healthy", 8, 45)
	if err != nil {
		b.Fatal(err)
	}
	for i := range mix {
		mix[i].JSON = true
	}
	fleet, err := sim.Start(sim.Config{Instances: mix, Seed: 45, LocalLinks: true})
	if err != nil {
		b.Fatal(err)
	}
	pl := pool.New(pool.Config{})
	var priors []pool.Prior
	for _, u := range fleet.URLs() {
		priors = append(priors, pool.Prior{URL: u})
	}
	pl.Seed(priors)
	p, err := proxy.New(proxy.Config{Pool: pl, Upstream: proxy.UpstreamConfig{UserAgent: "searxgate-bench/1"}, Budget: []proxy.Window{}})
	if err != nil {
		b.Fatal(err)
	}
	rd := reader.New(reader.Config{AllowPrivate: true, UserAgent: "searxgate-bench/1", PerHostPerMinute: 1 << 20})
	s := New(Config{Search: p, Read: rd, Client: func(*fasthttp.RequestCtx) string { return "127.0.0.1" }})
	return s, func() { p.Close(); _ = fleet.Close() }
}

// p95 of ds (sorted in place).
func p95(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[(len(ds)*95+99)/100-1]
}

// BenchmarkTavilyRawContent: a Tavily search of 5 results with raw
// content, against a plain search and a single page read, each of a
// query never asked before. Its p95 must stay within the search's p95,
// plus the slowest single read's p95, plus 100 ms: the five pages are
// read at once, within the reader's politeness. Run it with a fixed
// count, e.g. -benchtime=200x.
func BenchmarkTavilyRawContent(b *testing.B) {
	s, stop := benchDoors(b)
	defer stop()
	// Warm up: the pool learns the instances and their terms.
	for i := range 20 {
		do(b, s, "POST", PathTavilySearch, `{"query":"warm up `+strconv.Itoa(i)+`"}`, nil)
	}
	var search, read, raw []time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		n := strconv.Itoa(i)
		t0 := time.Now()
		status, body, _ := do(b, s, "POST", PathTavilySearch, `{"query":"plain search `+n+`","max_results":5}`, nil)
		search = append(search, time.Since(t0))
		var out tavilyOut
		if status != 200 || json.Unmarshal(body, &out) != nil || len(out.Results) != 5 {
			b.Fatalf("plain search: %d %.300s", status, body)
		}
		t0 = time.Now()
		if _, err := s.cfg.Read.Read(context.Background(), reader.Request{URL: out.Results[4].URL, Client: "127.0.0.1"}); err != nil {
			b.Fatalf("read %s: %v", out.Results[4].URL, err)
		}
		read = append(read, time.Since(t0))
		t0 = time.Now()
		status, body, _ = do(b, s, "POST", PathTavilySearch, `{"query":"raw content `+n+`","max_results":5,"include_raw_content":true}`, nil)
		raw = append(raw, time.Since(t0))
		out = tavilyOut{}
		if status != 200 || json.Unmarshal(body, &out) != nil || len(out.Results) != 5 {
			b.Fatalf("raw content search: %d %.300s", status, body)
		}
		for _, r := range out.Results {
			if r.RawContent == nil || *r.RawContent == "" {
				b.Fatalf("no raw content for %s", r.URL)
			}
		}
	}
	b.StopTimer()
	ps, pr, pw := p95(search), p95(read), p95(raw)
	b.ReportMetric(float64(ps.Microseconds())/1000, "search-p95-ms")
	b.ReportMetric(float64(pr.Microseconds())/1000, "read-p95-ms")
	b.ReportMetric(float64(pw.Microseconds())/1000, "raw-p95-ms")
	if b.N >= 20 && pw > ps+pr+100*time.Millisecond {
		b.Errorf("raw content p95 %v > search p95 %v + read p95 %v + 100ms", pw, ps, pr)
	}
}
