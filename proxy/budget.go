package proxy

import (
	"sync"
	"time"
)

// Window is one rate limit: at most Max events in any span of Per.
type Window struct {
	Max int
	Per time.Duration
}

// Politeness keeps every instance under searxgate's own budget, set below
// SearXNG's limiter: by default at most 10 searches in 20 s and 100 in
// 10 min per instance. An instance out of budget is skipped, never waited
// on.
//
// Each instance keeps the times of its last N searches in a ring, N being
// the largest Max: a window allows one more search when the Max-th most
// recent one is older than its span. Checking and taking are O(windows).
type Politeness struct {
	base    time.Time // times are kept as offsets from it: monotonic when the clock is time.Now
	windows []Window
	size    int // ring size: the largest Max

	mu   sync.Mutex // guards ring
	ring map[string]*timeRing
}

// timeRing holds an instance's most recent search times. It grows as the
// instance is used, up to the ring size, so an instance searched rarely
// costs little.
type timeRing struct {
	times []int64 // nanoseconds since Politeness.base; once full, times[(next-1) mod size] is the newest
	next  int
	count int
}

// at returns the k-th most recent time (k = 1 is the newest).
func (r *timeRing) at(k, size int) int64 {
	if len(r.times) < size { // still growing: in order, newest last
		return r.times[len(r.times)-k]
	}
	return r.times[(r.next-k+size)%size]
}

// MaxWindow is the largest Max a Window may have: each instance keeps up to
// that many search times.
const MaxWindow = 10_000

// NewPoliteness returns a budget for the given windows; windows with a
// non-positive Max or Per are ignored (no limit), and Max is capped at
// MaxWindow.
func NewPoliteness(windows ...Window) *Politeness {
	p := &Politeness{base: time.Now(), ring: make(map[string]*timeRing)}
	for _, w := range windows {
		if w.Max > 0 && w.Per > 0 {
			w.Max = min(w.Max, MaxWindow)
			p.windows = append(p.windows, w)
			p.size = max(p.size, w.Max)
		}
	}
	return p
}

// nanos is now as an offset from p.base. With a clock reading time.Now,
// Sub uses the monotonic clock: a wall-clock step (NTP, a resumed VM)
// neither frees nor blocks a window.
func (p *Politeness) nanos(now time.Time) int64 { return int64(now.Sub(p.base)) }

func (b *ExtraBudget) nanos(now time.Time) int64 { return int64(now.Sub(b.base)) }

// Allowed reports whether one more search to instance at now stays within
// every window. It reserves nothing; Take does.
func (p *Politeness) Allowed(instance string, now time.Time) bool {
	if p == nil || p.size == 0 {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.allowedLocked(p.ring[instance], p.nanos(now))
}

// Take records one search to instance at now if it is allowed, and reports
// whether it was.
func (p *Politeness) Take(instance string, now time.Time) bool {
	if p == nil || p.size == 0 {
		return true
	}
	t := p.nanos(now)
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.ring[instance]
	if !p.allowedLocked(r, t) {
		return false
	}
	if r == nil {
		r = &timeRing{}
		p.ring[instance] = r
	}
	if len(r.times) < p.size {
		r.times = append(r.times, t)
	} else {
		r.times[r.next] = t
	}
	r.next = (r.next + 1) % p.size
	r.count = min(r.count+1, p.size)
	return true
}

func (p *Politeness) allowedLocked(r *timeRing, now int64) bool {
	if r == nil {
		return true
	}
	for _, w := range p.windows {
		if r.count < w.Max {
			continue
		}
		// The w.Max-th most recent search.
		if now-r.at(w.Max, p.size) < int64(w.Per) {
			return false
		}
	}
	return true
}

// Used reports how many searches instance made within the last per, for the
// status page.
func (p *Politeness) Used(instance string, now time.Time, per time.Duration) int {
	if p == nil || p.size == 0 {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.ring[instance]
	if r == nil {
		return 0
	}
	n := 0
	for k := 1; k <= r.count; k++ {
		if p.nanos(now)-r.at(k, p.size) >= int64(per) {
			break
		}
		n++
	}
	return n
}

// Forget drops instance's history (it left the pool).
func (p *Politeness) Forget(instance string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	delete(p.ring, instance)
	p.mu.Unlock()
}

// ExtraBudget bounds the upstream searches that hedges and retries add on
// top of the first attempt of each client search: over a sliding window,
// extras may be at most Ratio of first attempts, or Floor, whichever is
// larger. So a bad hour cannot multiply the load searxgate puts on the
// instances.
//
// The window is kept as buckets (a tenth of the window each); the oldest
// bucket is dropped as time moves on.
type ExtraBudget struct {
	base   time.Time // as Politeness.base
	Ratio  float64
	Floor  int
	window time.Duration

	mu      sync.Mutex // guards the buckets
	buckets [10]budgetBucket
}

type budgetBucket struct {
	start         int64 // nanoseconds since ExtraBudget.base at which this bucket began
	firsts, extra int
}

// NewExtraBudget returns a budget of ratio extras per first attempt over
// window, never less than floor extras in a window.
func NewExtraBudget(ratio float64, floor int, window time.Duration) *ExtraBudget {
	if window <= 0 {
		window = time.Minute
	}
	return &ExtraBudget{base: time.Now(), Ratio: ratio, Floor: floor, window: window}
}

func (b *ExtraBudget) bucket(now int64) *budgetBucket {
	width := int64(b.window) / int64(len(b.buckets))
	q := now / width // floored: a clock before base gives negative offsets
	if now%width < 0 {
		q--
	}
	n := int64(len(b.buckets))
	bk := &b.buckets[(q%n+n)%n]
	start := q * width
	if bk.start != start {
		*bk = budgetBucket{start: start}
	}
	return bk
}

func (b *ExtraBudget) sums(now int64) (firsts, extra int) {
	oldest := now - int64(b.window)
	for i := range b.buckets {
		if bk := &b.buckets[i]; bk.start > oldest {
			firsts += bk.firsts
			extra += bk.extra
		}
	}
	return firsts, extra
}

// First records a client search's first upstream attempt.
func (b *ExtraBudget) First(now time.Time) {
	b.mu.Lock()
	b.bucket(b.nanos(now)).firsts++
	b.mu.Unlock()
}

// TakeExtra reserves one extra upstream search if the budget allows it,
// and reports whether it did. A hedge may use only the first half of the
// budget, so that retries, which a search needs to be answered at all,
// still find room when hedges are many.
func (b *ExtraBudget) TakeExtra(now time.Time, hedge bool) bool {
	t := b.nanos(now)
	b.mu.Lock()
	defer b.mu.Unlock()
	firsts, extra := b.sums(t)
	allowed := max(int(b.Ratio*float64(firsts)), b.Floor)
	if hedge {
		allowed /= 2
	}
	if extra >= allowed {
		return false
	}
	b.bucket(t).extra++
	return true
}

// Counts returns the first attempts and extras within the window.
func (b *ExtraBudget) Counts(now time.Time) (firsts, extra int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sums(b.nanos(now))
}
