package proxy

import (
	"context"
	"time"

	"github.com/searxgate/searxgate/pool"
)

// A search that finds no instance free *now* only because of in-flight
// caps, politeness windows, a half-open trial or a cooldown ending soon
// waits in the slot queue for the first slot that frees, within its
// deadline. It is refused at once, not after waiting, when the earliest
// slot lies past its deadline, with that time as its RetryAfter; and at
// once when the queue is full.
//
// The queue is served in order of arrival: whenever a slot may have freed
// (an attempt ended, a window or cooldown ran out) dispatch walks the
// waiters from the oldest and gives each the best instance it may use, so
// a waiter that tried an instance already can still be served by another
// while an older one keeps waiting for its own.

// slotQueue holds the searches waiting for a slot.
type slotQueue struct {
	max     int
	waiters []*waiter // oldest first; guarded by Proxy.qmu
}

// waiter is one search waiting for a slot.
type waiter struct {
	s     *search
	since time.Time
	got   chan grant // buffered: at most one grant is ever sent
}

// grant ends a wait: a lease, or a refusal with the time a slot is
// expected to free.
type grant struct {
	l          leased
	ok         bool
	retryAfter time.Duration
}

// leased is one checked-out instance with the function that ends its
// lease's context.
type leased struct {
	lease   *pool.Lease
	inst    string
	rec     *record // the instance's record as it was at checkout
	release context.CancelFunc
	takenAt time.Time // when its budget was taken
}

// minRetryAfter is the shortest Retry-After a refusal says: HTTP counts in
// whole seconds, and "0" would invite a client to come back at once.
const minRetryAfter = time.Second

// slot is when the first instance a search may use is expected to take
// it, and what the search should expect once there.
type slot struct {
	at time.Time // when it frees (at or after now)
	// done is when a search sent then is expected to be answered: at
	// plus the instance's usual latency. Past the deadline, the slot is
	// no use to the search.
	done time.Time
	// wake is the earliest time a window or a cooldown frees something
	// (zero when only busy instances are waited for: a lease coming back
	// wakes the waiters then, through dispatch).
	wake time.Time
}

