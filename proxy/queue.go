package proxy

import (
	"context"
	"time"

	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy/instance"
	"github.com/searxgate/searxgate/proxy/polite"
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
// while an older one keeps waiting for its own. The queue itself (its
// bound, the clients' turns, the earliest-slot arithmetic) is
// polite.Queue and polite.Slot; what serving a search means is here.

// waiter is one search waiting for a slot, in Proxy.queue.
type waiter = polite.Waiter[waiting]

// waiting is what the queue keeps of a waiting search.
type waiting struct {
	s   *search
	got chan grant // buffered: at most one grant is ever sent
}

// grant ends a wait: a lease, or a refusal with the time a slot is
// expected to free (and whether its client's share is why: polite.Slot
// bare in earliest).
type grant struct {
	l          leased
	ok         bool
	share      bool
	retryAfter time.Duration
}

// leased is one checked-out instance with the function that ends its
// lease's context.
type leased struct {
	lease   *pool.Lease
	inst    string
	rec     *instance.Record // the instance's record as it was at checkout
	release context.CancelFunc
	takenAt time.Time // when its budget was taken
	// queued: its search waited in the slot queue before it was sent, so
	// a deadline that cuts it is searxgate's (blame.go).
	queued bool
}

// earliest returns the slot s may use first, and whether there is any
// instance s may use at all. Among the instances, the one expected to
// answer first counts. bare is the slot it would have but for its
// client's share of the public budget: when bare is in time and the
// slot is not, the share is what refuses it.
func (p *Proxy) earliest(frees []pool.Free, client string, tried map[string]bool, now time.Time) (best polite.Slot, any bool, bare polite.Slot) {
	_, share := p.fair.Allowed(client, now) // when the client may take a public instance again
	for _, f := range frees {
		if tried[f.URL] {
			continue
		}
		t := f.At
		if pt := p.polite.FreeAt(f.URL, now); pt.After(t) {
			t = pt
		}
		bare.Offer(t, now, f.Latency, f.Busy)
		if !f.Own && share.After(t) {
			t = share
		}
		best.Offer(t, now, f.Latency, f.Busy)
	}
	return best, best.Found(), bare
}

// late says why s gets no slot in time: its client's share when the slot
// sl is late and without the share it would be in time (bare), no_slot
// otherwise; and counts it.
func (s *search) late(sl, bare polite.Slot) Stop {
	if byShare(sl, bare, s.deadline) {
		s.p.metrics.shareRefused.Add(1)
		return StopShare
	}
	s.p.metrics.queueRefused.Add(1)
	return StopNoSlot
}

// byShare reports whether the client's share is what makes sl come after
// deadline (bare: the slot but for the share).
func byShare(sl, bare polite.Slot, deadline time.Time) bool {
	return sl.Done.After(deadline) && bare.Found() && !bare.Done.After(deadline)
}

// waitSlot waits for a slot for s, within s's deadline. It returns false
// with s.why and s.retryAfter set when none can be had in time.
func (s *search) waitSlot() (leased, bool) {
	p := s.p
	now := p.now()
	sl, any, bare := p.earliest(p.recs.Candidates(), s.req.Client, s.tried, now)
	switch {
	case !any:
		s.why = StopNoInstance
		return leased{}, false
	case sl.Done.After(s.deadline):
		// Its answer could not come in time even if it waited: refused
		// now, not after waiting.
		s.why, s.retryAfter = s.late(sl, bare), polite.RetryAfter(sl.At, now)
		return leased{}, false
	}
	w := &waiter{Value: waiting{s: s, got: make(chan grant, 1)}, Client: s.req.Client, Since: now}
	n, ok := p.queue.Join(w)
	p.metrics.queueDepth.Store(int64(n))
	if !ok {
		s.why, s.retryAfter = StopQueueFull, polite.RetryAfter(sl.At, now)
		p.metrics.queueRefused.Add(1)
		return leased{}, false
	}

	p.dispatch()
	timeout, stopTimeout := p.timer(s.deadline.Sub(now))
	defer stopTimeout()
	for {
		// Asleep until something changes: a lease coming back (dispatch
		// sends the grant), or the window or cooldown it waits for ending.
		var wake <-chan time.Time
		stopWake := noStop
		if !sl.Wake.IsZero() {
			wake, stopWake = p.timer(max(sl.Wake.Sub(p.now()), time.Millisecond))
		}
		select {
		case g := <-w.Value.got:
			stopWake()
			return s.granted(w, g)
		case <-wake:
			p.dispatch()
			sl, _, _ = p.earliest(p.recs.Candidates(), s.req.Client, s.tried, p.now())
		case <-timeout:
			stopWake()
			if g, ok := p.leave(w); ok {
				return s.granted(w, g)
			}
			now := p.now()
			sl, _, bare := p.earliest(p.recs.Candidates(), s.req.Client, s.tried, now)
			s.why, s.retryAfter = StopDeadline, polite.RetryAfter(sl.At, now)
			if s.late(sl, bare) == StopShare {
				s.why = StopShare
			}
			return leased{}, false
		case <-s.ctx.Done():
			stopWake()
			if g, ok := p.leave(w); ok && g.ok {
				p.giveBack(g.l.lease, g.l.release)
			}
			s.why = StopCancelled
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
	return p.pool.Latency(inst)
}

// granted ends w's wait with g.
func (s *search) granted(w *waiter, g grant) (leased, bool) {
	if !g.ok {
		s.why, s.retryAfter = StopNoSlot, g.retryAfter
		if g.share {
			s.why = StopShare
			s.p.metrics.shareRefused.Add(1)
		} else {
			s.p.metrics.queueRefused.Add(1)
		}
		return leased{}, false
	}
	s.p.metrics.queueWait.observe(s.p.now().Sub(w.Since))
	s.queued = true
	return g.l, true
}

// leave takes w out of the queue; it returns the grant dispatch sent w
// before it could leave, if any.
func (p *Proxy) leave(w *waiter) (grant, bool) {
	p.metrics.queueDepth.Store(int64(p.queue.Leave(w)))
	select {
	case g := <-w.Value.got:
		return g, true
	default:
		return grant{}, false
	}
}

// dispatch gives free slots to the waiting searches and refuses at once
// those whose earliest slot now lies past their deadline. It is called
// whenever a slot may have freed. Clients take turns (polite.Queue.Serve).
//
// What is known in memory is decided under the queue's lock (serve); a
// slot the state shared with other replicas must confirm is asked for
// after, its waiter set aside in its place (confirmAside), so that Redis
// never holds the queue. A waiter the shared budget refused waits on in
// its place, and the queue is served again (at most maxLost rounds, as a
// checkout tries instances): the refused lease freed a slot, and the
// refused instance is held, so the waiter gets the next slot.
func (p *Proxy) dispatch() {
	for range maxLost {
		refused := false
		for _, a := range p.serveQueue() {
			if !p.confirmAside(a) {
				refused = true
			}
		}
		if !refused {
			return
		}
	}
}

// aside is a waiter served a slot that the shared state must confirm.
type aside struct {
	w *waiter
	l leased
}

// serveQueue serves the queue once; it returns the waiters set aside.
func (p *Proxy) serveQueue() []aside {
	var now time.Time
	var frees []pool.Free // read once, only when a waiter could not be served
	var asides []aside
	n := p.queue.Serve(func(w *waiter) polite.Turn {
		if now.IsZero() {
			now = p.now()
		}
		return p.serve(w, now, &frees, &asides)
	})
	p.metrics.queueDepth.Store(int64(n))
	return asides
}

// serve gives w a slot, or refuses it when none can come in time. The
// queue's lock is held: a slot the shared state must confirm is added to
// asides, and w set aside (polite.Aside) until it is.
func (p *Proxy) serve(w *waiter, now time.Time, frees *[]pool.Free, asides *[]aside) polite.Turn {
	s := w.Value.s
	var lost lostSet
	if l, ok := p.reserve(s.ctx, s.req.Client, s.tried, now, false, &lost); ok {
		need, ok := p.inTime(l, now, s.deadline)
		switch {
		case !ok:
			// A slot it cannot use: its answer would come after its
			// deadline. Refused now, not sent to be cut and blamed.
			p.giveBack(l.lease, l.release)
			w.Value.got <- grant{retryAfter: polite.RetryAfter(now.Add(need), now)}
			return polite.Done
		case p.shares(l):
			*asides = append(*asides, aside{w: w, l: l})
			return polite.Aside
		}
		if p.confirm(s.ctx, l, s.req.Client) { // nothing shared: in memory
			w.Value.got <- grant{l: l, ok: true}
			return polite.Done
		}
		// Its share went to another of its searches: it waits for the
		// share as for a slot, below.
	}
	if *frees == nil {
		*frees = p.recs.Candidates()
	}
	if sl, any, bare := p.earliest(*frees, s.req.Client, s.tried, now); !any || sl.Done.After(s.deadline) {
		w.Value.got <- grant{retryAfter: polite.RetryAfter(sl.At, now), share: any && byShare(sl, bare, s.deadline)}
		return polite.Done
	}
	return polite.Wait
}

// confirmAside asks the shared state for the slot a was served, outside
// the queue's lock, and ends a's ask: the grant when it said yes; when it
// said no (the lease and the local budget's slot are given back), a's
// waiter waits on in its place. A slot confirmed for a search that left
// meanwhile is given back. It reports false when a's waiter was refused
// and waits on.
func (p *Proxy) confirmAside(a aside) (settled bool) {
	s := a.w.Value.s
	ok := p.confirm(s.ctx, a.l, s.req.Client)
	left := false
	n := p.queue.Settle(a.w, func(gone bool) bool {
		left = gone
		if ok && !gone {
			a.w.Value.got <- grant{l: a.l, ok: true}
		}
		return ok
	})
	p.metrics.queueDepth.Store(int64(n))
	if ok && left {
		p.giveBack(a.l.lease, a.l.release) // its search went away while the slot was asked for
	}
	return ok || left
}
