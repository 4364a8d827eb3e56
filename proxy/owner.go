package proxy

import (
	"sync"
	"time"

	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/pool"
)

// Whose outcome is it? Every upstream search comes to an outcome, and
// every outcome has an owner: the instance, the query, the client or
// searxgate itself (pool.Owner). Only the instance's own outcomes move its
// circuit, failure average and cooldown, reach the replicas (a circuit
// opens only on those) and count as its refusals and failures in
// /metrics and /status; the others count there as "excused". The owner is
// decided here, in ownerOf and in opinions, before the pool learns
// anything: the pool cannot undo an outcome it recorded.
//
//	outcome                                      owner
//	ok answer, honest "nothing found"            instance (it answered)
//	refusal: 429, limiter redirect, 403,         instance
//	  challenge, blocklist, 503
//	unreadable, too large, reset, tls,           instance (FailStrikes in a
//	  refused connection, a parser panic           row open the circuit)
//	external bang, feeling lucky (a redirect     query
//	  off the instance, passed to the client)
//	format=json refused (403)                    searxgate's choice of format:
//	                                               cancelled, HTML asked next
//	link-token bar, searxgate's own connection   searxgate (cancelled, busy)
//	  cap, shutdown, a lease given back
//	engines down or off-topic answer             held: the second opinion
//	5xx (but 503), 4xx the instance would not    held: the second opinion
//	  take
//	timeout, dns                                 held: the second opinion
//	autocompletion: a refusal                    instance (cools it as a search's would)
//	autocompletion: anything else                nobody: recorded as cancelled
//
// A held outcome cannot tell by itself whose it is: engines that fail on
// one query fail on every instance, a query can crash SearXNG or be
// refused by it everywhere, a query can be slow everywhere, and when no
// name resolves the network is down. It waits (pool.Hold frees its slot
// meanwhile) until another instance of the same search has spoken: when
// one answers with results, each held outcome is the instance's (a
// timeout only when it ran well past the answer's time: one cut short by
// the deadline had no fair chance).
//
// When the search ends without such an answer, the query or the network
// is at fault, and the held outcomes are the query's or searxgate's:
//   - poor answers (engines down, off-topic) are the query's, however
//     many instances gave them; only an answer that echoes another
//     query, or differs from two others that agree (the same echo, a
//     URL in common), is its instance's own: the third opinion decides
//     (search.weigh). Two poor answers that
//     differ prove nothing by themselves (engines that read a query
//     their own way, each instance its own results);
//   - a 5xx or a 4xx that a second instance repeats is the query's (the
//     search stops there, with an error that says so); a lone 5xx that
//     no second instance could judge is its instance's, a lone 4xx the
//     client's; but one whose second opinion another instance could
//     have given, had searxgate a slot, extra budget or time left to ask
//     it (concurrent searches hold them), is searxgate's;
//   - dns is searxgate's (the machine is offline);
//   - a timeout cut after the search waited in searxgate's queue, or cut
//     before its instance had twice its usual latency (at least
//     HedgeFloor), is searxgate's; one cut before the time the query's
//     own timeout syntax ("<6") gave SearXNG is the query's; one that
//     repeats on a second instance is the query's; one that had its
//     chance on the only instance asked is the instance's own
//     (FailStrikes in a row open its circuit).
//
// A held outcome whose search already ended is decided at once by what
// that search saw.

// opinions collects what the attempts of one search came to, to decide
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
}

// heldOutcome is one attempt's outcome waiting for a second opinion.
type heldOutcome struct {
	l       leased
	o       pool.Outcome
	elapsed time.Duration
	fair    time.Duration // what its instance was due: twice its usual latency, at least HedgeFloor
}

// ambiguous reports whether an instance's outcome o cannot tell by itself
// whose doing it is.
func ambiguous(o pool.Outcome) bool {
	switch detect.Reason(o.Reason) {
	case detect.EnginesDown, detect.OffTopic:
		return o.Kind == pool.Soft
	case detect.Timeout, detect.DNS, detect.ServerError, detect.ClientError:
		return o.Kind == pool.Failed
	}
	return false
}

// queryCanFail reports whether a query can make every instance fail with
// reason: SearXNG crashing on it (5xx) or refusing it (4xx).
func queryCanFail(reason detect.Reason) bool {
	return reason == detect.ServerError || reason == detect.ClientError
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
	if o.Owner != pool.OwnerInstance || !ambiguous(o) {
		op.p.record(l, o, elapsed)
		return
	}
	h := heldOutcome{l: l, o: o, elapsed: elapsed, fair: op.p.cfg.HedgeFloor}
	if lat, ok := op.p.usual(l.inst); ok {
		h.fair = max(h.fair, 2*lat)
	}
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

// judge decides the owner of an ambiguous outcome from what the search
// saw; op.mu is held.
func (op *opinions) judge(h heldOutcome) pool.Owner {
	o := h.o
	if o.Kind == pool.Soft {
		if op.answeredIn > 0 || op.own[h.l.inst] {
			return pool.OwnerInstance // others answered this query better, or alike without it
		}
		return pool.OwnerQuery
	}
	switch r := detect.Reason(o.Reason); {
	case r == detect.DNS:
		if op.answeredIn > 0 {
			return pool.OwnerInstance // other names resolve: its own
		}
		return pool.OwnerGateway // no instance was reached: the network
	case queryCanFail(r):
		switch {
		case op.answeredIn > 0:
			return pool.OwnerInstance // another instance answered this query
		case op.alike[r] >= 2:
			return pool.OwnerQuery // a second instance failed on it the same way
		case op.noSecond:
			return pool.OwnerGateway // searxgate could not ask the second opinion
		case r == detect.ServerError:
			return pool.OwnerInstance // no second instance: its server's own error
		}
		return pool.OwnerClient // no second opinion: an odd query
	}
	// A timeout.
	switch {
	case h.l.queued:
		// The search waited in searxgate's queue before it was sent: the
		// time it lost there, and the deadline that cut it, are
		// searxgate's.
		return pool.OwnerGateway
	case h.elapsed < h.fair || (op.answeredIn > 0 && h.elapsed < 2*op.answeredIn):
		// Cut by the search's deadline before it had a fair chance (it
		// was sent late: a hedge, its terms read first): searxgate's
		// doing.
		return pool.OwnerGateway
	case op.limit > h.elapsed:
		// Cut before the time the query itself gave SearXNG ("<6" where
		// searxgate's deadline is shorter): the query's.
		return pool.OwnerQuery
	case op.answeredIn > 0:
		return pool.OwnerInstance // others answered in time
	case op.asked > 1:
		return pool.OwnerQuery // slow on every instance asked: the query
	}
	// The only instance asked, and it had its chance: its own slowness
	// (FailStrikes of these in a row open its circuit).
	return pool.OwnerInstance
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
	p.metrics.upstream(l.rec.metrics, l.inst, o, elapsed)
	l.release()
	p.dispatch()
}