// earliest returns the slot s may use first, and whether there is any
// instance s may use at all. Among the instances, the one expected to
// answer first counts.
func (p *Proxy) earliest(frees []pool.Free, client string, tried map[string]bool, now time.Time) (slot, bool) {
	var best slot
	found := false
	_, share := p.fair.Allowed(client, now) // when the client may take a public instance again
	for _, f := range frees {
		if tried[f.URL] {
			continue
		}
		t := f.At
		if pt := p.polite.FreeAt(f.URL, now); pt.After(t) {
			t = pt
		}
		if !f.Own && share.After(t) {
			t = share
		}
		t = maxTime(t, now)
		done := t.Add(f.Latency)
		if !found || done.Before(best.done) {
			best.at, best.done, found = t, done, true
		}
		if timed := t.After(now) || !f.Busy; timed && (best.wake.IsZero() || t.Before(best.wake)) {
			best.wake = t
		}
	}
	return best, found
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// candidates lists when each instance searxgate may search at all (its
// terms allow it) frees.
func (p *Proxy) candidates() []pool.Free {
	return p.pool.FreeAt(func(inst string) bool { return p.barred(p.recs.caps(inst)) })
}

// retryAfter is the Retry-After of a refusal whose earliest slot is at.
func retryAfter(at, now time.Time) time.Duration {
	return max(at.Sub(now), minRetryAfter)
}

// waitSlot waits for a slot for s, within s's deadline. It returns false
// with s.why and s.retryAfter set when none can be had in time.
func (s *search) waitSlot() (leased, bool) {
	p := s.p
	now := p.now()
	sl, any := p.earliest(p.candidates(), s.req.Client, s.tried, now)
	switch {
	case !any:
		s.why = "no_instance"
		return leased{}, false
	case sl.done.After(s.deadline):
		// Its answer could not come in time even if it waited: refused
		// now, not after waiting.
		s.why, s.retryAfter = "no_slot", retryAfter(sl.at, now)
		p.metrics.queueRefused.Add(1)
		return leased{}, false
	}
	w := &waiter{s: s, since: now, got: make(chan grant, 1)}
	p.qmu.Lock()
	if len(p.queue.waiters) >= p.queue.max {
		p.qmu.Unlock()
		s.why, s.retryAfter = "queue_full", retryAfter(sl.at, now)
		p.metrics.queueRefused.Add(1)
		return leased{}, false
	}
	p.queue.waiters = append(p.queue.waiters, w)
	p.metrics.queueDepth.Store(int64(len(p.queue.waiters)))
	p.qmu.Unlock()

	p.dispatch()
	timeout, stopTimeout := p.timer(s.deadline.Sub(now))
	defer stopTimeout()
	for {
		// Asleep until something changes: a lease coming back (dispatch
		// sends the grant), or the window or cooldown it waits for ending.
		var wake <-chan time.Time
		stopWake := func() {}
		if !sl.wake.IsZero() {
			wake, stopWake = p.timer(max(sl.wake.Sub(p.now()), time.Millisecond))
		}
		select {
		case g := <-w.got:
			stopWake()
			return s.granted(w, g)
		case <-wake:
			p.dispatch()
			sl, _ = p.earliest(p.candidates(), s.req.Client, s.tried, p.now())
		case <-timeout:
			stopWake()
			if g, ok := p.leave(w); ok {
				return s.granted(w, g)
			}
			now := p.now()
			sl, _ = p.earliest(p.candidates(), s.req.Client, s.tried, now)
			s.why, s.retryAfter = "deadline", retryAfter(sl.at, now)
			p.metrics.queueRefused.Add(1)
			return leased{}, false
		case <-s.ctx.Done():
			stopWake()
			if g, ok := p.leave(w); ok && g.ok {
				p.giveBack(g.l.lease, g.l.release)
			}
			s.why = "cancelled"
			return leased{}, false
		}
	}
}

// inTime reports whether a search sent now on l can be answered by
// deadline, as far as its instance's latency average says (with a
// margin of a tenth).
func (p *Proxy) inTime(l leased, now, deadline time.Time) (need time.Duration, ok bool) {
	lat, measured := p.usual(l.inst)
	need = lat + lat/10
	return need, !measured || !now.Add(need).After(deadline)
}

// usual is what a search of inst usually takes (its latency average), and
// whether that was measured at all (a prior is only a guess).
func (p *Proxy) usual(inst string) (time.Duration, bool) {
	st := p.pool.Stats(inst)
	if !st.Measured {
		return 0, false
	}
	return time.Duration(st.LatencyMS * float64(time.Millisecond)), true
}

// granted ends w's wait with g.
func (s *search) granted(w *waiter, g grant) (leased, bool) {
	if !g.ok {
		s.why, s.retryAfter = "no_slot", g.retryAfter
		s.p.metrics.queueRefused.Add(1)
		return leased{}, false
	}
	s.p.metrics.queueWait.observe(s.p.now().Sub(w.since))
	return g.l, true
}

// leave takes w out of the queue; it returns the grant dispatch sent w
// before it could leave, if any.
func (p *Proxy) leave(w *waiter) (grant, bool) {
	p.qmu.Lock()
	for i, x := range p.queue.waiters {
		if x == w {
			p.queue.waiters = append(p.queue.waiters[:i], p.queue.waiters[i+1:]...)
			break
		}
	}
	p.metrics.queueDepth.Store(int64(len(p.queue.waiters)))
	p.qmu.Unlock()
	select {
	case g := <-w.got:
		return g, true
	default:
		return grant{}, false
	}
}

// dispatch gives free slots to the waiting searches and refuses at once
// those whose earliest slot now lies past their deadline. It is called
// whenever a slot may have freed. Clients take turns: a first pass serves
// the oldest waiter of each client, a second the others in order of
// arrival, so one client's many waiters do not take every slot that
// frees while another client's one waits behind them.
func (p *Proxy) dispatch() {
	p.qmu.Lock()
	defer p.qmu.Unlock()
	if len(p.queue.waiters) == 0 {
		return
	}
	now := p.now()
	var frees []pool.Free // read once, only when a waiter could not be served
	var turn map[string]bool
	if len(p.queue.waiters) > 1 {
		turn = make(map[string]bool, len(p.queue.waiters))
	}
	done := make([]bool, len(p.queue.waiters))
	for pass := range 2 {
		for i, w := range p.queue.waiters {
			if done[i] || (pass == 0 && turn != nil && turn[w.s.req.Client]) {
				continue
			}
			if turn != nil {
				turn[w.s.req.Client] = true
			}
			done[i] = p.serve(w, now, &frees)
		}
		if turn == nil {
			break
		}
	}
	kept := p.queue.waiters[:0]
	for i, w := range p.queue.waiters {
		if !done[i] {
			kept = append(kept, w)
		}
	}
	clear(p.queue.waiters[len(kept):])
	p.queue.waiters = kept
	p.metrics.queueDepth.Store(int64(len(kept)))
}

// serve gives w a slot, or refuses it when none can come in time; it
// reports whether w's wait ended. qmu is held.
func (p *Proxy) serve(w *waiter, now time.Time, frees *[]pool.Free) bool {
	if l, ok := p.checkout(w.s.ctx, w.s.req.Client, w.s.tried, now, false); ok {
		need, ok := p.inTime(l, now, w.s.deadline)
		if ok {
			w.got <- grant{l: l, ok: true}
			return true
		}
		// A slot it cannot use: its answer would come after its
		// deadline. Refused now, not sent to be cut and blamed.
		p.giveBack(l.lease, l.release)
		w.got <- grant{retryAfter: retryAfter(now.Add(need), now)}
		return true
	}
	if *frees == nil {
		*frees = p.candidates()
	}
	if sl, any := p.earliest(*frees, w.s.req.Client, w.s.tried, now); !any || sl.done.After(w.s.deadline) {
		w.got <- grant{retryAfter: retryAfter(sl.at, now)}
		return true
	}
	return false
}
