package instance

import (
	"net/url"
	"testing"

	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/sim"
)

// TestPassIPDeniedOnce: an own instance declared to pass searxgate
// (Config.OwnPassIP) is asked for JSON with its limiter on and not paced
// below it; its first limiter refusal is diagnosed once: held for one
// limiter window, paced and asked for HTML from then on, and the view
// carries the advice. Other refusals, and a second one, are not that.
func TestPassIPDeniedOnce(t *testing.T) {
	e := newEnvWith(t, Config{OwnPassIP: true, SourceAddr: func(string) string { return "192.0.2.7" }},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	u := e.urls[0]
	e.pool.Add(u, pool.Own)
	now := e.clock.Now()
	r := e.g.Ensure(u)
	r.Update(func(c *Caps) { *c = Caps{ConfigAt: now, ConfigOK: true, Limiter: true, JSON: Yes, JSONAt: now} })
	if f := r.Format(r.Caps(), true); f != "json" || r.Limited() {
		t.Fatalf("before any refusal: format %s, limited %v; want json, not limited", f, r.Limited())
	}
	refused := func(why detect.Reason) detect.Verdict { return detect.Verdict{Kind: detect.Refused, Reason: why} }
	if r.PassIPDenied(refused(detect.BotChallenge), "json", now) || r.PassIPDenied(detect.Verdict{Kind: detect.Failed, Reason: detect.RateLimited}, "json", now) {
		t.Fatal("a refusal other than the limiter's was taken for it")
	}
	if !r.PassIPDenied(refused(detect.RateLimited), "json", now) {
		t.Fatal("the limiter's first refusal was not diagnosed")
	}
	if r.PassIPDenied(refused(detect.LimiterRedirect), "html", now) {
		t.Fatal("a second refusal was diagnosed again")
	}
	if f := r.Format(r.Caps(), true); f != "html" || !r.Limited() {
		t.Errorf("after the refusal: format %s, limited %v; want html, limited", f, r.Limited())
	}
	if free := e.g.Budget().FreeAt(u, now); !free.Equal(now.Add(limiterWindow)) {
		t.Errorf("held until +%v, want +%v", free.Sub(now), limiterWindow)
	}
	host, _ := url.Parse(u)
	want := PassIPAdvice(host.Host, "192.0.2.7")
	var seen bool
	for _, in := range e.g.Instances(now) {
		if in.URL == u {
			seen = true
			if in.Advice != want {
				t.Errorf("the view's advice %q, want %q", in.Advice, want)
			}
		}
	}
	if !seen {
		t.Fatal("the instance is not in the view")
	}
}

// TestPassIPNotDeclared: without Config.OwnPassIP a limiter refusal is
// the instance's as any other, and an own instance with its limiter on is
// paced below it and asked for HTML.
func TestPassIPNotDeclared(t *testing.T) {
	e := newEnv(t, sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	u := e.urls[0]
	e.pool.Add(u, pool.Own)
	now := e.clock.Now()
	r := e.g.Ensure(u)
	r.Update(func(c *Caps) { *c = Caps{ConfigAt: now, ConfigOK: true, Limiter: true, JSON: Yes, JSONAt: now} })
	if r.PassIPDenied(detect.Verdict{Kind: detect.Refused, Reason: detect.RateLimited}, "html", now) {
		t.Fatal("diagnosed without --own-pass-ip")
	}
	if f := r.Format(r.Caps(), true); f != "html" || !r.Limited() {
		t.Errorf("format %s, limited %v; want html, limited", f, r.Limited())
	}
	if free := e.g.Budget().FreeAt(u, now); free.After(now) {
		t.Errorf("held until +%v, want free now", free.Sub(now))
	}
}
