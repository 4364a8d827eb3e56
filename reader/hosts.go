package reader

import (
	"math"
	"strings"
	"sync"
	"time"
)

// hosts keeps the reader polite to each host: at most inFlight reads at
// once and perMinute a minute (a token bucket with a burst of a fifth of
// a minute's, at least 1).
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

// acquire takes a slot for host at now, or says when to retry.
func (h *hosts) acquire(host string, now time.Time) (release func(), err error) {
	host = strings.ToLower(host)
	h.mu.Lock()
	defer h.mu.Unlock()
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
	if s.running >= h.inFlight {
		return nil, &BusyError{Host: host, RetryAfter: time.Second}
	}
	if s.tokens < 1 {
		wait := time.Duration((1 - s.tokens) / h.perSec * float64(time.Second))
		return nil, &BusyError{Host: host, RetryAfter: wait}
	}
	s.tokens--
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
