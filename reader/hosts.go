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
)

// hosts keeps the reader polite to each server: at most inFlight reads at
// once and perMinute requests a minute (a token bucket with a burst of a
// fifth of a minute's, at least 1), redirects followed included. A server
// is known by the address its name resolves to, so that four names for
// one server count as one.
//
// A read that finds its server busy waits for its turn, first come first
// served, until a deadline its caller sets; a turn that cannot come by
// then is refused at once (the minute's, whose time is known) or when the
// deadline passes (a slot's, which frees when a read ends), with a
// *BusyError that says when it comes.
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
	queue   []*slotWaiter // the reads waiting for one, first come first
	tokens  float64       // below 1: turns already promised to waiting reads
	last    time.Time
}

// slot is one read's hold on a server; until is when the read will have
// let go of it at the latest.
type slot struct{ until time.Time }

// slotWaiter is one read waiting for a slot: a read that ends hands its
// slot to the first one (s set, ready closed).
type slotWaiter struct {
	until time.Time
	s     *slot
	ready chan struct{}
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
	var wait time.Duration
	if s.tokens < 1 {
		wait = time.Duration(math.Ceil((1 - s.tokens) / h.perSec * float64(time.Second)))
	}
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

// acquire waits within t for key's turn (the server: its address): a
// token of its minute, then a slot, which the read lets go of by until
// at the latest. name is the host as the page's URL names it, for the
// error.
func (h *hosts) acquire(ctx context.Context, key, name string, t *turn, until time.Time) (release func(), err error) {
	key = strings.ToLower(key)
	if err := h.token(ctx, key, name, t); err != nil {
		return nil, err
	}
	now := h.clk.Now()
	h.mu.Lock()
	s := h.stateLocked(key, now)
	if len(s.running) < h.inFlight && len(s.queue) == 0 {
		sl := &slot{until: until}
		s.running = append(s.running, sl)
		h.mu.Unlock()
		return h.releaser(s, sl), nil
	}
	w := &slotWaiter{until: until, ready: make(chan struct{})}
	s.queue = append(s.queue, w)
	h.mu.Unlock()

	c, stop := h.clk.NewTimer(t.deadline.Sub(now))
	defer stop()
	select {
	case <-w.ready:
		t.waited += h.clk.Now().Sub(now)
		return h.releaser(s, w.s), nil
	case <-c:
	case <-ctx.Done():
	}
	end := h.clk.Now()
	t.waited += end.Sub(now)
	h.mu.Lock()
	if w.s != nil {
		// Handed over as the wait ended.
		h.mu.Unlock()
		rel := h.releaser(s, w.s)
		if ctx.Err() == nil {
			return rel, nil
		}
		rel()
		h.giveBack(key)
		return nil, cancelled(ctx, name)
	}
	s.queue = slices.DeleteFunc(s.queue, func(q *slotWaiter) bool { return q == w })
	free := until
	for _, r := range s.running {
		if r.until.Before(free) {
			free = r.until
		}
	}
	h.mu.Unlock()
	h.giveBack(key)
	if ctx.Err() != nil {
		return nil, cancelled(ctx, name)
	}
	return nil, &BusyError{Host: name, RetryAfter: free.Sub(end), Waited: t.waited}
}

// releaser lets go of sl once: its slot goes to the first read waiting.
func (h *hosts) releaser(s *hostState, sl *slot) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			i := slices.Index(s.running, sl)
			if i < 0 {
				return
			}
			if len(s.queue) == 0 {
				s.running = slices.Delete(s.running, i, i+1)
				return
			}
			w := s.queue[0]
			s.queue = slices.Delete(s.queue, 0, 1)
			w.s = &slot{until: w.until}
			s.running[i] = w.s
			close(w.ready)
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
