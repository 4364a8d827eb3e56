package instance

import (
	"net/url"
	"time"

	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/proxy/upstream"
)

// limiterWindow is the shortest window of SearXNG's limiter (15 HTML
// searches in 20 s): an own instance whose limiter refused searxgate
// although Config.OwnPassIP said it would not is held that long, once,
// before it is paced below the limiter.
const limiterWindow = 20 * time.Second

// PassIPAdvice is said, once in the log and on the status page, of an own
// instance declared to pass searxgate (Config.OwnPassIP) whose limiter
// refused it all the same. at is the instance's host, addr the address
// searxgate sends from ("" when it could not be told).
func PassIPAdvice(at, addr string) string {
	if addr == "" {
		addr = "(the address this machine sends from)"
	}
	return "your SearXNG at " + at + " does not pass searxgate's address " + addr +
		" (botdetection.ip_lists.pass_ip): its limiter refused searxgate although --own-pass-ip says it passes it, " +
		"so searxgate paces it below the limiter (12 searches in 20 s, 120 in 10 min) and asks it for HTML; " +
		"add " + addr + " to pass_ip in its limiter.toml and restart searxgate, or drop --own-pass-ip"
}

// passes reports whether searxgate takes the own instance r as passing its
// address: the operator said so (Config.OwnPassIP) and its limiter has not
// refused searxgate since.
func (r *Record) passes() bool {
	return r.g.cfg.OwnPassIP && !r.passDenied.Load()
}

// Format is the upstream format for the instance r with terms c: an own
// instance that passes searxgate is asked for JSON whenever it offers it,
// its limiter on or not (it does not count searxgate); any other, as
// Caps.format says.
func (r *Record) Format(c Caps, own bool) string {
	if own && r.passes() && c.ConfigOK && c.JSON == Yes {
		return upstream.FormatJSON
	}
	return c.format()
}

// Limited reports whether searxgate paces the own instance r below
// SearXNG's limiter: its /config says the limiter is on, and the operator
// did not say searxgate passes it (Config.OwnPassIP); or its limiter
// refused searxgate although the operator said so. A nil record is not.
func (r *Record) Limited() bool {
	if r == nil {
		return false
	}
	return r.passDenied.Load() || (!r.g.cfg.OwnPassIP && r.Caps().Limiter)
}

// PassIPDenied takes a refusal v of the own instance r: when searxgate was
// told it passes (Config.OwnPassIP) and this is the first limiter refusal
// (429, the limiter's redirect) since, it is diagnosed: logged once, shown
// on the status page (PassIPAdvice), and from now on the instance is paced
// below its limiter and asked for HTML. It reports whether v was that
// first refusal: searxgate's mistake, not the instance's, so its circuit
// stays closed; the instance is held for one limiter window instead (the
// searches searxgate sent it so far were not counted against the
// limiter's budget, and the limiter counted them all), and the search
// goes on to the next instance.
func (r *Record) PassIPDenied(v detect.Verdict, format string, now time.Time) bool {
	g := r.g
	if !g.cfg.OwnPassIP || v.Kind != detect.Refused || (v.Reason != detect.RateLimited && v.Reason != detect.LimiterRedirect) {
		return false
	}
	if !r.passDenied.CompareAndSwap(false, true) {
		return false
	}
	advice := g.passIPAdvice(r.url) // once: the source address is looked up
	r.passAdvice.Store(&advice)
	g.cfg.Log.Warn(advice, "instance", r.url, "reason", string(v.Reason), "format", format)
	g.polite.Hold(r.url, now.Add(limiterWindow), now)
	return true
}

// passIPAdvice is PassIPAdvice for the instance inst.
func (g *Registry) passIPAdvice(inst string) string {
	at := inst
	if u, err := url.Parse(inst); err == nil && u.Host != "" {
		at = u.Host
	}
	addr := ""
	if g.cfg.SourceAddr != nil {
		addr = g.cfg.SourceAddr(inst)
	}
	return PassIPAdvice(at, addr)
}
