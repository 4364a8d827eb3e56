package proxy

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/searxgate/searxgate/sim"
)

// The quality benchmark: a fleet whose fastest instances answer thin (their
// big engines suspended, 4 results from one engine) and whose full ones
// are fewer and slower, as public SearXNG instances often are. Each op is
// a fresh fleet and gateway asked qualitySearches distinct searches,
// qualityParallel at a time; the metrics are over every search of every
// op.
//
//	go test ./proxy -run '^$' -bench Quality -benchtime 5x
//
// "full" is the fleet of the issue: 6 fast thin, 1 fast full, 3 full at
// ~450 ms; "thin_only" is the same fleet with every full instance gone.
const (
	qualitySearches = 30
	qualityParallel = 4
	fullPage        = 10 // a full sim answer's results
)

func BenchmarkQuality(b *testing.B) {
	b.Run("full", func(b *testing.B) { runQuality(b, qualityFleet(true)) })
	b.Run("thin_only", func(b *testing.B) { runQuality(b, qualityFleet(false)) })
}

// qualityFleet is 6 fast thin instances, with (full) 1 fast and 3 medium
// full ones.
func qualityFleet(full bool) []sim.InstanceConfig {
	var out []sim.InstanceConfig
	add := func(b sim.Behaviour, lat, jitter time.Duration) {
		out = append(out, sim.InstanceConfig{ID: fmt.Sprintf("sim-%02d", len(out)+1), Behaviour: b, Latency: lat, Jitter: jitter, JSON: true})
	}
	for range 6 {
		add(sim.Thin, 60*time.Millisecond, 20*time.Millisecond)
	}
	if full {
		add(sim.Fast, 60*time.Millisecond, 20*time.Millisecond)
		for range 3 {
			add(sim.Medium, 450*time.Millisecond, 135*time.Millisecond)
		}
	}
	return out
}

type qualityOutcome struct {
	ok, full, said bool
	hits           int
	latency        time.Duration
}

func runQuality(b *testing.B, fleetCfg []sim.InstanceConfig) {
	var all []qualityOutcome
	var upstream uint64
	b.ResetTimer()
	for op := range b.N {
		fleet, err := sim.Start(sim.Config{Instances: fleetCfg, Seed: int64(op + 1)})
		if err != nil {
			b.Fatal(err)
		}
		p := newRoutingProxy(b, fleet, "searxgate-bench/1")
		outs := make([]qualityOutcome, qualitySearches)
		sem := make(chan struct{}, qualityParallel)
		var wg sync.WaitGroup
		for i := range qualitySearches {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				start := time.Now()
				res, err := p.Search(context.Background(), Request{Query: fmt.Sprintf("quality query%d op%d", i, op), PageNo: 1, Format: FormatJSON})
				o := qualityOutcome{latency: time.Since(start)}
				if err == nil && res.Soft == "" {
					o.ok = true
					if page, err := res.Results(); err == nil {
						o.hits = len(page.Results)
					}
					o.full = o.hits >= fullPage
					o.said = saysThin(res)
				}
				outs[i] = o
			}()
		}
		wg.Wait()
		p.Close()
		for _, tr := range fleet.Truth() {
			upstream += tr.Searches
		}
		fleet.Close()
		all = append(all, outs...)
	}
	b.StopTimer()
	reportQuality(b, all, upstream)
}

func reportQuality(b *testing.B, all []qualityOutcome, upstream uint64) {
	var okN, fullN, thinN, saidN, hits int
	lat := make([]time.Duration, 0, len(all))
	for _, o := range all {
		lat = append(lat, o.latency)
		if !o.ok {
			continue
		}
		okN++
		hits += o.hits
		if o.full {
			fullN++
		} else {
			thinN++
			if o.said {
				saidN++
			}
		}
	}
	slices.Sort(lat)
	n := float64(len(all))
	b.ReportMetric(100*float64(okN)/n, "success%")
	b.ReportMetric(100*float64(fullN)/n, "full%")
	b.ReportMetric(float64(hits)/max(float64(okN), 1), "results/answer")
	if thinN > 0 {
		b.ReportMetric(100*float64(saidN)/float64(thinN), "thin_said%")
	}
	b.ReportMetric(float64(lat[len(lat)/2].Milliseconds()), "p50_ms")
	b.ReportMetric(float64(lat[len(lat)*95/100].Milliseconds()), "p95_ms")
	b.ReportMetric(float64(upstream)/n, "upstream/search")
	b.ReportMetric(0, "ns/op")
}

// saysThin reports whether a response says it is thin and why: which
// engines were suspended where, and how many results came from which.
func saysThin(res *Response) bool {
	n := res.Thin()
	return strings.Contains(n, "suspended on ") && strings.Contains(n, " results from ")
}
