package proxy

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy/upstream"
	"github.com/searxgate/searxgate/sim"
)

// The routing benchmark: the same client searches, paced like a busy
// gateway's traffic, sent to the same simulated fleet through searxgate and
// through two naive clients, so their success, latency and the load they
// put on the instances can be compared in one run. Each strategy gets a
// fresh fleet built from the same seed.
//
//	go test ./proxy -run '^$' -bench Routing -benchtime 300x
//
// One op is one client search; searches arrive every routingPace.
const (
	routingFleet    = 60
	routingSeed     = 1
	routingPace     = 80 * time.Millisecond // 12.5 searches a second
	routingDeadline = 4 * time.Second
	routingAttempts = 4
)

type routingOutcome struct {
	ok      bool
	latency time.Duration
}

// strategy answers one search and reports whether it got on-topic results.
type strategy func(q string, i int) bool

func BenchmarkRouting(b *testing.B) {
	for _, name := range []string{"searxgate", "random", "round_robin"} {
		b.Run(name, func(b *testing.B) { runRouting(b, name) })
	}
}

func runRouting(b *testing.B, name string) {
	mix, err := sim.Mix("mixed", routingFleet, routingSeed)
	if err != nil {
		b.Fatal(err)
	}
	fleet, err := sim.Start(sim.Config{Instances: mix, Seed: routingSeed})
	if err != nil {
		b.Fatal(err)
	}
	defer fleet.Close()
	urls := fleet.URLs()
	ua := "searxgate-bench/1"

	var run strategy
	switch name {
	case "searxgate":
		p := newRoutingProxy(b, fleet, ua)
		defer p.Close()
		run = func(q string, _ int) bool {
			res, err := p.Search(context.Background(), Request{Query: q, PageNo: 1, Format: FormatJSON})
			return err == nil && res.Soft == ""
		}
	case "random":
		up := upstream.New(upstream.Config{UserAgent: ua}, nil)
		var mu sync.Mutex
		rnd := rand.New(rand.NewPCG(routingSeed, 2))
		run = func(q string, _ int) bool {
			return naive(up, q, func(int) string {
				mu.Lock()
				defer mu.Unlock()
				return urls[rnd.IntN(len(urls))]
			})
		}
	case "round_robin":
		up := upstream.New(upstream.Config{UserAgent: ua}, nil)
		var next atomic.Uint64
		run = func(q string, _ int) bool {
			return naive(up, q, func(int) string { return urls[next.Add(1)%uint64(len(urls))] })
		}
	}

	outcomes := make([]routingOutcome, b.N)
	var wg sync.WaitGroup
	b.ResetTimer()
	tick := time.NewTicker(routingPace)
	for i := range b.N {
		if i > 0 {
			<-tick.C
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			ok := run(fmt.Sprintf("routing query%d", i), i)
			outcomes[i] = routingOutcome{ok: ok, latency: time.Since(start)}
		}()
	}
	wg.Wait()
	tick.Stop()
	b.StopTimer()

	var okN int
	lat := make([]time.Duration, 0, b.N)
	for _, o := range outcomes {
		if o.ok {
			okN++
		}
		lat = append(lat, o.latency)
	}
	slices.Sort(lat)
	var searches, refusals uint64
	for _, tr := range fleet.Truth() {
		searches += tr.Searches
		refusals += tr.Refusals
	}
	b.ReportMetric(100*float64(okN)/float64(b.N), "success%")
	b.ReportMetric(float64(lat[len(lat)/2].Milliseconds()), "p50_ms")
	b.ReportMetric(float64(lat[len(lat)*95/100].Milliseconds()), "p95_ms")
	b.ReportMetric(float64(searches)/float64(b.N), "upstream/search")
	b.ReportMetric(float64(refusals), "refusals")
	b.ReportMetric(0, "ns/op") // wall time per op is the pace, not a cost
}

func newRoutingProxy(b *testing.B, fleet *sim.Fleet, ua string) *Proxy {
	pl := pool.New(pool.Config{Jitter: 0.1})
	var priors []pool.Prior
	for _, in := range fleet.Instances() {
		priors = append(priors, pool.Prior{URL: in.URL()})
	}
	pl.Seed(priors)
	p, err := New(Config{
		Pool:        pl,
		Upstream:    UpstreamConfig{UserAgent: ua},
		Deadline:    routingDeadline,
		MaxAttempts: routingAttempts,
	})
	if err != nil {
		b.Fatal(err)
	}
	// As the gateway does when its list is loaded.
	p.Instances().ReadTerms(fleet.URLs())
	return p
}

// naive is a client without memory: it asks the instance pick gives it,
// and on anything but an on-topic answer asks the next, up to the same
// attempt cap and deadline as searxgate.
func naive(up *upstream.Client, q string, pick func(attempt int) string) bool {
	deadline := time.Now().Add(routingDeadline)
	args := fasthttp.AcquireArgs()
	defer fasthttp.ReleaseArgs(args)
	args.Set("q", q)
	for attempt := range routingAttempts {
		if time.Now().After(deadline) {
			return false
		}
		inst := pick(attempt)
		rep, err := up.Get(inst, "search", args, "en-US,en;q=0.9", time.Until(deadline))
		if err != nil {
			continue
		}
		v := detect.Classify(detect.Answer{Status: rep.Status, Header: rep.Header, Body: rep.Body,
			Format: FormatHTML, Query: detect.ParseQuery(q), Now: time.Now(), MaxBody: up.MaxBody()})
		if v.Kind == detect.OK {
			return true
		}
	}
	return false
}
