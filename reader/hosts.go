package reader

import (
	"math"
	"strings"
	"sync"
	"time"
)

// hosts keeps the reader polite to each server: at most inFlight reads at
// once and perMinute requests a minute (a token bucket with a burst of a
// fifth of a minute's, at least 1), redirects followed included. A server
// is known by the address its name resolves to, so that four names for
// one server count as one.
type hosts struct {
	inFlight int
	perSec   float64
	burst    float64

	mu     sync.Mutex // guards byHost
	byHost map[string]*hostState
}

type hostState struct {
	running int
	tokens  float64
	last    time.Time
}

// maxHosts bounds the hosts remembered; past it the idle ones are dropped.
const maxHosts = 10_000

func newHosts(inFlight, perMinute int) *hosts {
	return &hosts{inFlight: inFlight, perSec: float64(perMinute) / 60,
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

// take takes one token of s, or says when one comes; h.mu is held.
func (h *hosts) take(s *hostState, name string) error {
	if s.tokens < 1 {
		wait := time.Duration((1 - s.tokens) / h.perSec * float64(time.Second))
		return &BusyError{Host: name, RetryAfter: wait}
	}
	s.tokens--
	return nil
}

// charge counts one more request to key (a redirect's next hop) against
// its minute, without a slot of its own: the read that followed the
// redirect holds one already.
func (h *hosts) charge(key, name string, now time.Time) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.take(h.stateLocked(strings.ToLower(key), now), name)
}

// acquire takes a slot for key (the server: its address) at now, or says
// when to retry; name is the host as the page's URL names it, for the
// error.
func (h *hosts) acquire(key, name string, now time.Time) (release func(), err error) {
	key = strings.ToLower(key)
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.stateLocked(key, now)
	if s.running >= h.inFlight {
		return nil, &BusyError{Host: name, RetryAfter: time.Second}
	}
	if err := h.take(s, name); err != nil {
		return nil, err
	}
	s.running++
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			s.running--
			h.mu.Unlock()
		})
	}, nil
}

// sweep drops hosts with nothing running and a full bucket.
func (h *hosts) sweep(now time.Time) {
	full := time.Duration(h.burst / h.perSec * float64(time.Second))
	for k, s := range h.byHost {
		if s.running == 0 && now.Sub(s.last) >= full {
			delete(h.byHost, k)
		}
	}
}
