package pool

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestPriorsRankUnmeasured: instances nobody measured rank by their
// seeded prior, those without one by Config.Prior; measured ones by their
// average.
func TestPriorsRankUnmeasured(t *testing.T) {
	const d = "https://d.example/"
	f := newFixture(t, Config{Prior: 1500 * time.Millisecond})
	f.Seed([]Prior{{a, 3 * time.Second}, {b, 700 * time.Millisecond}, {c, 0}, {d, 1200 * time.Millisecond}})
	if got, want := f.Rank(0, nil), []string{b, d, c, a}; !slices.Equal(got, want) {
		t.Fatalf("rank %v, want %v", got, want)
	}
	if st := f.Stats(c); st.PriorMS != 1500 || st.LatencyMS != 1500 || st.Measured {
		t.Fatalf("c without a median: %+v", st)
	}
	// a turns out fast: its measurement replaces its prior.
	f.record(t, a, okO, 400*time.Millisecond)
	if got, want := f.Rank(0, nil), []string{a, b, d, c}; !slices.Equal(got, want) {
		t.Fatalf("after measuring a: rank %v, want %v", got, want)
	}
}

// TestScoreFormula checks the score against latency*(1+penalty*failure).
func TestScoreFormula(t *testing.T) {
	for _, penalty := range []float64{0, 1, 3, 10} {
		cfg := Config{FailurePenalty: penalty}
		if penalty == 0 {
			cfg.FailurePenalty = -1 // "no penalty"
		}
		f := newFixture(t, cfg)
		f.Add(a, Public)
		f.record(t, a, okO, 1000*time.Millisecond)
		f.record(t, a, refusedO, 10*time.Millisecond)
		st := f.Stats(a)
		f.mu.RLock()
		got := f.slots[0].score
		f.mu.RUnlock()
		want := st.LatencyMS * (1 + penalty*st.FailureRate)
		if math.Abs(got-want) > 1e-9 || st.FailureRate != failureAlpha {
			t.Errorf("penalty %v: score %v, want %v (failure %v)", penalty, got, want, st.FailureRate)
		}
	}
}

// TestJitterSpreadsPicks: with jitter, the picks of near-equal instances
// spread; without it, the best one always wins.
func TestJitterSpreadsPicks(t *testing.T) {
	priors := []Prior{{a, 1000 * time.Millisecond}, {b, 1050 * time.Millisecond}, {c, 1100 * time.Millisecond}, {"slow", 3000 * time.Millisecond}}
	cases := []struct {
		jitter   float64
		minShare map[string]float64
		maxShare map[string]float64
	}{
		{0, map[string]float64{a: 1}, map[string]float64{b: 0, c: 0, "slow": 0}},
		{0.2, map[string]float64{a: 0.2, b: 0.2, c: 0.15}, map[string]float64{a: 0.6, "slow": 0}},
		{1, map[string]float64{a: 0.1, b: 0.1, c: 0.1, "slow": 0.01}, map[string]float64{a: 0.5}},
	}
	const n = 4000
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.jitter), func(t *testing.T) {
			f := newFixture(t, Config{Jitter: tc.jitter, Rand: rand.New(rand.NewPCG(7, 11))})
			f.Seed(priors)
			count := map[string]int{}
			for range n {
				l := f.one(t)
				count[l.Instance()]++
				f.Record(l, cancelO, 0) // gives it back, learns nothing
			}
			t.Logf("picks over %d checkouts: %v", n, count)
			for u, s := range tc.minShare {
				if got := float64(count[u]) / n; got < s {
					t.Errorf("%s picked %.3f of the time, want >= %.2f (%v)", u, got, s, count)
				}
			}
			for u, s := range tc.maxShare {
				if got := float64(count[u]) / n; got > s {
					t.Errorf("%s picked %.3f of the time, want <= %.2f (%v)", u, got, s, count)
				}
			}
		})
	}
}

// TestJitterDeterministic: the same seed gives the same picks.
func TestJitterDeterministic(t *testing.T) {
	run := func() []string {
		f := newFixture(t, Config{Jitter: 0.5, Rand: rand.New(rand.NewPCG(3, 4))})
		var priors []Prior
		for i := range 20 {
			priors = append(priors, Prior{fmt.Sprint("i", i), time.Duration(1000+i*10) * time.Millisecond})
		}
		f.Seed(priors)
		var picks []string
		for range 50 {
			l := f.one(t)
			picks = append(picks, l.Instance())
			f.Record(l, cancelO, 0)
		}
		return picks
	}
	if x, y := run(), run(); !slices.Equal(x, y) {
		t.Fatalf("same seed, different picks:\n%v\n%v", x, y)
	}
}

