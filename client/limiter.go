package client

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Limiter is a token bucket per client key (FromAddr, FromAPIKey) for
// what can reach an instance: the proxy asks it (Admit) for each search
// that would, never for an answer from the cache or a search that joins
// one in flight; the reader for each page it fetches; the faces for
// suggestions. So searxgate can never be used to flood the instances
// behind it, whoever reaches it, and a client repeating a search costs
// nothing. The default rate is one no person or agent meets. A key is
// taken as made: the limiter never reads it again.
type Limiter struct {
	perSec float64 // tokens added per second
	burst  float64
	// capacity, when set, is what the public pool serves a minute and at
	// once: no client's rate or burst goes past it (WithCapacity).
	capacity func() (perMinute, burst float64)

	mu      sync.Mutex // guards buckets and swept
	buckets map[string]*bucket
	swept   time.Time

	admits atomic.Int64 // times the proxy asked (Admit)
}

// Admits counts the times Admit was asked (tests read it).
func (l *Limiter) Admits() int64 {
	if l == nil {
		return 0
	}
	return l.admits.Load()
}

type bucket struct {
	tokens float64
	last   time.Time
}

// maxClients bounds the buckets kept; past it, idle ones are dropped first
// and, if there are still too many, the least recently seen tenth.
const maxClients = 100_000

// NewLimiter is a limiter of perMinute requests a minute per client, in
// bursts of up to burst; nil (no limit) when perMinute ≤ 0. It keeps no
// clock: every call is given the time.
func NewLimiter(perMinute, burst int) *Limiter {
	if perMinute <= 0 {
		return nil
	}
	return &Limiter{
		perSec:  float64(perMinute) / 60,
		burst:   float64(max(burst, 1)),
		buckets: make(map[string]*bucket),
	}
}

// WithCapacity bounds every client's rate and burst by what the public
// pool serves (capacity: searches a minute, sustained, and at once; 0 =
// none), so that the default limit follows the pool: on a small pool no
// client may ask more than it can serve. It returns l (nil stays nil).
func (l *Limiter) WithCapacity(capacity func() (perMinute, burst float64)) *Limiter {
	if l != nil {
		l.capacity = capacity
	}
	return l
}

// rates is the refill per second and the burst at this moment.
func (l *Limiter) rates() (perSec, burst float64) {
	perSec, burst = l.perSec, l.burst
	if l.capacity != nil {
		if c, b := l.capacity(); c > 0 {
			perSec = math.Min(perSec, c/60)
			burst = math.Min(burst, math.Max(1, b))
		}
	}
	return perSec, burst
}

// Admit is the limiter as proxy.Config.Admit (and the reader's and the
// MCP face's): it takes a token for the client key at now, counted in
// Admits; nil when the limit is off.
func (l *Limiter) Admit() func(key string, now time.Time) (bool, time.Duration) {
	if l == nil {
		return nil
	}
	return func(key string, now time.Time) (bool, time.Duration) {
		l.admits.Add(1)
		return l.Allow(key, now)
	}
}

// Allow takes a token for the client key at now and reports whether there
// was one, and if not, how long until there is. It is Admit without the
// count, for the HTTP face's own requests (/autocompleter).
func (l *Limiter) Allow(key string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, perSec := l.refilled(key, now)
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	wait := time.Duration((1 - b.tokens) / perSec * float64(time.Second))
	return false, wait
}

// refilled is key's bucket refilled to now, and the refill per second,
// once the buckets are swept when due; l.mu is held.
func (l *Limiter) refilled(key string, now time.Time) (*bucket, float64) {
	if len(l.buckets) >= maxClients || now.Sub(l.swept) > time.Minute {
		l.sweep(now)
	}
	perSec, burst := l.rates()
	b, ok := l.buckets[key]
	if !ok {
		b = &bucket{tokens: burst, last: now}
		l.buckets[key] = b
	}
	if d := now.Sub(b.last); d > 0 { // a clock read before the last one adds nothing
		b.tokens = math.Min(burst, b.tokens+d.Seconds()*perSec)
		b.last = now
	}
	b.tokens = math.Min(b.tokens, burst) // the pool shrank
	return b, perSec
}

// sweep drops buckets that have refilled (idle long enough to be full,
// a debt of AdmitExtra's paid).
func (l *Limiter) sweep(now time.Time) {
	l.swept = now
	for a, b := range l.buckets {
		if now.Sub(b.last).Seconds()*l.perSec >= l.burst-b.tokens {
			delete(l.buckets, a)
		}
	}
	if len(l.buckets) >= maxClients {
		l.evictOldest(len(l.buckets) / 10)
	}
}

// evictOldest drops the n buckets seen least recently: a flood of new
// addresses evicts the quietest clients, never everyone's count at once
// (which would hand every client a fresh burst).
func (l *Limiter) evictOldest(n int) {
	type seen struct {
		key  string
		last time.Time
	}
	all := make([]seen, 0, len(l.buckets))
	for k, b := range l.buckets {
		all = append(all, seen{k, b.last})
	}
	slices.SortFunc(all, func(a, b seen) int { return a.last.Compare(b.last) })
	for _, s := range all[:min(n, len(all))] {
		delete(l.buckets, s.key)
	}
}
