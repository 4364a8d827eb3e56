package pool

import (
	"context"
	"fmt"
	"time"
)

// Lease is one instance reserved for one upstream search. Give it back with
// Record; when the context it was checked out with ends first, the pool
// takes it back by itself (counted as cancelled).
type Lease struct {
	p     *Pool
	in    *instance
	url   string
	epoch uint32 // in.epoch at checkout
	trial bool
	own   bool // the instance was the operator's own at checkout
	done  bool // guarded by p.mu: recorded or released
	held  bool // guarded by p.mu: Hold gave its in-flight slot back; its outcome is still to come
	// stop unregisters the context's release; nil when the context can
	// never end. Set before Checkout returns, read by Record only.
	stop func() bool
}

// Instance returns the URL of the leased instance.
func (l *Lease) Instance() string { return l.url }

// Own reports whether the leased instance is one of the operator's own
// (tier Own) at checkout.
func (l *Lease) Own() bool { return l.own }

// Trial reports whether this is the single trial lease of a half-open
// instance: its outcome closes the circuit or opens it again for longer.
func (l *Lease) Trial() bool { return l.trial }

// Checkout picks up to count available instances, best first, and reserves
// them in one step, so concurrent searches spread instead of racing onto
// one instance. It skips disabled instances, open circuits, half-open ones
// whose trial is out, instances at MaxInFlight, and those skip reports true
// for (skip runs under the pool's lock: it must be quick and must not call
// the pool). An instance whose cooldown ended becomes half-open and its
// lease is the trial.
//
// It returns ErrNoneAvailable when it hands out none (wrapped with ctx's
// error when ctx had already ended). When ctx ends before a lease is
// recorded, the lease is released: no outcome, counted as cancelled.
func (p *Pool) Checkout(ctx context.Context, count int, skip func(url string) bool) ([]*Lease, error) {
	return p.checkout(ctx, count, false, skip)
}

// CheckoutOwn is Checkout among the operator's own instances only: for a
// search that may not take a public instance's budget now.
func (p *Pool) CheckoutOwn(ctx context.Context, count int, skip func(url string) bool) ([]*Lease, error) {
	return p.checkout(ctx, count, true, skip)
}

func (p *Pool) checkout(ctx context.Context, count int, ownOnly bool, skip func(url string) bool) ([]*Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoneAvailable, err)
	}
	if count <= 0 {
		return nil, ErrNoneAvailable
	}
	now := p.clock.Now()
	nowM := p.mono(now)
	var arr [8]cand
	var evArr [4]Event
	evs := evArr[:0]

	p.mu.Lock()
	var cs []cand
	if ownOnly {
		cs = p.pickOwn(nowM, count, skip, arr[:])
	} else {
		cs = p.pick(nowM, count, skip, arr[:])
	}
	if len(cs) == 0 {
		p.mu.Unlock()
		return nil, ErrNoneAvailable
	}
	leases := make([]Lease, len(cs))
	out := make([]*Lease, len(cs))
	for i, c := range cs {
		in := p.list[c.idx]
		s := &p.slots[c.idx]
		if p.checkoutHook != nil {
			p.checkoutHook(in, s, nowM)
		}
		l := &leases[i]
		l.p, l.in, l.url = p, in, in.url
		if s.circuit == Open { // cooldown ended (pick checked): now half-open
			s.circuit = HalfOpen
			evs = append(evs, Event{Instance: in.url, From: Open, To: HalfOpen, At: now, Reason: ReasonCooldownEnded})
		}
		if s.circuit == HalfOpen {
			s.trialOut = true
			l.trial = true
		}
		l.epoch = in.epoch
		l.own = s.own
		s.inFlight++
		s.used = nowM
		out[i] = l
	}
	p.mu.Unlock()

	if ctx.Done() != nil {
		for _, l := range out {
			l.stop = context.AfterFunc(ctx, l.release)
		}
	}
	p.emit(evs)
	return out, nil
}

