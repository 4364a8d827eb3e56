package pool

import (
	"context"
	"reflect"
	"slices"
	"sort"
	"testing"
	"time"
)

func urls(sts []Stats) []string {
	var out []string
	for _, st := range sts {
		out = append(out, st.URL)
	}
	sort.Strings(out)
	return out
}

// TestSeed: adds new ones, sets priors of unmeasured ones only, removes
// unlisted public ones (but not own or disabled ones), keeps learned
// state, respects the operator's removals.
func TestSeed(t *testing.T) {
	const own, gone, off = "https://own.example/", "https://gone.example/", "https://off.example/"
	f := newFixture(t, Config{})
	f.Seed([]Prior{{a, 900 * time.Millisecond}, {b, 800 * time.Millisecond}, {gone, time.Second}, {off, time.Second}})
	f.Add(own, Own)
	f.record(t, a, okO, 300*time.Millisecond)
	f.record(t, a, refusedO, 0)
	f.Disable(off)
	f.Remove(c) // the operator does not want c, before the directory lists it
	seededAt := f.clock.Now()
	f.clock.Advance(time.Hour)
	f.ev.take()

	f.Seed([]Prior{{a, 2 * time.Second}, {b, 1500 * time.Millisecond}, {c, time.Second}, {"", time.Second}})
	if got, want := urls(f.Snapshot()), []string{a, b, off, own}; !slices.Equal(got, want) {
		t.Fatalf("after reseeding: %v, want %v", got, want)
	}
	sa, sb := f.Stats(a), f.Stats(b)
	if sa.PriorMS != 900 || !sa.Measured || sa.LatencyMS != 300 || sa.Refusals != 1 || sa.Circuit != HalfOpen {
		t.Fatalf("a lost its learned state or took the new prior: %+v", sa)
	}
	if sb.PriorMS != 1500 || sb.LatencyMS != 1500 || sb.Measured {
		t.Fatalf("b did not take its new prior: %+v", sb)
	}
	if !sb.SeededAt.Equal(f.clock.Now()) || !f.Stats(off).SeededAt.Equal(seededAt) {
		t.Fatalf("seeded_at: b %s, off %s", sb.SeededAt, f.Stats(off).SeededAt)
	}
	if st := f.Stats(off); !st.Disabled {
		t.Fatalf("the operator's disabled flag was lost: %+v", st)
	}
	evs := f.ev.take()
	if len(evs) != 1 || evs[0].Instance != gone || evs[0].Reason != ReasonUnlisted || !evs[0].Gone() {
		t.Fatalf("events %+v", evs)
	}

	f.Add(c, Public) // the operator changes their mind
	f.Seed([]Prior{{a, 0}, {c, time.Second}})
	if got, want := urls(f.Snapshot()), []string{a, c, off, own}; !slices.Equal(got, want) {
		t.Fatalf("after Add lifted the removal: %v, want %v", got, want)
	}
	mustValid(t, f.Pool)
}

func TestAddRemove(t *testing.T) {
	f := newFixture(t, Config{})
	f.Add("", Own)
	f.Add(a, Public)
	f.Add(a, Public)
	f.record(t, a, okO, time.Second)
	f.Add(a, Own) // promotes, keeps what was learned
	st := f.Stats(a)
	if f.Len() != 1 || st.Tier != Own || st.Successes != 1 {
		t.Fatalf("after promoting: len %d, %+v", f.Len(), st)
	}
	f.Add(a, Public) // never demotes
	if st := f.Stats(a); st.Tier != Own {
		t.Fatalf("demoted: %+v", st)
	}
	if !f.Remove(a) || f.Remove(a) || f.Len() != 0 {
		t.Fatal("Remove of a known and then unknown instance")
	}
	f.Add(a, Public)
	if st := f.Stats(a); st.Successes != 0 || st.Measured || st.Tier != Public {
		t.Fatalf("Remove did not forget: %+v", st)
	}
	if f.Enable("nope") || f.Disable("nope") {
		t.Fatal("Enable/Disable of an unknown instance reported true")
	}
	mustValid(t, f.Pool)
}

// TestRemoveKeepsOthers: removing from the middle keeps every other
// instance's state attached to it.
func TestRemoveKeepsOthers(t *testing.T) {
	f := newFixture(t, Config{})
	f.Seed([]Prior{{a, time.Second}, {b, time.Second}, {c, time.Second}})
	f.record(t, c, okO, 123*time.Millisecond)
	f.Remove(a)
	if st := f.Stats(c); st.LatencyMS != 123 || st.Successes != 1 {
		t.Fatalf("c after removing a: %+v", st)
	}
	if r := f.Rank(0, nil); !slices.Equal(r, []string{c, b}) {
		t.Fatalf("rank %v", r)
	}
	mustValid(t, f.Pool)
}

