package proxy

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/sim"
)

// benchProxy is a Proxy over four instant in-memory instances that answer
// JSON, their terms learned as in steady state.
func benchProxy(b *testing.B) *Proxy {
	fleet, err := sim.Start(sim.Config{InMemory: true, Seed: 1, Instances: []sim.InstanceConfig{
		{Behaviour: sim.Fast, Latency: -1, JSON: true},
		{Behaviour: sim.Fast, Latency: -1, JSON: true},
		{Behaviour: sim.Fast, Latency: -1, JSON: true},
		{Behaviour: sim.Fast, Latency: -1, JSON: true},
	}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = fleet.Close() })
	pl := pool.New(pool.Config{MaxInFlight: -1})
	var priors []pool.Prior
	for _, u := range fleet.URLs() {
		priors = append(priors, pool.Prior{URL: u})
	}
	pl.Seed(priors)
	p, err := New(Config{
		Pool:     pl,
		Upstream: UpstreamConfig{UserAgent: "searxgate-bench/1", Dial: fleet.Dial, MaxConns: 256},
		Budget:   []Window{},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(p.Close)
	// Terms learned, as in steady state: JSON everywhere.
	now := time.Now()
	for _, u := range fleet.URLs() {
		p.setCaps(u, func(c *Caps) { *c = Caps{ConfigAt: now, ConfigOK: true, JSON: Yes, JSONAt: now} })
	}
	return p
}

// BenchmarkSearchCached measures a cache hit in the search path: the key,
// the memory cache, the response.
func BenchmarkSearchCached(b *testing.B) {
	p := benchProxy(b)
	req := Request{Query: "bench hit", PageNo: 1, Format: FormatJSON}
	if _, err := p.Search(context.Background(), req); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if r, err := p.Search(context.Background(), req); err != nil || !r.Cached {
				b.Errorf("not a hit: %v", err)
				return
			}
		}
	})
}

// BenchmarkSearchMiss measures the whole search path for a query never
// asked before (no cache can answer) on instant in-memory instances that
// answer JSON: checkout, upstream request, verdict, parse, re-encode, cache.
func BenchmarkSearchMiss(b *testing.B) {
	p := benchProxy(b)
	var n atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			q := "bench miss " + strconv.FormatInt(n.Add(1), 10)
			if _, err := p.Search(context.Background(), Request{Query: q, PageNo: 1, Format: FormatJSON}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
