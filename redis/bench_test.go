package redis

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/searxgate/searxgate/internal/redistest"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/sim"
)

// benchProxy is one replica over fleet, with Redis shared state when s is
// not nil. The budget is wide: the benchmark measures the search path,
// not the windows.
func benchProxy(b *testing.B, fleet *sim.Fleet, s *Shared) *proxy.Proxy {
	b.Helper()
	pl := pool.New(pool.Config{MaxInFlight: 64})
	var priors []pool.Prior
	for _, u := range fleet.URLs() {
		priors = append(priors, pool.Prior{URL: u, Prior: 100 * time.Millisecond})
	}
	pl.Seed(priors)
	cfg := proxy.Config{
		Pool:     pl,
		Upstream: proxy.UpstreamConfig{UserAgent: "searxgate-bench/1", Dial: fleet.Dial},
		Budget:   []proxy.Window{{Max: proxy.MaxWindow, Per: time.Second}},
	}
	if s != nil {
		cfg.Shared = proxy.Shared{Budget: s, Cache: s}
	}
	p, err := proxy.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(p.Close)
	return p
}

func benchShared(b *testing.B, srv *redistest.Server, budget []proxy.Window) *Shared {
	b.Helper()
	s, err := New(Options{URL: srv.URL(), Group: fmt.Sprintf("bench%d", groupSeq.Add(1)), Budget: budget,
		Secret: testSecret, OpTimeout: 100 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Connect(context.Background()); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	b.Cleanup(func() { cancel(); <-done; _ = s.Close() })
	return s
}

// reportPercentiles reports p50 and p99 of ds in µs.
func reportPercentiles(b *testing.B, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkUpstreamSearch measures one search that goes upstream (a sim
// instance answering at once, in memory), alone and with Redis: the
// difference is what sharing costs a search (the lock, the cache read,
// the window script; the answer's write and the unlock are queued).
func BenchmarkUpstreamSearch(b *testing.B) {
	for _, withRedis := range []bool{false, true} {
		name := "local"
		if withRedis {
			name = "redis"
		}
		b.Run(name, func(b *testing.B) {
			fleet, err := sim.Start(sim.Config{InMemory: true, Seed: 1, Instances: fast(4)})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = fleet.Close() })
			var s *Shared
			if withRedis {
				s = benchShared(b, redistest.Start(b), []proxy.Window{{Max: proxy.MaxWindow, Per: time.Second}})
			}
			p := benchProxy(b, fleet, s)
			ctx := context.Background()
			// Terms read, connections open.
			for i := range 8 {
				if _, err := p.Search(ctx, proxy.Request{Query: fmt.Sprintf("warm %d", i), PageNo: 1, Format: proxy.FormatJSON}); err != nil {
					b.Fatal(err)
				}
			}
			ds := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				if _, err := p.Search(ctx, proxy.Request{Query: fmt.Sprintf("bench %s %d", name, i), PageNo: 1, Format: proxy.FormatJSON}); err != nil {
					b.Fatal(err)
				}
				ds = append(ds, time.Since(start))
			}
			b.StopTimer()
			reportPercentiles(b, ds)
		})
	}
}

// BenchmarkCacheHit measures cache hits with Redis behind the memory
// cache: "memory" hits what this replica answered itself (Redis is not
// asked; "memory-alone" is the same without Redis), "redis" hits what
// another replica answered (one GET, opened).
func BenchmarkCacheHit(b *testing.B) {
	fleet, err := sim.Start(sim.Config{InMemory: true, Seed: 1, Instances: fast(4)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = fleet.Close() })
	srv := redistest.Start(b)
	budget := []proxy.Window{{Max: proxy.MaxWindow, Per: time.Second}}
	sa := benchShared(b, srv, budget)
	a := benchProxy(b, fleet, sa)
	ctx := context.Background()
	const n = 256
	for i := range n {
		if _, err := a.Search(ctx, proxy.Request{Query: fmt.Sprintf("hit %d", i), PageNo: 1, Format: proxy.FormatJSON}); err != nil {
			b.Fatal(err)
		}
	}
	// Every answer written to Redis.
	c := rawClient(b, srv)
	for deadline := time.Now().Add(5 * time.Second); ; {
		keys, _ := c.Keys(ctx, sa.cache+"a:*").Result()
		if len(keys) >= n {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d answers in Redis", len(keys), n)
		}
		time.Sleep(time.Millisecond)
	}
	alone := benchProxy(b, fleet, nil)
	for i := range n {
		if _, err := alone.Search(ctx, proxy.Request{Query: fmt.Sprintf("hit %d", i), PageNo: 1, Format: proxy.FormatJSON}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("memory-alone", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				r, err := alone.Search(ctx, proxy.Request{Query: fmt.Sprintf("hit %d", i%n), PageNo: 1, Format: proxy.FormatJSON})
				if err != nil || !r.Cached {
					b.Fatalf("not a hit: %v", err)
				}
				i++
			}
		})
	})
	b.Run("memory", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				r, err := a.Search(ctx, proxy.Request{Query: fmt.Sprintf("hit %d", i%n), PageNo: 1, Format: proxy.FormatJSON})
				if err != nil || !r.Cached {
					b.Fatalf("not a hit: %v", err)
				}
				i++
			}
		})
	})
	b.Run("redis", func(b *testing.B) {
		// A fresh replica each round, so that every search misses its
		// memory and reads Redis.
		ds := make([]time.Duration, 0, b.N)
		b.ReportAllocs()
		for i := 0; i < b.N; {
			b.StopTimer()
			other := benchProxy(b, fleet, sa)
			b.StartTimer()
			for j := 0; j < n && i < b.N; j, i = j+1, i+1 {
				start := time.Now()
				r, err := other.Search(ctx, proxy.Request{Query: fmt.Sprintf("hit %d", j), PageNo: 1, Format: proxy.FormatJSON})
				if err != nil || !r.Cached {
					b.Fatalf("not a hit: %v", err)
				}
				ds = append(ds, time.Since(start))
			}
		}
		b.StopTimer()
		reportPercentiles(b, ds)
	})
}