// TestMinInterval: an instance used within MinInterval ranks after every
// rested one, least recently used first.
func TestMinInterval(t *testing.T) {
	f := newFixture(t, Config{MinInterval: 10 * time.Second, MaxInFlight: -1})
	f.Seed([]Prior{{a, 100 * time.Millisecond}, {b, 200 * time.Millisecond}, {c, 300 * time.Millisecond}})
	var picks []string
	for range 5 {
		l := f.one(t)
		picks = append(picks, l.Instance())
		f.Record(l, cancelO, 0)
		f.clock.Advance(time.Second)
	}
	// a, b, c rested in score order; then all recent: a (least recently
	// used, at 0 s), then b (1 s).
	if want := []string{a, b, c, a, b}; !slices.Equal(picks, want) {
		t.Fatalf("picks %v, want %v", picks, want)
	}
	// At 13 s, a (last used at 3 s) and c (2 s) are rested again, b (4 s)
	// is not.
	f.clock.Advance(8 * time.Second)
	if got, want := f.Rank(0, nil), []string{a, c, b}; !slices.Equal(got, want) {
		t.Fatalf("rank %v, want %v", got, want)
	}
}

// TestPrimaryBackup: Own instances first, in the operator's order,
// spilling over to the public ones (by score) when they are open, full or
// disabled.
func TestPrimaryBackup(t *testing.T) {
	const own1, own2 = "https://own1.example/", "https://own2.example/"
	f := newFixture(t, Config{Strategy: PrimaryBackup, MaxInFlight: 1, OwnMaxInFlight: 1})
	f.Seed([]Prior{{a, 300 * time.Millisecond}, {b, 100 * time.Millisecond}})
	f.Add(own2, Own) // the operator's order: own2, then own1
	f.Add(own1, Own)
	f.record(t, own1, okO, 50*time.Millisecond) // faster, yet second
	f.record(t, own2, okO, 2*time.Second)

	if got, want := f.Rank(0, nil), []string{own2, own1, b, a}; !slices.Equal(got, want) {
		t.Fatalf("rank %v, want %v", got, want)
	}
	l1 := f.one(t)
	l2 := f.one(t)
	l3 := f.one(t) // both own ones full: spills to the best public one
	if l1.Instance() != own2 || l2.Instance() != own1 || l3.Instance() != b {
		t.Fatalf("picks %s %s %s", l1.Instance(), l2.Instance(), l3.Instance())
	}
	f.Record(l1, refusedO, 0) // own2 open
	f.Record(l2, cancelO, 0)
	f.Record(l3, cancelO, 0)
	f.Disable(own1)
	if got, want := f.Rank(0, nil), []string{b, a}; !slices.Equal(got, want) {
		t.Fatalf("own ones open and disabled: rank %v, want %v", got, want)
	}
	f.Enable(own1)
	f.clock.Advance(time.Minute) // own2 half-open: first again
	if got, want := f.Rank(0, nil), []string{own2, own1, b, a}; !slices.Equal(got, want) {
		t.Fatalf("recovered: rank %v, want %v", got, want)
	}

	// The same pool under EWMA ranks by score only.
	g := newFixture(t, Config{})
	g.Seed([]Prior{{a, 300 * time.Millisecond}, {b, 100 * time.Millisecond}})
	g.Add(own2, Own)
	g.record(t, own2, okO, 2*time.Second)
	if got, want := g.Rank(0, nil), []string{b, a, own2}; !slices.Equal(got, want) {
		t.Fatalf("ewma: rank %v, want %v", got, want)
	}
}

// TestRankMatchesCheckout: without jitter, Checkout hands out what Rank
// said, for small and large counts.
func TestRankMatchesCheckout(t *testing.T) {
	for _, count := range []int{1, 3, 8, 33, 100} {
		f := newFixture(t, Config{MaxInFlight: 1})
		r := rand.New(rand.NewPCG(5, uint64(count)))
		var priors []Prior
		for i := range 80 {
			priors = append(priors, Prior{fmt.Sprint("i", i), time.Duration(r.IntN(50)) * 100 * time.Millisecond})
		}
		f.Seed(priors)
		skip := func(u string) bool { return u == "i3" || u == "i40" }
		want := f.Rank(count, skip)
		ls, err := f.Checkout(context.Background(), count, skip)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range ls {
			got = append(got, l.Instance())
		}
		if !slices.Equal(got, want) || len(got) != min(count, 78) {
			t.Fatalf("count %d: checkout %v, rank %v", count, got, want)
		}
		// Best first, and nothing better left out.
		full := f.Snapshot() // the handed-out ones are full now: last
		for i := 1; i < len(got); i++ {
			if f.Stats(got[i-1]).PriorMS > f.Stats(got[i]).PriorMS {
				t.Fatalf("count %d: not best first: %v", count, got)
			}
		}
		worst := f.Stats(got[len(got)-1]).PriorMS
		for _, st := range full {
			if st.InFlight == 0 && !skip(st.URL) && st.PriorMS < worst {
				t.Fatalf("count %d: %s (%v ms) left out for %v ms", count, st.URL, st.PriorMS, worst)
			}
		}
	}
}

// TestSnapshotOrder: available ones first, best first; then the rest.
func TestSnapshotOrder(t *testing.T) {
	f := newFixture(t, Config{})
	f.Seed([]Prior{{a, 100 * time.Millisecond}, {b, 200 * time.Millisecond}, {c, 300 * time.Millisecond}})
	f.record(t, a, refusedO, 0)
	var urls []string
	for _, st := range f.Snapshot() {
		urls = append(urls, st.URL)
	}
	if want := []string{b, c, a}; !slices.Equal(urls, want) {
		t.Fatalf("snapshot %v, want %v", urls, want)
	}
}
