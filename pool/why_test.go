package pool

import (
	"slices"
	"testing"
	"time"
)

// TestWhyAgreesWithCheckout: Stats' PoolWhy, Snapshot's order, Rank,
// FreeAt and Checkout all read one rule, for every state an instance can
// be in, including an open circuit whose cooldown ended while full.
func TestWhyAgreesWithCheckout(t *testing.T) {
	cases := []struct {
		name string
		set  func(t *testing.T, f *fixture)
		want Why
	}{
		{"free", func(*testing.T, *fixture) {}, WhyNone},
		{"disabled", func(_ *testing.T, f *fixture) { f.Disable(a) }, WhyDisabled},
		{"open", func(t *testing.T, f *fixture) { f.record(t, a, refusedO, 0) }, WhyCircuitOpen},
		{"cooled", func(t *testing.T, f *fixture) {
			f.record(t, a, refusedO, 0)
			f.clock.Advance(time.Hour)
		}, WhyNone},
		{"trial out", func(t *testing.T, f *fixture) {
			f.record(t, a, refusedO, 0)
			f.clock.Advance(time.Hour)
			f.lease(t, a)
		}, WhyTrialOut},
		{"full", func(t *testing.T, f *fixture) { f.lease(t, a) }, WhyInFlight},
		{"opened while full, cooled", func(t *testing.T, f *fixture) {
			f.lease(t, a)
			f.OpenUntil(a, f.clock.Now().Add(time.Minute), "shared")
			f.clock.Advance(time.Hour)
		}, WhyNone},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, Config{MaxInFlight: 1})
			f.Add(a, Public)
			f.Add(b, Public)
			f.Disable(b) // a stays the only candidate
			c.set(t, f)
			if got := f.Stats(a).PoolWhy; got != c.want {
				t.Fatalf("Stats says %d, want %d", got, c.want)
			}
			snap := f.Snapshot()
			if i := slices.IndexFunc(snap, func(st Stats) bool { return st.URL == a }); i < 0 || snap[i].PoolWhy != c.want {
				t.Errorf("Snapshot disagrees with Stats: %+v", snap)
			}
			free := c.want == WhyNone
			if ranked := slices.Contains(f.Rank(0, nil), a); ranked != free {
				t.Errorf("Rank lists it: %v, want %v", ranked, free)
			}
			for _, fr := range f.FreeAt(nil) {
				if fr.URL != a {
					continue
				}
				busy := c.want == WhyTrialOut || c.want == WhyInFlight
				later := c.want == WhyCircuitOpen
				if fr.Busy != busy || fr.At.After(f.clock.Now()) != later {
					t.Errorf("FreeAt: busy %v, later %v; want %v, %v", fr.Busy, fr.At.After(f.clock.Now()), busy, later)
				}
			}
			ls, _ := f.Checkout(t.Context(), 1, nil)
			if (len(ls) == 1) != free {
				t.Errorf("Checkout handed out %d leases, want it to when free (%v)", len(ls), free)
			}
			mustValid(t, f.Pool)
		})
	}
}