// release takes the lease back when its context ended before Record.
func (l *Lease) release() {
	p := l.p
	p.mu.Lock()
	if l.done {
		p.mu.Unlock()
		return
	}
	l.done = true
	in := l.in
	if in.idx < 0 {
		p.mu.Unlock()
		return
	}
	s := &p.slots[in.idx]
	if !l.held {
		s.inFlight--
	}
	if l.trial && l.epoch == in.epoch {
		s.trialOut = false
	}
	in.cancelled++
	p.mu.Unlock()
	p.freed()
}

// freed tells OnFree, when set, that a lease came back by itself.
func (p *Pool) freed() {
	if f := p.onFree.Load(); f != nil {
		(*f)()
	}
}

// SetOnFree sets f to be called, after the pool's locks are released,
// whenever a lease comes back without Record (its context ended) or is
// held: a slot freed that nobody else announces. A slot queue uses it to
// wake its waiters instead of polling.
func (p *Pool) SetOnFree(f func()) { p.onFree.Store(&f) }

// Hold gives the lease's in-flight slot back now and keeps its outcome
// for a later Record: for an answer that cannot tell by itself whose
// doing it is (one instance's engines failed on a query, or the query
// fails everywhere) until a second instance has answered. A held
// half-open trial stays out until then. Record (or the end of the lease's
// context) must still follow; Hold of a lease done or held does nothing.
func (p *Pool) Hold(l *Lease) {
	if l == nil || l.p != p {
		return
	}
	p.mu.Lock()
	if l.done || l.held || l.in.idx < 0 {
		p.mu.Unlock()
		return
	}
	l.held = true
	p.slots[l.in.idx].inFlight--
	p.mu.Unlock()
	p.freed()
}

// Record reports what the lease's search came to, after elapsed, and gives
// the lease back. A second Record of the same lease, a Record after its
// context released it, and a Record of a lease on a removed instance do
// nothing. It does not allocate.
//
//   - OK closes the circuit, resets the streaks and feeds both averages.
//   - Soft (reachable, useless) closes a half-open circuit and feeds the
//     latency average, but raises the failure average; SoftStrikes in a
//     row open the circuit.
//   - Refused and Failed raise the failure average. A refusal opens the
//     circuit, and so does a Failed outcome that is the FailStrikes-th in
//     a row or a half-open trial's: for RetryAfter (capped at MaxCooldown)
//     when given, else for Cooldown doubled per opening since the last OK
//     (capped). Their elapsed never
//     lowers the latency average: a 429 in 30 ms says nothing of speed; a
//     Failed slower than the average (a timeout) raises it.
//   - Cancelled only gives the lease back (and a half-open trial with it).
//   - An outcome whose Owner is not OwnerInstance (the query's, the
//     client's, searxgate's) does the same, counted as excused: it moves
//     no circuit, streak or average.
//
// A stale lease (its circuit opened, or the state was reset or replaced,
// since it was checked out) feeds the averages and counters but moves no
// circuit and no streak. Unknown kinds count as Failed.
func (p *Pool) Record(l *Lease, o Outcome, elapsed time.Duration) {
	if l == nil || l.p != p {
		return
	}
	if l.stop != nil {
		l.stop()
	}
	now := p.clock.Now()
	p.mu.Lock()
	if l.done {
		p.mu.Unlock()
		return
	}
	l.done = true
	in := l.in
	if in.idx < 0 {
		p.mu.Unlock()
		return
	}
	s := &p.slots[in.idx]
	if !l.held {
		s.inFlight--
	}
	stale := l.epoch != in.epoch
	if l.trial && !stale {
		s.trialOut = false
	}
	ev, fire := p.apply(in, s, o, elapsed, stale, now)
	p.mu.Unlock()
	if fire && p.onEvent != nil {
		p.onEvent(ev)
	}
}

