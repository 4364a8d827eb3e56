package instance

import (
	"testing"
	"time"

	"github.com/searxgate/searxgate/sim"
)

// TestWhyLabels: every Why has its own label, and reads back from it.
func TestWhyLabels(t *testing.T) {
	seen := map[string]bool{}
	for _, w := range append([]Why{Ready}, Whys...) {
		b, _ := w.MarshalText()
		var back Why
		if err := back.UnmarshalText(b); err != nil || back != w || seen[string(b)] || (w != Ready && len(b) == 0) {
			t.Errorf("%d: label %q reads back as %d (%v)", w, b, back, err)
		}
		seen[string(b)] = true
	}
}

// TestAvailableIsTheOneRule: for each reason, a record's Available, the
// registry's Usable (what the faces ask) and the view agree, the lasting
// reason first; an instance without a record is usable when the pool's
// part says so.
func TestAvailableIsTheOneRule(t *testing.T) {
	fast := sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true}
	e := newEnv(t, fast, fast, fast, fast, fast, fast)
	now := e.clock.Now()
	for _, u := range e.urls[:5] {
		e.g.Ensure(u).Update(func(c *Caps) { *c = Caps{ConfigAt: now, ConfigOK: true} })
	}
	e.g.Ensure(e.urls[1]).Update(func(c *Caps) { c.LinkToken = true })
	e.pool.Disable(e.urls[2])
	if !e.g.Budget().TakeAs(e.urls[3], false, now) {
		t.Fatal("no budget to spend")
	}
	e.pool.OpenUntil(e.urls[4], now.Add(time.Hour), "test")
	// Barred by its terms and cooling down: the lasting reason is told.
	e.g.Ensure(e.urls[4]).Update(func(c *Caps) { c.LinkToken = true })
	want := map[string]Why{e.urls[0]: Ready, e.urls[1]: WhyLinkToken, e.urls[2]: WhyDisabled,
		e.urls[3]: WhyBudget, e.urls[4]: WhyLinkToken, e.urls[5]: Ready}
	view := map[string]Instance{}
	for _, in := range e.g.Instances(now) {
		view[in.URL] = in
	}
	for u, why := range want {
		ok, w := e.g.Usable(e.pool.Stats(u), now)
		if ok != (why == Ready) || w != why {
			t.Errorf("%s: Usable says %v %q, want %q", u, ok, w, why)
		}
		if in := view[u]; in.WhyNot != why || in.UsableNow() != (why == Ready) {
			t.Errorf("%s: the view says %q, want %q", u, in.WhyNot, why)
		}
		if r := e.g.Get(u); r != nil {
			if ok, w := r.Available(now); ok != (why == Ready) || w != why {
				t.Errorf("%s: its record says %v %q, want %q", u, ok, w, why)
			}
			if r.Takes(now) != (why == Ready) && why != WhyDisabled && why != WhyCircuitOpen {
				t.Errorf("%s: Takes %v, its reason %q", u, r.Takes(now), why)
			}
		}
	}
	if e.g.Get(e.urls[5]) != nil {
		t.Fatal("asking made a record")
	}
	if ok, why := e.g.Usable(e.pool.Stats(e.urls[3]), now.Add(envWindow.Per+time.Second)); !ok {
		t.Errorf("the budget's window passed, still not usable: %s", why)
	}
}

// TestCandidatesLeaveOutTheBarred: the instances whose terms bar
// searxgate are not candidates; the others are, whatever else keeps them
// (a cooldown: the pool says when it ends).
func TestCandidatesLeaveOutTheBarred(t *testing.T) {
	fast := sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true}
	e := newEnv(t, fast, fast, fast)
	now := e.clock.Now()
	e.g.Ensure(e.urls[1]).Update(func(c *Caps) { *c = Caps{ConfigAt: now, ConfigOK: true, LinkToken: true} })
	e.pool.OpenUntil(e.urls[2], now.Add(time.Hour), "test")
	got := map[string]bool{}
	for _, f := range e.g.Candidates() {
		got[f.URL] = true
	}
	if len(got) != 2 || !got[e.urls[0]] || got[e.urls[1]] || !got[e.urls[2]] {
		t.Fatalf("candidates %v, want %s and %s (the barred %s left out)", got, e.urls[0], e.urls[2], e.urls[1])
	}
}
