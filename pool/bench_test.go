package pool

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"
)

// benchPool is a pool of n public instances with seeded random priors.
func benchPool(b *testing.B, n int, cfg Config) *Pool {
	b.Helper()
	if cfg.Clock == nil {
		cfg.Clock = newClock()
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.New(rand.NewPCG(1, 1))
	}
	p := New(cfg)
	r := rand.New(rand.NewPCG(9, uint64(n)))
	priors := make([]Prior, n)
	for i := range priors {
		priors[i] = Prior{fmt.Sprintf("https://searx%05d.example/", i), time.Duration(300+r.IntN(3000)) * time.Millisecond}
	}
	p.Seed(priors)
	return p
}

// cycle checks out one instance and records an OK answer whose latency
// varies, so that the best instance keeps changing.
func cycle(b *testing.B, p *Pool, ctx context.Context, skip func(string) bool, i int) {
	ls, err := p.Checkout(ctx, 1, skip)
	if err != nil {
		b.Fatal(err)
	}
	p.Record(ls[0], Outcome{Kind: OK, Hits: 10}, time.Duration(200+(i%64)*40)*time.Millisecond)
}

func runCycles(b *testing.B, p *Pool, ctx context.Context, skip func(string) bool, goroutines int) {
	b.ReportAllocs()
	if goroutines == 1 {
		i := 0
		for b.Loop() {
			cycle(b, p, ctx, skip, i)
			i++
		}
		return
	}
	// RunParallel starts parallelism*GOMAXPROCS goroutines.
	b.SetParallelism(max(1, (goroutines+runtime.GOMAXPROCS(0)-1)/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			cycle(b, p, ctx, skip, i)
			i++
		}
	})
}

// BenchmarkCheckoutRecord: Checkout(1 of N) + Record, the cost every
// upstream search pays, at N = 100, 1,000, 10,000 with 1 and 8 goroutines.
func BenchmarkCheckoutRecord(b *testing.B) {
	for _, n := range []int{100, 1_000, 10_000} {
		for _, g := range []int{1, 8} {
			b.Run(fmt.Sprintf("N=%d/goroutines=%d", n, g), func(b *testing.B) {
				runCycles(b, benchPool(b, n, Config{}), context.Background(), nil, g)
			})
		}
	}
}

// BenchmarkCheckoutRecordVariants: the options that cost something, at
// N = 1,000 on one goroutine.
func BenchmarkCheckoutRecordVariants(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	skipNone := func(string) bool { return false }
	cases := []struct {
		name string
		cfg  Config
		ctx  context.Context
		skip func(string) bool
	}{
		{"cancellable-ctx", Config{}, ctx, nil},
		{"jitter=0.2", Config{Jitter: 0.2}, context.Background(), nil},
		{"min-interval", Config{MinInterval: time.Minute, MaxInFlight: -1}, context.Background(), nil},
		{"skip", Config{}, context.Background(), skipNone},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			runCycles(b, benchPool(b, 1_000, tc.cfg), tc.ctx, tc.skip, 1)
		})
	}
}

// BenchmarkCheckoutRecordWithReader: the same cycle while another
// goroutine reads Snapshot without pause, to see what reading costs
// searches.
func BenchmarkCheckoutRecordWithReader(b *testing.B) {
	p := benchPool(b, 1_000, Config{})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				p.Snapshot()
			}
		}
	})
	runCycles(b, p, context.Background(), nil, 1)
	b.StopTimer()
	close(stop)
	wg.Wait()
}

// BenchmarkRecord: Record alone (leases taken outside the timer).
func BenchmarkRecord(b *testing.B) {
	p := benchPool(b, 1_000, Config{MaxInFlight: -1})
	const batch = 4096
	ls := make([]*Lease, 0, batch)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if len(ls) == 0 {
			b.StopTimer()
			for range batch {
				l, err := p.Checkout(context.Background(), 1, nil)
				if err != nil {
					b.Fatal(err)
				}
				ls = append(ls, l[0])
			}
			b.StartTimer()
		}
		p.Record(ls[len(ls)-1], Outcome{Kind: OK}, time.Duration(200+(i%64)*40)*time.Millisecond)
		ls = ls[:len(ls)-1]
	}
}

// BenchmarkSnapshot and BenchmarkRank: the readers, at N = 1,000.
func BenchmarkSnapshot(b *testing.B) {
	p := benchPool(b, 1_000, Config{})
	b.ReportAllocs()
	for b.Loop() {
		p.Snapshot()
	}
}

// BenchmarkSnapshotLocked: the copy Snapshot makes of the records (its
// allocation outside the read lock, the copy under it): an upper bound of
// what a search may wait for behind a reader.
func BenchmarkSnapshotLocked(b *testing.B) {
	p := benchPool(b, 1_000, Config{})
	b.ReportAllocs()
	for b.Loop() {
		p.records()
	}
}

func BenchmarkRank(b *testing.B) {
	p := benchPool(b, 1_000, Config{})
	b.ReportAllocs()
	for b.Loop() {
		p.Rank(5, nil)
	}
}
