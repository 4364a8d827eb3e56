package proxy

import (
	"context"
	"slices"
	"time"
)

// A checkout takes an instance for one upstream search in two steps: what
// is decided in memory (reserve: the pool's lease within the local
// budget), then what is shared with other replicas (confirm: a half-open
// trial, the shared budget, which has the last word), which may ask
// Redis. The slot queue reserves under its lock and confirms outside it
// (dispatch): a slow answer from Redis never holds the queue.

// checkout takes the best instance this search has not tried, within its
// politeness budget and terms, if one is free now.
//
// The lease outlives the search when its attempt is a hedge loser still
// running: it is given back by Record, or by the pool when the returned
// release (called after Record) or the lease's own deadline ends its context.
func (p *Proxy) checkout(ctx context.Context, client string, tried map[string]bool, now time.Time, ownOnly bool) (leased, bool) {
	var lost lostSet
	for !lost.full() {
		l, ok := p.reserve(ctx, client, tried, now, ownOnly, &lost)
		if !ok {
			return leased{}, false
		}
		if p.confirm(ctx, l, client) {
			return l, true
		}
		lost.add(l.inst)
	}
	return leased{}, false
}

// lostSet holds the instances that lost their budget just now, to a
// concurrent search or to the shared budget's refusal: a checkout skips
// them, and gives up after maxLost.
type lostSet struct {
	inst [maxLost]string
	n    int
}

// maxLost is how many instances one checkout may lose before it gives up.
const maxLost = 4

func (s *lostSet) full() bool           { return s.n == len(s.inst) }
func (s *lostSet) add(inst string)      { s.inst[s.n] = inst; s.n++ }
func (s *lostSet) has(inst string) bool { return slices.Contains(s.inst[:s.n], inst) }

// reserve takes the best instance free now that this search has not tried
// and did not lose, and its local budget: all of a checkout that is
// decided in memory, quick enough for the queue's lock. A client over its
// share of the public budget is served by the operator's own instances
// only, until its share frees.
func (p *Proxy) reserve(ctx context.Context, client string, tried map[string]bool, now time.Time, ownOnly bool, lost *lostSet) (leased, bool) {
	checkoutFn := p.pool.Checkout
	if ok, _ := p.fair.Allowed(client, now); ownOnly || !ok {
		checkoutFn = p.pool.CheckoutOwn
	}
	skip := func(inst string) bool { // the pool asked its part: the record says the rest
		return tried[inst] || lost.has(inst) || !p.recs.Get(inst).Takes(now)
	}
	// A lease whose instance lost its budget to a concurrent search between
	// Checkout and Take is given back and the next one taken; bounded.
	for !lost.full() {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.cfg.Deadline+5*time.Second)
		leases, err := checkoutFn(lctx, 1, skip)
		if err != nil || len(leases) == 0 {
			cancel()
			return leased{}, false
		}
		l := leases[0]
		inst := l.Instance()
		rec := p.recs.Ensure(inst) // before the budget: its windows live in the record
		if p.replicas.localTake(inst, l.Own(), now) {
			return leased{lease: l, inst: inst, rec: rec, release: cancel, takenAt: now}, true
		}
		p.giveBack(l, cancel)
		lost.add(inst)
	}
	return leased{}, false
}

// shares reports whether confirming l asks the state shared with other
// replicas (and so may wait on it): l is a public instance and a budget,
// or for a half-open instance's trial the trials, are shared.
func (p *Proxy) shares(l leased) bool {
	sh := p.cfg.Shared
	return !l.lease.Own() && (sh.Budget != nil || (l.lease.Trial() && sh.Trials != nil))
}

// confirm charges the client's fair share of the public budget for l,
// reserved just now, and asks what is shared with other replicas: a
// half-open public instance's trial goes to one replica at a time, and
// the shared budget has the last word. The share is checked and charged in
// one step (a client's concurrent searches cannot all pass its check). A
// refusal gives back the local budget's slot (Untake: the search is not
// sent), the share and the lease; the shared state's refusal holds the
// instance locally until the time it said (so that the slot queue and
// Retry-After see it). The operator's own instances are neither shared nor
// shared out.
func (p *Proxy) confirm(ctx context.Context, l leased, client string) bool {
	if l.lease.Own() {
		return true
	}
	inst, now := l.inst, l.takenAt
	if !p.fair.TakeIfAllowed(client, now) { // another of its searches took the share meanwhile
		p.polite.Untake(inst, now)
		p.giveBack(l.lease, l.release)
		return false
	}
	if (l.lease.Trial() && !p.replicas.trial(ctx, inst, now)) || !p.replicas.sharedTake(ctx, inst, now) {
		p.polite.Untake(inst, now)
		p.fair.Untake(client, now)
		p.giveBack(l.lease, l.release)
		return false
	}
	return true
}
