package instance

import (
	"fmt"
	"time"

	"github.com/searxgate/searxgate/pool"
)

// Why says why a search may not go to an instance now. The record decides
// it once (available); each face words every Why in one table of its own,
// and a test holds the tables to Whys.
type Why uint8

// The reasons, the lasting ones (the operator's, its terms') first.
const (
	Ready          Why = iota // a search may go to it now
	WhyDisabled               // the operator disabled it
	WhyLinkToken              // its link-token bot check would take searxgate for a bot (Config.AllowLinkToken)
	WhyCircuitOpen            // it refused or failed: cooling down
	WhyTrialOut               // half open, its one trial search out
	WhyInFlight               // as many searches in flight as it may have
	WhyBudget                 // its politeness budget is spent for now
)

// Whys are every reason an instance may be unavailable, for the faces'
// tables.
var Whys = []Why{WhyDisabled, WhyLinkToken, WhyCircuitOpen, WhyTrialOut, WhyInFlight, WhyBudget}

// whyLabels are the labels /status.json, the MCP face and logs show.
var whyLabels = [...]string{Ready: "", WhyDisabled: "disabled", WhyLinkToken: "link_token",
	WhyCircuitOpen: "circuit_open", WhyTrialOut: "trial_out", WhyInFlight: "in_flight", WhyBudget: "budget"}

// String is w's label ("" for Ready).
func (w Why) String() string {
	if int(w) < len(whyLabels) {
		return whyLabels[w]
	}
	return fmt.Sprintf("why(%d)", uint8(w))
}

// MarshalText writes w's label.
func (w Why) MarshalText() ([]byte, error) { return []byte(w.String()), nil }

// UnmarshalText reads a label MarshalText wrote.
func (w *Why) UnmarshalText(b []byte) error {
	for i, l := range whyLabels {
		if l == string(b) {
			*w = Why(i)
			return nil
		}
	}
	return fmt.Errorf("proxy: unknown why %q", b)
}

// fromPool is the pool's part of Why.
var fromPool = [...]Why{pool.WhyNone: Ready, pool.WhyDisabled: WhyDisabled, pool.WhyCircuitOpen: WhyCircuitOpen,
	pool.WhyTrialOut: WhyTrialOut, pool.WhyInFlight: WhyInFlight}

// Available reports whether a search may go to r's instance now, and if
// not, why: the first Why that holds.
func (r *Record) Available(now time.Time) (ok bool, why Why) {
	why = r.why(r.g.cfg.Pool.Stats(r.url), now)
	return why == Ready, why
}

// why is the search path's one rule, with the pool's stats st at hand:
// what the pool hands out (its part, Stats.PoolWhy) and what checkout
// skips (takes: its terms and budget). A nil record is an instance
// searxgate keeps nothing of yet: its terms unknown, its budget whole.
func (r *Record) why(st pool.Stats, now time.Time) Why {
	pw := st.PoolWhy
	switch {
	case pw == pool.WhyDisabled:
		return WhyDisabled
	case r.Barred():
		return WhyLinkToken
	case int(pw) < len(fromPool) && pw != pool.WhyNone:
		return fromPool[pw]
	case !r.inBudget(now):
		return WhyBudget
	}
	return Ready
}

// Takes reports whether r's terms and budget let a search go to it now:
// the search path's part of why, asked of what the pool would hand out.
func (r *Record) Takes(now time.Time) bool { return !r.Barred() && r.inBudget(now) }

// Suggests is Takes for an autocompletion: its terms name a backend, and
// autocompletion has its own budget.
func (r *Record) Suggests(now time.Time) bool {
	if r == nil {
		return false
	}
	c := r.Caps()
	return c.Autocomplete != "" && !r.BarredBy(c) && r.g.acPolite.Allowed(r.url, now)
}

// Barred reports whether r's terms keep searxgate from searching it.
func (r *Record) Barred() bool { return r != nil && r.BarredBy(r.Caps()) }

// BarredBy reports whether terms c keep searxgate from searching r's
// instance: its link-token check would take searxgate for a bot (unless
// the operator allows it).
func (r *Record) BarredBy(c Caps) bool { return c.LinkToken && !r.g.cfg.AllowLinkToken }

// inBudget reports whether one more search to r stays within its
// politeness budget; an instance without a record has used none.
func (r *Record) inBudget(now time.Time) bool { return r == nil || r.g.polite.Allowed(r.url, now) }

// Usable reports whether a search could be sent now to the instance st
// describes, and if not, why. st must come from the pool (Snapshot or
// Stats): its PoolWhy, which JSON drops, is the pool's part.
// It asks the instance's record (Available's rule), as /status, /metrics,
// the MCP face and the start-up check do, so none disagrees with where
// searches go.
func (g *Registry) Usable(st pool.Stats, now time.Time) (ok bool, why Why) {
	why = g.Get(st.URL).why(st, now)
	return why == Ready, why
}
