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
}

// minRetryAfter is the shortest Retry-After a refusal says: HTTP counts in
// whole seconds, and "0" would invite a client to come back at once.
const minRetryAfter = time.Second

// pollEvery bounds how long a waiter sleeps without a dispatch: leases the
// pool takes back by itself (their context ended) say nothing when they do.
const pollEvery = 250 * time.Millisecond

// earliest returns when the first instance s may use is expected to take
// a search (at or after now), and whether there is any such instance.
func (p *Proxy) earliest(frees []pool.Free, client string, tried map[string]bool, now time.Time) (time.Time, bool) {
	var at time.Time
	found := false
	_, share := p.fair.allowed(client, now) // when the client may take a public instance again
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
		if !found || t.Before(at) {
			at, found = t, true
		}
	}
	if found && at.Before(now) {
		at = now
	}
	return at, found
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
	at, any := p.earliest(p.candidates(), s.req.Client, s.tried, now)
	switch {
	case !any:
		s.why = "no_instance"
		return leased{}, false
	case at.After(s.deadline):
		s.why, s.retryAfter = "no_slot", retryAfter(at, now)
		p.metrics.queueRefused.Add(1)
		return leased{}, false
	}
	w := &waiter{s: s, since: now, got: make(chan grant, 1)}
	p.qmu.Lock()
	if len(p.queue.waiters) >= p.queue.max {
		p.qmu.Unlock()
		s.why, s.retryAfter = "queue_full", retryAfter(at, now)
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
		wake, stopWake := p.timer(min(max(at.Sub(p.now()), time.Millisecond), pollEvery))
		select {
		case g := <-w.got:
			stopWake()
			return s.granted(w, g)
		case <-wake:
			p.dispatch()
			at, _ = p.earliest(p.candidates(), s.req.Client, s.tried, p.now())
		case <-timeout:
			stopWake()
			if g, ok := p.leave(w); ok {
				return s.granted(w, g)
			}
			now := p.now()
			at, _ = p.earliest(p.candidates(), s.req.Client, s.tried, now)
			s.why, s.retryAfter = "deadline", retryAfter(at, now)
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

// dispatch gives free slots to the waiting searches, oldest first, and
// refuses at once those whose earliest slot now lies past their deadline.
// It is called whenever a slot may have freed.
func (p *Proxy) dispatch() {
	p.qmu.Lock()
	defer p.qmu.Unlock()
	if len(p.queue.waiters) == 0 {
		return
	}
	now := p.now()
	var frees []pool.Free // read once, only when a waiter could not be served
	kept := p.queue.waiters[:0]
	for _, w := range p.queue.waiters {
		if l, ok := p.checkout(w.s.ctx, w.s.req.Client, w.s.tried, now); ok {
			w.got <- grant{l: l, ok: true}
			continue
		}
		if frees == nil {
			frees = p.candidates()
		}
		if at, any := p.earliest(frees, w.s.req.Client, w.s.tried, now); !any || at.After(w.s.deadline) {
			w.got <- grant{retryAfter: retryAfter(at, now)}
			continue
		}
		kept = append(kept, w)
	}
	clear(p.queue.waiters[len(kept):])
	p.queue.waiters = kept
	p.metrics.queueDepth.Store(int64(len(kept)))
}
