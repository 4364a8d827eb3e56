package proxy

import (
	"context"
	"testing"
	"time"

	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/sim"
)

// TestInstancesSaysWhyNot: for every kind of instance, its record's
// Available, the view the status page renders, Usable (which the other
// faces ask) and checkout agree: a search goes exactly where they say it
// may.
func TestInstancesSaysWhyNot(t *testing.T) {
	fast := sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true}
	fleet := make([]sim.InstanceConfig, 10)
	for i := range fleet {
		fleet[i] = fast
	}
	e := newEnv(t, Config{Clock: timersOf(quietTimers), Budget: []Window{{Max: 1, Per: 20 * time.Second}}}, fleet...)
	ctx := context.Background()
	only := func(u string) func(string) bool { return func(x string) bool { return x != u } }
	var held []*pool.Lease
	hold := func(u string) {
		ls, err := e.pool.Checkout(ctx, 1, only(u))
		if err != nil || len(ls) != 1 {
			t.Fatalf("%s: no lease: %v", u, err)
		}
		held = append(held, ls...)
	}
	// Half open with its trial out; full, then opened and cooled (its
	// trial is free: the pool hands it out while its searches run).
	e.pool.OpenUntil(e.urls[7], e.clock.Now().Add(time.Second), "test")
	for range pool.DefaultMaxInFlight {
		hold(e.urls[9])
	}
	e.pool.OpenUntil(e.urls[9], e.clock.Now().Add(time.Second), "test")
	e.clock.Advance(2 * time.Second)
	hold(e.urls[7])
	now := e.clock.Now()
	e.proxy.setCaps(e.urls[1], func(c *Caps) { c.LinkToken = true })
	e.pool.Disable(e.urls[2])
	e.proxy.polite.TakeAs(e.urls[3], false, now)
	e.pool.Add(e.urls[4], pool.Own)
	e.pool.OpenUntil(e.urls[5], now.Add(time.Hour), "test")
	// Barred by its terms and cooling down: the lasting reason is told.
	e.proxy.setCaps(e.urls[6], func(c *Caps) { c.LinkToken = true })
	e.pool.OpenUntil(e.urls[6], now.Add(time.Hour), "test")
	for range pool.DefaultMaxInFlight {
		hold(e.urls[8])
	}
	// Thin (its big engines suspended) is state, not a reason to skip:
	// the usable one and the disabled one answer thin, and the view says
	// so as the pool does.
	for _, u := range []string{e.urls[0], e.urls[2]} {
		e.pool.Learn(u, pool.Answer{Hits: 3, Page: 10, Engines: []string{"wikipedia"}, Suspended: [][2]string{{"google", "Suspended: CAPTCHA"}}})
	}
	got := map[string]Instance{}
	for _, in := range e.proxy.Instances().Instances(now) {
		got[in.URL] = in
	}
	want := map[string]Why{e.urls[0]: Ready, e.urls[1]: WhyLinkToken, e.urls[2]: WhyDisabled, e.urls[3]: WhyBudget, e.urls[4]: Ready,
		e.urls[5]: WhyCircuitOpen, e.urls[6]: WhyLinkToken, e.urls[7]: WhyTrialOut, e.urls[8]: WhyInFlight, e.urls[9]: Ready}
	kinds := map[Why]bool{}
	for u, why := range want {
		kinds[why] = true
		in := got[u]
		if in.WhyNot != why || in.UsableNow() != (why == Ready) {
			t.Errorf("%s: usable %v why %q, want why %q", u, in.UsableNow(), in.WhyNot, why)
		}
		if ok, w := e.proxy.Instances().Usable(e.pool.Stats(u), now); ok != in.UsableNow() || w != in.WhyNot {
			t.Errorf("%s: Usable says %v %q, the view %v %q", u, ok, w, in.UsableNow(), in.WhyNot)
		}
		if ok, w := e.proxy.recs.Ensure(u).Available(now); ok != in.UsableNow() || w != in.WhyNot {
			t.Errorf("%s: its record says %v %q, the view %v %q", u, ok, w, in.UsableNow(), in.WhyNot)
		}
		st := e.pool.Stats(u)
		if thin := u == e.urls[0] || u == e.urls[2]; in.Thin != thin || st.Thin != thin || in.Quality.Fullness != st.Quality.Fullness ||
			len(in.Quality.Suspended) != len(st.Quality.Suspended) {
			t.Errorf("%s: the view says thin %v (%.2f, %v), the pool %v (%.2f, %v); want thin %v",
				u, in.Thin, in.Quality.Fullness, in.Quality.Suspended, st.Thin, st.Quality.Fullness, st.Quality.Suspended, thin)
		}
	}
	if len(kinds) != len(Whys)+1 {
		t.Errorf("the instances show %d kinds, want every Why and Ready", len(kinds))
	}
	// Checkout, offered each instance alone, takes exactly the usable ones.
	for u, why := range want {
		tried := map[string]bool{}
		for _, x := range e.urls {
			tried[x] = x != u
		}
		l, ok := e.proxy.checkout(ctx, "client "+u, tried, now, false)
		if ok != (why == Ready) {
			t.Errorf("%s: checkout took it %v, its record says %q", u, ok, why)
		}
		if ok {
			e.proxy.polite.Untake(u, l.takenAt)
			e.proxy.giveBack(l.lease, l.release)
		}
	}
	for _, l := range held {
		e.pool.Record(l, pool.Outcome{Kind: pool.Cancelled}, 0)
	}
	if b := got[e.urls[3]].Budget; len(b) != 1 || b[0].Used != 1 || b[0].Max != 1 || b[0].Per != 20*time.Second {
		t.Errorf("budget of the instance that used it: %+v", b)
	}
	if own := got[e.urls[4]]; own.MaxInFlight != pool.DefaultOwnMaxInFlight || own.Format != FormatJSON {
		t.Errorf("own instance: in-flight cap %d, format %s", own.MaxInFlight, own.Format)
	}
	// The budget frees when its window has passed: usable again.
	later := now.Add(21 * time.Second)
	if ok, why := e.proxy.Instances().Usable(e.pool.Stats(e.urls[3]), later); !ok {
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
	if r := e.proxy.recs.Get(u); r != nil {
		t.Fatal("the forgotten instance's record came back")
	}
	if e.proxy.Instances().Budget().Used(u, e.clock.Now(), time.Hour) != 0 || len(e.proxy.InstanceMetrics(u).ByKind) != 0 {
		t.Fatal("budget use or outcomes kept for a forgotten instance")
	}
	changed, deleted := e.proxy.Instances().DirtyCaps()
	if _, ok := changed[u]; ok || len(deleted) != 1 || deleted[0] != u {
		t.Fatalf("terms to store: changed %v, deleted %v; want it deleted", changed, deleted)
	}
}