func TestDisableEnable(t *testing.T) {
	f := newFixture(t, Config{})
	f.Add(a, Public)
	f.record(t, a, okO, 400*time.Millisecond)
	l := f.one(t)
	f.Disable(a)
	if _, err := f.Checkout(context.Background(), 1, nil); err == nil {
		t.Fatal("a disabled instance was handed out")
	}
	f.Record(l, softO, 400*time.Millisecond) // the lease out still records
	st := f.Stats(a)
	if !st.Disabled || st.Health != 0 || st.Successes != 1 || st.Softs != 1 || st.LatencyMS != 400 {
		t.Fatalf("disabled: %+v", st)
	}
	// Open it through a lease taken while enabled, recorded while disabled.
	f.Enable(a)
	l = f.lease(t, a)
	f.Disable(a)
	f.Record(l, refusedO, 0)
	if st := f.Stats(a); st.Circuit != Open || !st.Disabled {
		t.Fatalf("not open and disabled: %+v", st)
	}
	f.Enable(a)
	st = f.Stats(a)
	if st.Disabled || st.Circuit != Closed || !st.CooldownUntil.IsZero() || st.ConsecutiveFailures != 0 || st.Refusals != 1 {
		t.Fatalf("enabled: %+v", st)
	}
	f.one(t)
}

func TestReset(t *testing.T) {
	f := newFixture(t, Config{})
	f.Seed([]Prior{{a, 700 * time.Millisecond}, {b, time.Second}})
	f.Add(c, Own)
	f.Disable(b)
	f.Remove("https://removed.example/")
	f.record(t, a, okO, 100*time.Millisecond)
	f.record(t, a, refusedO, 0)
	out := f.lease(t, c)
	f.ev.take()
	f.Reset()
	sa := f.Stats(a)
	if sa.Circuit != Closed || sa.Measured || sa.LatencyMS != 700 || sa.Successes != 0 || sa.Refusals != 0 || !sa.LastUsedAt.IsZero() || sa.LastOutcome != "" {
		t.Fatalf("a after reset: %+v", sa)
	}
	if !f.Stats(b).Disabled || f.Stats(c).Tier != Own || f.Stats(c).InFlight != 1 {
		t.Fatalf("reset lost operator state or in_flight: %+v %+v", f.Stats(b), f.Stats(c))
	}
	if evs := f.ev.take(); len(evs) != 1 || evs[0].From != Open || evs[0].To != Closed || evs[0].Reason != ReasonReset {
		t.Fatalf("events %+v", evs)
	}
	f.Record(out, refusedO, 0) // from before the reset: counts, moves nothing
	if st := f.Stats(c); st.Circuit != Closed || st.InFlight != 0 || st.Refusals != 1 {
		t.Fatalf("c: %+v", st)
	}
	f.Seed([]Prior{{a, 0}, {b, 0}, {"https://removed.example/", 0}})
	if f.Len() != 3 {
		t.Fatalf("reset forgot the operator's removal: %d instances", f.Len())
	}
}

