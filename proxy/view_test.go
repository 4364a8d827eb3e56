package proxy

import (
	"context"
	"testing"
	"time"

	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/sim"
)

// TestInstancesSaysWhyNot: the view the status page renders agrees with
// the search path's own rules, link-token instances included, and with
// Usable, which the other faces ask.
func TestInstancesSaysWhyNot(t *testing.T) {
	fast := sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true}
	e := newEnv(t, Config{Clock: timersOf(quietTimers), Budget: []Window{{Max: 1, Per: 20 * time.Second}}},
		fast, fast, fast, fast, fast, fast, fast)
	now := e.clock.Now()
	e.proxy.setCaps(e.urls[1], func(c *Caps) { c.LinkToken = true })
	e.pool.Disable(e.urls[2])
	e.proxy.polite.TakeAs(e.urls[3], false, now)
	e.pool.Add(e.urls[4], pool.Own)
	e.pool.OpenUntil(e.urls[5], now.Add(time.Hour), "test")
	// Barred by its terms and cooling down: the lasting reason is told.
	e.proxy.setCaps(e.urls[6], func(c *Caps) { c.LinkToken = true })
	e.pool.OpenUntil(e.urls[6], now.Add(time.Hour), "test")
	got := map[string]Instance{}
	for _, in := range e.proxy.Instances(now) {
		got[in.URL] = in
	}
	want := map[string]string{e.urls[0]: "", e.urls[1]: WhyLinkToken, e.urls[2]: WhyDisabled, e.urls[3]: WhyBudget, e.urls[4]: "",
		e.urls[5]: WhyCircuitOpen, e.urls[6]: WhyLinkToken}
	for u, why := range want {
		in := got[u]
		if in.WhyNot != why || in.UsableNow != (why == "") {
			t.Errorf("%s: usable %v why %q, want why %q", u, in.UsableNow, in.WhyNot, why)
		}
		if ok, w := e.proxy.Usable(e.pool.Stats(u), now); ok != in.UsableNow || w != in.WhyNot {
			t.Errorf("%s: Usable says %v %q, the view %v %q", u, ok, w, in.UsableNow, in.WhyNot)
		}
	}
	if b := got[e.urls[3]].Budget; len(b) != 1 || b[0].Used != 1 || b[0].Max != 1 || b[0].Per != 20*time.Second {
		t.Errorf("budget of the instance that used it: %+v", b)
	}
	if own := got[e.urls[4]]; own.MaxInFlight != pool.DefaultOwnMaxInFlight || own.Format != FormatJSON {
		t.Errorf("own instance: in-flight cap %d, format %s", own.MaxInFlight, own.Format)
	}
	// The budget frees when its window has passed: usable again.
	later := now.Add(21 * time.Second)
	if ok, why := e.proxy.Usable(e.pool.Stats(e.urls[3]), later); !ok {
		t.Errorf("the budget's window passed, still not usable: %s", why)
	}
}

// TestForgetDuringAnAttemptKeepsNothing: an instance forgotten while an
// attempt on it runs is not brought back by what the attempt learns late
// (its terms, budget, outcomes all land in the record it started with).
func TestForgetDuringAnAttemptKeepsNothing(t *testing.T) {
	e := newEnv(t, Config{Clock: timersOf(quietTimers)},
		sim.InstanceConfig{Behaviour: sim.Hang, HangFor: 200 * time.Millisecond, JSON: true})
	u := e.urls[0]
	done := make(chan struct{})
	go func() { defer close(done); _, _ = e.search(t, "forgotten midway") }()
	waitFor(t, "the attempt reached the instance", func() bool { return e.searches(0) == 1 })
	e.pool.Remove(u)
	e.proxy.Forget(u)
	<-done
	if err := e.proxy.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := e.proxy.recs.get(u); r != nil {
		t.Fatal("the forgotten instance's record came back")
	}
	if e.proxy.Politeness().Used(u, e.clock.Now(), time.Hour) != 0 || len(e.proxy.InstanceMetrics(u).ByKind) != 0 {
		t.Fatal("budget use or outcomes kept for a forgotten instance")
	}
	changed, deleted := e.proxy.DirtyCaps()
	if _, ok := changed[u]; ok || len(deleted) != 1 || deleted[0] != u {
		t.Fatalf("terms to store: changed %v, deleted %v; want it deleted", changed, deleted)
	}
}
