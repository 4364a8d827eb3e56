package reader

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/searxgate/searxgate/internal/clock"
	"github.com/searxgate/searxgate/reader/internal/fair"
)

// hosts keeps the reader polite to each server: at most inFlight reads at
// once and perMinute requests a minute (a token bucket with a burst of a
// fifth of a minute's, at least 1), redirects followed included. A server
// is known by the address its name resolves to, so that four names for
// one server count as one.
//
// A read's turn is a slot and a request of the minute together. Reads
// that find their server busy wait for a turn, shared among their
// clients as the PDF workers are (package fair): the client holding the
// fewest slots of that server first, then the one served longest ago,
// then first come. So one client keeping a server busy delays another's
// read by one read's time, not by its whole queue. A read waits until a
// deadline its caller sets; a turn that cannot come by then is refused at
// once (the minute's, when a slot is free: its time is known) or when the
// deadline passes, with a *BusyError that says when it comes.
type hosts struct {
	clk      clock.Clock
	inFlight int
	perSec   float64
	burst    float64

	mu     sync.Mutex // guards byHost and all it holds
	byHost map[string]*hostState
}

type hostState struct {
	running []*slot       // the reads holding a slot
	queue   []*slotWaiter // the reads waiting for a turn, in the order they came
	order   fair.Order    // whose read is next
	tokens  float64       // below 1: requests already promised to redirects
	last    time.Time
}

// slot is one read's hold on a server; until is when the read will have
// let go of it at the latest.
type slot struct {
	client string
	until  time.Time
}

// slotWaiter is one read waiting for its turn: the turn given, s is set
// and ready closed.
type slotWaiter struct {
	client string
	until  time.Time
	s      *slot
	ready  chan struct{}
}

// maxHosts bounds the hosts remembered; past it the idle ones are dropped.
const maxHosts = 10_000

func newHosts(clk clock.Clock, inFlight, perMinute int) *hosts {
	return &hosts{clk: clock.Or(clk), inFlight: inFlight, perSec: float64(perMinute) / 60,
		burst: math.Max(1, float64(perMinute)/5), byHost: map[string]*hostState{}}
}

// stateLocked returns host's state, its tokens refilled to now; h.mu is
// held.
func (h *hosts) stateLocked(host string, now time.Time) *hostState {
	if len(h.byHost) >= maxHosts {
		h.sweep(now)
	}
	s, ok := h.byHost[host]
	if !ok {
		s = &hostState{tokens: h.burst, last: now}
		h.byHost[host] = s
	}
	if d := now.Sub(s.last); d > 0 {
		s.tokens = math.Min(h.burst, s.tokens+d.Seconds()*h.perSec)
		s.last = now
	}
	return s
}

// turn is one read's wait for its server: the latest it waits until (half
// its Timeout, or its caller's deadline when sooner), and how long it has
// waited so far (for its first request and the redirects it followed).
type turn struct {
	deadline time.Time
	waited   time.Duration
}

type turnKey struct{}

// turnOf is the read's turn that ctx carries, nil when none.
func turnOf(ctx context.Context) *turn {
	t, _ := ctx.Value(turnKey{}).(*turn)
	return t
}

// newTurn is the wait of a read starting at now: at most maxWait, and
// never past ctx's deadline.
func newTurn(ctx context.Context, now time.Time, maxWait time.Duration) *turn {
	t := &turn{deadline: now.Add(maxWait)}
	if d, ok := ctx.Deadline(); ok && d.Before(t.deadline) {
		t.deadline = d
	}
	return t
}

// token takes one token of key's minute, waiting for it within t; name is
// the host as the URL names it, for the error.
func (h *hosts) token(ctx context.Context, key, name string, t *turn) error {
	if ctx.Err() != nil {
		return cancelled(ctx, name)
	}
	now := h.clk.Now()
	h.mu.Lock()
	s := h.stateLocked(key, now)
	wait := h.nextToken(s)
	if wait > 0 && now.Add(wait).After(t.deadline) {
		h.mu.Unlock()
		return &BusyError{Host: name, RetryAfter: wait, Waited: t.waited}
	}
	s.tokens-- // promised: the reads after this one wait longer
	h.mu.Unlock()
	if wait == 0 {
		return nil
	}
	c, stop := h.clk.NewTimer(wait)
	defer stop()
	select {
	case <-c:
		t.waited += wait
		return nil
	case <-ctx.Done():
		h.giveBack(key)
		t.waited += h.clk.Now().Sub(now)
		return cancelled(ctx, name)
	}
}

// giveBack returns a promised token that was not used.
func (h *hosts) giveBack(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.stateLocked(key, h.clk.Now())
	s.tokens = math.Min(h.burst, s.tokens+1)
}

func cancelled(ctx context.Context, name string) error {
	return fmt.Errorf("%w: the read gave up waiting for %s's turn (%w)", ErrTimeout, name, context.Cause(ctx))
}

// charge counts one more request to key (a redirect's next hop) against
// its minute, waiting for it within the read's turn, without a slot of
// its own: the read that followed the redirect holds one already.
func (h *hosts) charge(ctx context.Context, key, name string) error {
	t := turnOf(ctx)
	if t == nil {
		t = &turn{deadline: h.clk.Now()}
	}
	return h.token(ctx, strings.ToLower(key), name, t)
}