// TestSweep: idle public instances are forgotten (counters kept); own
// ones, recent ones, busy ones and running cooldowns are not; expired
// cooldowns become half-open.
func TestSweep(t *testing.T) {
	const own, busy, idle, recent, cool = "https://own.example/", "https://busy.example/", "https://idle.example/", "https://recent.example/", "https://cool.example/"
	f := newFixture(t, Config{ForgetAfter: time.Hour, MaxCooldown: 2 * time.Hour, MaxInFlight: -1})
	f.Seed([]Prior{{busy, 0}, {idle, 0}, {recent, 0}, {cool, 0}})
	f.Add(own, Own)
	for _, u := range []string{own, idle, recent, busy} {
		f.record(t, u, okO, 200*time.Millisecond)
	}
	f.record(t, cool, Outcome{Kind: Refused, RetryAfter: 2 * time.Hour}, 0)
	held := f.lease(t, busy)
	f.clock.Advance(50 * time.Minute)
	f.record(t, recent, okO, 200*time.Millisecond)
	f.clock.Advance(11 * time.Minute)
	f.ev.take()
	f.Sweep()
	for u, wantMeasured := range map[string]bool{own: true, busy: true, idle: false, recent: true} {
		st := f.Stats(u)
		if st.Measured != wantMeasured {
			t.Errorf("%s: measured %v, want %v", u, st.Measured, wantMeasured)
		}
		if st.Successes == 0 {
			t.Errorf("%s: sweep dropped the counters", u)
		}
	}
	if st := f.Stats(idle); !st.LastUsedAt.IsZero() || st.LastOutcome != "" || st.LatencyMS != st.PriorMS {
		t.Errorf("idle not forgotten: %+v", st)
	}
	if st := f.Stats(cool); st.Circuit != Open || st.Refusals != 1 {
		t.Errorf("a running cooldown was forgotten: %+v", st)
	}
	if evs := f.ev.take(); len(evs) != 0 {
		t.Errorf("events %+v", evs)
	}
	f.Record(held, okO, 0)

	f.clock.Advance(time.Hour) // cool's cooldown ended; it is idle too
	f.Sweep()
	evs := f.ev.take()
	if len(evs) != 2 || evs[0].From != Open || evs[0].To != HalfOpen || evs[1].From != HalfOpen || evs[1].To != Closed || evs[1].Reason != ReasonForgotten {
		t.Fatalf("events %+v", evs)
	}
	if st := f.Stats(own); !st.Measured {
		t.Fatalf("own swept: %+v", st)
	}

	// Negative ForgetAfter: never forget.
	g := newFixture(t, Config{ForgetAfter: -1})
	g.Add(a, Public)
	g.record(t, a, okO, time.Second)
	g.clock.Advance(1000 * time.Hour)
	g.Sweep()
	if !g.Stats(a).Measured {
		t.Fatal("forgot with ForgetAfter < 0")
	}
}

// TestRun: Run sweeps every SweepEvery of the pool's clock and stops with
// its context.
func TestRun(t *testing.T) {
	clk := newClock()
	swept := make(chan Event, 1)
	p := New(Config{Clock: clk, SweepEvery: time.Hour, OnEvent: func(ev Event) {
		if ev.Reason == ReasonCooldownEnded {
			swept <- ev
		}
	}})
	p.Add(a, Public)
	f := &fixture{Pool: p, clock: clk, ev: &events{}}
	f.record(t, a, refusedO, time.Second)
	if st := p.Stats(a); st.Circuit != Open || !st.CooldownUntil.Before(t0.Add(time.Hour)) {
		t.Fatalf("after a refusal: %+v, want open for less than an hour", st)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	if w := clk.BlockUntil(1); len(w) != 1 || w[0] != time.Hour {
		t.Fatalf("Run waits %v, want one ticker of SweepEvery", w)
	}
	clk.Advance(time.Hour)
	if ev := <-swept; !ev.At.Equal(t0.Add(time.Hour)) || ev.Instance != a {
		t.Fatalf("sweep event %+v", ev)
	}
	cancel()
	<-done
}

func TestStatsUnknown(t *testing.T) {
	f := newFixture(t, Config{Prior: 1200 * time.Millisecond})
	st := f.Stats("https://nobody.example/")
	want := Stats{URL: "https://nobody.example/", Circuit: Closed, LatencyMS: 1200, PriorMS: 1200, Health: health(1200, 0, Closed, false), Quality: QualityState{Fullness: 1}}
	if !reflect.DeepEqual(st, want) {
		t.Fatalf("stats of an unknown instance:\n got %+v\nwant %+v", st, want)
	}
	if st.Health < 80 || st.Health > 95 {
		t.Fatalf("health %d", st.Health)
	}
}

func TestHealth(t *testing.T) {
	cases := []struct {
		lat, fail float64
		c         Circuit
		disabled  bool
		want      int
	}{
		{100, 0, Closed, false, 100},
		{500, 0, Closed, false, 100},
		{5000, 0, Closed, false, 60},
		{50000, 0, Closed, false, 60},
		{2750, 0, Closed, false, 80},
		{500, 1, Closed, false, 40},
		{500, 0.5, Closed, false, 70},
		{5000, 1, Closed, false, 0},
		{500, 0, HalfOpen, false, 50},
		{500, 0, Open, false, 0},
		{500, 0, Closed, true, 0},
	}
	for _, tc := range cases {
		if got := health(tc.lat, tc.fail, tc.c, tc.disabled); got != tc.want {
			t.Errorf("health(%v, %v, %s, %v) = %d, want %d", tc.lat, tc.fail, tc.c, tc.disabled, got, tc.want)
		}
	}
}