// apply learns o; mu must be held for writing. It returns the event of a
// circuit transition, if any.
func (p *Pool) apply(in *instance, s *slot, o Outcome, elapsed time.Duration, stale bool, now time.Time) (Event, bool) {
	if o.Kind > Cancelled {
		o.Kind = Failed
	}
	if o.Kind == Cancelled {
		in.cancelled++
		return Event{}, false
	}
	if o.Owner != OwnerInstance {
		// Not the instance's doing: it learns nothing from it.
		in.excused++
		return Event{}, false
	}
	ms := durMS(elapsed)
	if ms < 0 {
		ms = 0
	}
	in.hasOutcome, in.lastOutcome, in.lastReason = true, o.Kind, o.Reason

	var ev Event
	fire := false
	switch o.Kind {
	case OK:
		in.successes++
		in.observeLatency(ms)
		in.failure *= 1 - failureAlpha
		if !stale {
			in.consecFail, in.consecSoft, in.trips, in.cooldown = 0, 0, 0, 0
			ev, fire = p.close(in, s, now, o)
		}
	case Soft:
		in.softs++
		in.observeLatency(ms)
		in.failure += failureAlpha * (1 - in.failure)
		if !stale {
			in.consecFail = 0
			in.consecSoft++
			if p.cfg.SoftStrikes > 0 && in.consecSoft >= p.cfg.SoftStrikes {
				in.consecSoft = 0
				ev, fire = p.open(in, s, now, o, 0)
			} else {
				ev, fire = p.close(in, s, now, o)
			}
		}
	default: // Refused, Failed
		if o.Kind == Refused {
			in.refusals++
		} else {
			in.failures++
			if lat := in.latency(); ms > lat {
				in.observeLatency(ms)
			}
		}
		in.failure += failureAlpha * (1 - in.failure)
		if !stale {
			in.consecFail++
			// A refusal opens at once, and so does a failed trial; a
			// failure only when it is the FailStrikes-th in a row.
			if o.Kind == Refused || s.circuit == HalfOpen || in.consecFail >= p.cfg.FailStrikes {
				ev, fire = p.open(in, s, now, o, o.RetryAfter)
			}
		}
	}
	p.rescore(in)
	return ev, fire
}

// latency is the latency the score uses: the average, or the prior.
func (in *instance) latency() float64 {
	if in.measured {
		return in.latencyMS
	}
	return in.priorMS
}

func (in *instance) observeLatency(ms float64) {
	if !in.measured {
		in.measured, in.latencyMS = true, ms
		return
	}
	in.latencyMS += latencyAlpha * (ms - in.latencyMS)
}

// close closes the circuit; mu must be held for writing.
func (p *Pool) close(in *instance, s *slot, now time.Time, o Outcome) (Event, bool) {
	if s.circuit == Closed {
		return Event{}, false
	}
	from := s.circuit
	s.circuit, s.until, s.trialOut = Closed, 0, false
	return Event{Instance: in.url, From: from, To: Closed, At: now, Reason: reason(o)}, true
}

// open opens the circuit for retryAfter (capped), or for the doubling
// cooldown when retryAfter is 0; mu must be held for writing.
func (p *Pool) open(in *instance, s *slot, now time.Time, o Outcome, retryAfter time.Duration) (Event, bool) {
	in.trips++
	d := retryAfter
	if d <= 0 {
		d = p.cfg.Cooldown
		for i := 1; i < in.trips && d < p.cfg.MaxCooldown; i++ {
			d *= 2
		}
	}
	if d > p.cfg.MaxCooldown {
		d = p.cfg.MaxCooldown
	}
	from := s.circuit
	openFor(in, s, p.mono(now), d)
	return Event{Instance: in.url, From: from, To: Open, Cooldown: d, At: now, Reason: reason(o)}, true
}

// openFor opens s's circuit for d from nowM (monotonic) and makes the
// leases out now stale; mu must be held for writing.
func openFor(in *instance, s *slot, nowM int64, d time.Duration) {
	s.circuit, s.until, s.trialOut = Open, nowM+int64(d), false
	in.cooldown = d
	in.epoch++
}

func reason(o Outcome) Reason {
	if o.Reason != "" {
		return o.Reason
	}
	return Reason(o.Kind.String())
}
