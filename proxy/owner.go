package proxy

import (
	"sync"
	"time"

	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/pool"
)

// opinions gathers the evidence blame (blame.go) decides a held outcome
// from. It collects what the attempts of one search came to, to decide
// the owner of the outcomes that cannot tell by themselves. The search
// and its attempts share it; attempts may outlive the search.
type opinions struct {
	p *Proxy
	// limit is the time the query's timeout syntax gives SearXNG (see
	// detect.Query.Timeout); 0 when it has none. Read-only.
	limit time.Duration
	mu    sync.Mutex // guards everything below
	// answeredIn is how long the fastest answer with results took; 0
	// while none came.
	answeredIn time.Duration
	closed     bool // the search ended
	// own holds the instances whose poor answer was their own: it
	// differed from two others that agreed.
	own map[string]bool
	// alike counts the answers of the search that failed the way a query
	// can make every instance fail: 5xx, 4xx.
	alike map[detect.Reason]int
	asked int // instances the search sent to
	// noSecond is set when a second opinion was wanted and another
	// instance could have given it, but no slot, extra budget or time
	// was left to ask it: a lone 5xx then proves nothing against its
	// instance.
	noSecond bool
	held     []heldOutcome
	// decided holds the owner and rule of each instance's outcome once
	// decided, for the search's error.
	decided map[string]Blame
}

// heldOutcome is one attempt's outcome waiting for a second opinion.
type heldOutcome struct {
	l       leased
	o       pool.Outcome
	elapsed time.Duration
	fair    time.Duration // what its instance was due: twice its usual latency, at least HedgeFloor
}

// sent counts one more instance the search sent to.
func (op *opinions) sent() {
	op.mu.Lock()
	op.asked++
	op.mu.Unlock()
}

// settle records an attempt's outcome now, or holds it for a second
// opinion, and gives the lease back.
func (op *opinions) settle(l leased, o pool.Outcome, elapsed time.Duration) {
	if !held(o) {
		op.mu.Lock()
		op.note(l.inst, Blame{Owner: o.Owner, Rule: RuleItself})
		op.mu.Unlock()
		op.p.record(l, o, elapsed)
		return
	}
	h := heldOutcome{l: l, o: o, elapsed: elapsed, fair: op.p.fairChance(l.inst)}
	op.mu.Lock()
	repeated := false
	if r := detect.Reason(o.Reason); queryCanFail(r) {
		if op.alike == nil {
			op.alike = make(map[detect.Reason]int, 1)
		}
		op.alike[r]++
		repeated = op.alike[r] == 2
	}
	switch {
	case repeated:
		// A second instance failed the same way: the query's, and so is
		// the first one held.
		op.held = append(op.held, h)
		op.decide()
		return
	case op.answeredIn == 0 && !op.closed:
		op.held = append(op.held, h)
		op.mu.Unlock()
		op.p.pool.Hold(l.lease)
		return
	}
	h.o.Owner = op.judge(h)
	op.mu.Unlock()
	op.p.record(l, h.o, elapsed)
}

// fairChance is what an attempt on inst is due before a timeout is its
// own: twice its usual latency, at least HedgeFloor.
func (p *Proxy) fairChance(inst string) time.Duration {
	if lat, ok := p.usual(inst); ok {
		return max(p.cfg.HedgeFloor, 2*lat)
	}
	return p.cfg.HedgeFloor
}

// judge decides the owner of a held outcome from what the search saw
// (blame); op.mu is held.
func (op *opinions) judge(h heldOutcome) pool.Owner {
	b := blame(h.o, op.evidence(h))
	op.note(h.l.inst, b)
	return b.Owner
}

// foresee is what blame decides of h from what the search saw so far,
// without recording it.
func (op *opinions) foresee(h heldOutcome) Blame {
	op.mu.Lock()
	defer op.mu.Unlock()
	return blame(h.o, op.evidence(h))
}

// note keeps what was decided of inst's outcome, for the search's error
// (blamed); op.mu is held.
func (op *opinions) note(inst string, b Blame) {
	if op.decided == nil {
		op.decided = make(map[string]Blame, 2)
	}
	op.decided[inst] = b
}

// blamed is what was decided of inst's outcome in this search; ok is
// false while nothing was.
func (op *opinions) blamed(inst string) (b Blame, ok bool) {
	op.mu.Lock()
	defer op.mu.Unlock()
	b, ok = op.decided[inst]
	return b, ok
}

// evidence is what the search saw so far, for h; op.mu is held.
func (op *opinions) evidence(h heldOutcome) evidence {
	return evidence{
		answeredIn: op.answeredIn, ownPoor: op.own[h.l.inst], alike: op.alike[detect.Reason(h.o.Reason)],
		noSecond: op.noSecond, asked: op.asked, limit: op.limit, queued: h.l.queued,
		elapsed: h.elapsed, fair: h.fair,
	}
}

// failedAlike is the reason of the failures (5xx, 4xx) a second instance
// of the search repeated, "" while none was.
func (op *opinions) failedAlike() detect.Reason {
	op.mu.Lock()
	defer op.mu.Unlock()
	for r, n := range op.alike {
		if n >= 2 {
			return r
		}
	}
	return ""
}

// unasked says a second opinion was wanted and could have been given by
// another instance, but searxgate had no slot, extra budget or time left
// to ask it.
func (op *opinions) unasked() {
	op.mu.Lock()
	op.noSecond = true
	op.mu.Unlock()
}

// answered says an instance answered the search with results after
// elapsed: the outcomes held so far were their instances' own.
func (op *opinions) answered(elapsed time.Duration) {
	op.mu.Lock()
	if op.answeredIn == 0 || elapsed < op.answeredIn {
		op.answeredIn = max(elapsed, time.Nanosecond)
	}
	op.decide()
}

// ownPoor says inst's poor answer differed from two others of the search
// that agreed: its instance's own doing, not the query's.
func (op *opinions) ownPoor(inst string) {
	op.mu.Lock()
	if op.own == nil {
		op.own = make(map[string]bool, 1)
	}
	op.own[inst] = true
	op.mu.Unlock()
}

// close ends the search: the outcomes still held are decided by what it
// saw, and later ones at once.
func (op *opinions) close() {
	op.mu.Lock()
	op.closed = true
	op.decide()
}

// decide records every held outcome; op.mu is held and released.
func (op *opinions) decide() {
	held := op.held
	op.held = nil
	for i := range held {
		held[i].o.Owner = op.judge(held[i])
	}
	op.mu.Unlock()
	for _, h := range held {
		op.p.record(h.l, h.o, h.elapsed)
	}
}

// record gives the pool an attempt's outcome, counts it and ends the
// lease.
func (p *Proxy) record(l leased, o pool.Outcome, elapsed time.Duration) {
	p.pool.Record(l.lease, o, elapsed)
	if (o.Owner == pool.OwnerInstance || l.lease.Own()) && (o.Kind == pool.Refused || o.Kind == pool.Failed) {
		// The operator hears of their own instance whoever's doing it was
		// (a name that does not resolve may be theirs to fix).
		a := Attempt{Instance: l.inst, Own: l.lease.Own(), Outcome: o.Kind.String(), Reason: o.Reason,
			Owner: o.Owner.String(), ElapsedMS: elapsed.Milliseconds()}
		if st := p.pool.Stats(l.inst); st.Circuit == pool.Open {
			a.Until = st.CooldownUntil
		}
		p.causes.log(p.log, a, p.now())
	}
	p.metrics.upstream(o, elapsed)
	p.recs.Count(l.rec, l.inst, o, elapsed)
	l.release()
	p.dispatch()
}
