package proxy

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/results"
	"github.com/searxgate/searxgate/sim"
)

// BenchmarkFanout measures what fan-out buys and costs on a healthy sim
// fleet of 12 instances: distinct results per client search (by
// results.SameURLKey) and upstream searches per client search, for fanout
// 1, 2 and 3. Run with -benchtime Nx: N distinct searches per fanout.
func BenchmarkFanout(b *testing.B) {
	for _, n := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("fanout=%d", n), func(b *testing.B) { runFanout(b, n) })
	}
}

func runFanout(b *testing.B, fanout int) {
	mix, err := sim.Mix("healthy", 12, 7)
	if err != nil {
		b.Fatal(err)
	}
	for i := range mix {
		mix[i].Latency = -1 // the cost measured is searches, not time
	}
	fleet, err := sim.Start(sim.Config{Instances: mix, Seed: 7, InMemory: true})
	if err != nil {
		b.Fatal(err)
	}
	defer fleet.Close()
	pl := pool.New(pool.Config{Jitter: 0.1})
	var priors []pool.Prior
	for _, in := range fleet.Instances() {
		priors = append(priors, pool.Prior{URL: in.URL()})
	}
	pl.Seed(priors)
	p, err := New(Config{Pool: pl, Upstream: UpstreamConfig{UserAgent: "searxgate-bench/1", Dial: fleet.Dial},
		Budget: []Window{}, MaxFanout: 3, Deadline: 4 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	p.Instances().ReadTermsNow(context.Background(), fleet.URLs())
	distinct, answered := 0, 0
	b.ResetTimer()
	for i := range b.N {
		res, err := p.Search(context.Background(), Request{Query: fmt.Sprintf("fanout query %d", i), PageNo: 1, Format: FormatJSON, Fanout: fanout})
		if err != nil {
			continue
		}
		r, err := res.Results()
		if err != nil {
			b.Fatal(err)
		}
		keys := map[string]bool{}
		for _, x := range r.Results {
			keys[results.SameURLKey(x.URL)] = true
		}
		distinct += len(keys)
		answered++
	}
	b.StopTimer()
	var searches uint64
	for _, tr := range fleet.Truth() {
		searches += tr.Searches
	}
	b.ReportMetric(float64(distinct)/float64(max(answered, 1)), "distinct/search")
	b.ReportMetric(float64(searches)/float64(b.N), "upstream/search")
	b.ReportMetric(100*float64(answered)/float64(b.N), "answered%")
	b.ReportMetric(0, "ns/op") // the fleet's start-up dominates wall time: not a cost per search
}
