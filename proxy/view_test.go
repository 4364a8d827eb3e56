package proxy

import (
	"testing"
	"time"

	"searxgate/pool"
	"searxgate/sim"
)

// TestInstancesSaysWhyNot: the view the status page renders agrees with
// the search path's own rules, link-token instances included.
func TestInstancesSaysWhyNot(t *testing.T) {
	e := newEnv(t, Config{Timer: quietTimers, Budget: []Window{{Max: 1, Per: 20 * time.Second}}},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	now := e.clock.Now()
	e.proxy.caps.update(e.urls[1], func(c *Caps) { c.LinkToken = true })
	e.pool.Disable(e.urls[2])
	e.proxy.polite.TakeAs(e.urls[3], false, now)
	e.pool.Add(e.urls[4], pool.Own)
	got := map[string]Instance{}
	for _, in := range e.proxy.Instances(now) {
		got[in.URL] = in
	}
	want := map[string]string{e.urls[0]: "", e.urls[1]: "link_token", e.urls[2]: "disabled", e.urls[3]: "budget", e.urls[4]: ""}
	for u, why := range want {
		in := got[u]
		if in.WhyNot != why || in.UsableNow != (why == "") {
			t.Errorf("%s: usable %v why %q, want why %q", u, in.UsableNow, in.WhyNot, why)
		}
	}
	if b := got[e.urls[3]].Budget; len(b) != 1 || b[0].Used != 1 || b[0].Max != 1 || b[0].Per != 20*time.Second {
		t.Errorf("budget of the instance that used it: %+v", b)
	}
	if own := got[e.urls[4]]; own.MaxInFlight != pool.DefaultOwnMaxInFlight || own.Format != FormatJSON {
		t.Errorf("own instance: in-flight cap %d, format %s", own.MaxInFlight, own.Format)
	}
}
