package proxy

import (
	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/proxy/instance"
)

// The instance room's names (proxy/instance), said here too so that the
// faces read one package.
type (
	Caps            = instance.Caps
	Engine          = instance.Engine
	ConfigReadError = instance.ConfigReadError
	Why             = instance.Why
	Instance        = instance.Instance
	Totals          = instance.Totals
)

// Learned yes/no values (instance.Tri).
const (
	Yes = instance.Yes
	No  = instance.No
)

// The reasons a search may not go to an instance (instance.Why).
const (
	Ready          = instance.Ready
	WhyDisabled    = instance.WhyDisabled
	WhyLinkToken   = instance.WhyLinkToken
	WhyCircuitOpen = instance.WhyCircuitOpen
	WhyTrialOut    = instance.WhyTrialOut
	WhyInFlight    = instance.WhyInFlight
	WhyBudget      = instance.WhyBudget
)

// ErrTermsUnread is instance.ErrTermsUnread.
var ErrTermsUnread = instance.ErrTermsUnread

// Whys is instance.Whys.
var Whys = instance.Whys

// EnginesOf is instance.EnginesOf.
func EnginesOf(t detect.Terms) []Engine { return instance.EnginesOf(t) }

// KindName is instance.KindName.
func KindName(i int) string { return instance.KindName(i) }

// Instances is the instance room: every instance's record, terms and
// views, and the one rule of whether a search may go to it now.
func (p *Proxy) Instances() *instance.Registry { return p.recs }

// Forget drops what the proxy keeps about inst, in one step: its record
// (terms, budget windows, connections, recent outcomes) and its cached
// answers; the pool no longer has it. Its lifetime totals
// (instance.Registry.EachTotals) stay, for /metrics.
func (p *Proxy) Forget(inst string) {
	if _, err := p.cache.DropAnswersOf(inst); err != nil {
		p.log.Error("dropping the cached answers of an instance that left the pool", "instance", inst, "err", err)
	}
	p.recs.Forget(inst)
}
