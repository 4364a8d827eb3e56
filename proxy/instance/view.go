package instance

import (
	"time"

	"github.com/searxgate/searxgate/pool"
)

// Instance is what the search path knows of one instance, for people
// and dashboards: the pool's learned state, its terms, the format searxgate
// uses with it, its budget and whether a search could go to it now, and
// if not, why. web renders it and computes nothing of its own, so the
// status page never disagrees with the search path.
type Instance struct {
	pool.Stats
	Caps   Caps
	Format string // the format searxgate asks it for
	// Budget is its politeness windows as used now (none for an own
	// instance without a budget).
	Budget []WindowUse
	// WhyNot says why a search could not be sent to it now (Ready: it
	// could), as its record's Available says.
	WhyNot  Why
	Metrics MetricsView // its upstream counters
	// Advice is what the operator could do for it, for the status page
	// ("" when nothing).
	Advice string
}

// UsableNow reports whether a search could be sent to it now.
func (i Instance) UsableNow() bool { return i.WhyNot == Ready }

// Own reports whether the instance is the operator's own.
func (i Instance) Own() bool { return i.Tier == pool.Own }

// LimiterAdvice is said, once at start and on the status page, of an own
// instance whose SearXNG limiter counts searxgate.
const LimiterAdvice = "its SearXNG limiter is on, so searxgate paces it below the limiter " +
	"(12 searches in 20 s, 120 in 10 min): add searxgate's address to botdetection.ip_lists.pass_ip " +
	"in the instance's limiter.toml, then start searxgate with --own-pass-ip to lift it"

// WindowUse is one politeness window and how much of it is used.
type WindowUse struct {
	Per  time.Duration
	Max  int
	Used int
}

// Instances returns every instance of the pool, best first, as the search
// path sees it at now.
func (g *Registry) Instances(now time.Time) []Instance {
	stats := g.cfg.Pool.Snapshot()
	out := make([]Instance, 0, len(stats))
	for _, st := range stats {
		out = append(out, g.view(st, now))
	}
	return out
}

func (g *Registry) view(st pool.Stats, now time.Time) Instance {
	var c Caps
	var m MetricsView
	format := ""
	r := g.Get(st.URL)
	if r != nil {
		c, m = r.Caps(), r.metrics.View()
		format = r.Format(c, st.Tier == pool.Own)
	} else {
		format = c.format()
	}
	v := Instance{Stats: st, Caps: c, Format: format, Metrics: m}
	for _, w := range g.polite.WindowsOf(st.URL) {
		v.Budget = append(v.Budget, WindowUse{Per: w.Per, Max: w.Max, Used: g.polite.Used(st.URL, now, w.Per)})
	}
	v.WhyNot = r.why(st, now)
	switch {
	case st.Tier == pool.Own && r != nil && r.passAdvice.Load() != nil:
		v.Advice = *r.passAdvice.Load()
	case st.Tier == pool.Own && r.Limited():
		v.Advice = LimiterAdvice
	}
	return v
}