// acquire waits within t for key's turn (the server: its address) for
// client: a slot and a request of its minute, which the read lets go of
// by until at the latest. name is the host as the page's URL names it,
// for the error.
func (h *hosts) acquire(ctx context.Context, key, name, client string, t *turn, until time.Time) (release func(), err error) {
	if ctx.Err() != nil {
		return nil, cancelled(ctx, name)
	}
	key = strings.ToLower(key)
	start := h.clk.Now()
	w := &slotWaiter{client: client, until: until, ready: make(chan struct{})}
	h.mu.Lock()
	s := h.stateLocked(key, start)
	s.queue = append(s.queue, w)
	h.dispatchLocked(s)
	if w.s != nil {
		h.mu.Unlock()
		return h.releaser(key, s, w.s), nil
	}
	if next := h.nextToken(s); len(s.running) < h.inFlight && start.Add(next).After(t.deadline) {
		// A slot is free and the minute's turn alone comes too late.
		h.leaveLocked(s, w)
		h.mu.Unlock()
		return nil, &BusyError{Host: name, RetryAfter: next, Waited: t.waited}
	}
	h.mu.Unlock()
	if h.wait(ctx, key, s, w, t.deadline) {
		t.waited += h.clk.Now().Sub(start)
		return h.releaser(key, s, w.s), nil
	}
	end := h.clk.Now()
	t.waited += end.Sub(start)
	h.mu.Lock()
	if w.s != nil {
		// Given as the wait ended.
		h.mu.Unlock()
		rel := h.releaser(key, s, w.s)
		if ctx.Err() == nil {
			return rel, nil
		}
		rel()
		return nil, cancelled(ctx, name)
	}
	h.leaveLocked(s, w)
	retry := h.nextToken(s)
	if len(s.running) >= h.inFlight {
		free := until
		for _, r := range s.running {
			if r.until.Before(free) {
				free = r.until
			}
		}
		retry = free.Sub(end)
	}
	h.mu.Unlock()
	if ctx.Err() != nil {
		return nil, cancelled(ctx, name)
	}
	return nil, &BusyError{Host: name, RetryAfter: retry, Waited: t.waited}
}

// wait waits for w's turn until deadline, waking when the minute has a
// request again to give it out; it reports whether the turn came.
func (h *hosts) wait(ctx context.Context, key string, s *hostState, w *slotWaiter, deadline time.Time) bool {
	for {
		now := h.clk.Now()
		h.mu.Lock()
		h.stateLocked(key, now)
		h.dispatchLocked(s)
		wake := deadline.Sub(now)
		if next := h.nextToken(s); next > 0 && next < wake {
			// The minute gives out its next request: a slot freed
			// before then could not be given.
			wake = next
		}
		h.mu.Unlock()
		c, stop := h.clk.NewTimer(wake)
		select {
		case <-w.ready:
			stop()
			return true
		case <-ctx.Done():
			stop()
			return false
		case <-c:
			if wake == deadline.Sub(now) {
				return false
			}
		}
	}
}

// nextToken is how long until key's minute has a request to give; s is
// refilled and h.mu held.
func (h *hosts) nextToken(s *hostState) time.Duration {
	if s.tokens >= 1 {
		return 0
	}
	return time.Duration(math.Ceil((1 - s.tokens) / h.perSec * float64(time.Second)))
}

// dispatchLocked gives free slots, while the minute has requests, to the
// reads next in order; h.mu is held and s refilled.
func (h *hosts) dispatchLocked(s *hostState) {
	for len(s.queue) > 0 && len(s.running) < h.inFlight && s.tokens >= 1 {
		i := s.order.Pick(len(s.queue), func(i int) string { return s.queue[i].client }, func(c string) int {
			n := 0
			for _, r := range s.running {
				if r.client == c {
					n++
				}
			}
			return n
		})
		w := s.queue[i]
		s.queue = slices.Delete(s.queue, i, i+1)
		s.tokens--
		w.s = &slot{client: w.client, until: w.until}
		s.running = append(s.running, w.s)
		s.order.Served(w.client)
		close(w.ready)
	}
}

// leaveLocked takes w out of the queue; h.mu is held.
func (h *hosts) leaveLocked(s *hostState, w *slotWaiter) {
	s.queue = slices.DeleteFunc(s.queue, func(q *slotWaiter) bool { return q == w })
	h.forgetLocked(s)
}

// forgetLocked prunes s's order of the clients that hold and wait for
// nothing there; h.mu is held.
func (h *hosts) forgetLocked(s *hostState) {
	s.order.Prune(func(c string) bool {
		return slices.ContainsFunc(s.running, func(r *slot) bool { return r.client == c }) ||
			slices.ContainsFunc(s.queue, func(w *slotWaiter) bool { return w.client == c })
	})
}

// releaser lets go of sl once: its slot goes to the read next in order.
func (h *hosts) releaser(key string, s *hostState, sl *slot) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			i := slices.Index(s.running, sl)
			if i < 0 {
				return
			}
			s.running = slices.Delete(s.running, i, i+1)
			h.forgetLocked(s)
			h.stateLocked(key, h.clk.Now())
			h.dispatchLocked(s)
		})
	}
}

// sweep drops hosts with nothing running or waiting and a full bucket.
func (h *hosts) sweep(now time.Time) {
	full := time.Duration(h.burst / h.perSec * float64(time.Second))
	for k, s := range h.byHost {
		if len(s.running) == 0 && len(s.queue) == 0 && now.Sub(s.last) >= full {
			delete(h.byHost, k)
		}
	}
}
