package polite

import (
	"math"
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
// 10 min per public instance. The operator's own instances have a budget
// of their own, none by default (WithOwn). A search that finds every
// instance out of budget waits for the first window to free when that is
// within its deadline (in the slot queue: see Queue), and is refused at
// once otherwise.
//
// Each instance keeps the times of its last N searches in a ring, N being
// the largest Max of its class: a window allows one more search when the
// Max-th most recent one is older than its span. Checking and taking are
// O(windows). This is kept by hand rather than with a token bucket
// because a sliding window is what SearXNG's limiter counts: a bucket
// would allow bursts the limiter refuses.
type Politeness struct {
	base    time.Time             // times are kept as offsets from it: monotonic when the clock is time.Now
	classes [numClasses]windowSet // by Class

	mu    sync.Mutex // guards the fields of every ring, and rings when it is a mapRings
	rings Rings
}

// Rings keeps each instance's Ring. The proxy keeps them in its instance
// records (one place for all that is kept about an instance: WithRings);
// a Politeness on its own, in a map. A Politeness calls it under its own
// lock, one call at a time, and is the only one to touch a Ring's fields.
type Rings interface {
	// Ring returns instance's ring, making one when create is set and the
	// store may (a record store never makes a record); nil otherwise.
	Ring(instance string, create bool) *Ring
	// Drop forgets instance's ring (Forget).
	Drop(instance string)
}

// mapRings is a Rings of its own; guarded by Politeness.mu.
type mapRings map[string]*Ring

func (m mapRings) Ring(instance string, create bool) *Ring {
	r := m[instance]
	if r == nil && create {
		r = &Ring{}
		m[instance] = r
	}
	return r
}

func (m mapRings) Drop(instance string) { delete(m, instance) }

// windowSet is the budget of one class of instance.
type windowSet struct {
	windows []Window
	size    int // ring size: the largest Max
}

func newWindowSet(windows []Window) windowSet {
	var ws windowSet
	for _, w := range windows {
		if w.Max > 0 && w.Per > 0 {
			w.Max = min(w.Max, MaxWindow)
			ws.windows = append(ws.windows, w)
			ws.size = max(ws.size, w.Max)
		}
	}
	return ws
}

// Class is the budget an instance is under.
type Class uint8

const (
	ClassPublic Class = iota // a public instance: the budget NewPoliteness was given
	ClassOwn                 // the operator's own: WithOwn's budget (none by default)
	// ClassOwnLimited: an own instance whose /config says its limiter is
	// on: the limiter counts searxgate like any client, so searxgate
	// paces it below the limiter's windows (LimiterBudget), unless the
	// operator's own budget is tighter.
	ClassOwnLimited
	numClasses
)

// ClassOf is the class of an instance that is own or not, and whose
// limiter is on or not.
func ClassOf(own, limiter bool) Class {
	switch {
	case own && limiter:
		return ClassOwnLimited
	case own:
		return ClassOwn
	}
	return ClassPublic
}

// LimiterBudget is what an own instance with SearXNG's limiter on gets:
// below its HTML windows (15 in 20 s, 150 in 10 min) with a margin.
// Adding searxgate's address to botdetection.ip_lists.pass_ip in the
// instance's limiter.toml lifts the limiter for it; /config cannot tell
// searxgate so, so it paces while /config says the limiter is on (turn
// the limiter off, or give --own-budget-*, to say otherwise).
var LimiterBudget = []Window{{Max: 12, Per: 20 * time.Second}, {Max: 120, Per: 10 * time.Minute}}

// tighter returns, window by window, the smaller Max of a and b for the
// same span, and every window either has.
func tighter(a, b []Window) []Window {
	out := append([]Window(nil), a...)
	for _, w := range b {
		found := false
		for i := range out {
			if out[i].Per == w.Per {
				out[i].Max = min(out[i].Max, w.Max)
				found = true
			}
		}
		if !found {
			out = append(out, w)
		}
	}
	return out
}

// Ring holds an instance's most recent search times. It grows as the
// instance is used, up to its class's ring size, so an instance searched
// rarely costs little. Its zero value is an instance never searched; only
// its Politeness reads or changes it (under its lock).
type Ring struct {
	class Class   // the budget its times count against
	hold  int64   // no search before this (nanoseconds since Politeness.base): a shared budget said so; 0 = none
	times []int64 // nanoseconds since Politeness.base; once full, times[(next-1) mod size] is the newest
	next  int
}

// at returns the k-th most recent time (k = 1 is the newest).
func (r *Ring) at(k, size int) int64 {
	if len(r.times) < size { // still growing: in order, newest last
		return r.times[len(r.times)-k]
	}
	return r.times[(r.next-k+size)%size]
}

// MaxWindow is the largest Max a Window may have: each instance keeps up to
// that many search times.
const MaxWindow = 10_000

// NewPoliteness returns a budget for public instances with the given
// windows, and none for own ones; windows with a non-positive Max or Per
// are ignored (no limit), and Max is capped at MaxWindow.
func NewPoliteness(windows ...Window) *Politeness {
	p := &Politeness{base: time.Now(), classes: [numClasses]windowSet{ClassPublic: newWindowSet(windows)}, rings: mapRings{}}
	return p.WithOwn()
}

// WithOwn sets the budget of the operator's own instances (none by
// default) and returns p; an own instance with SearXNG's limiter on gets
// the tighter of it and LimiterBudget. Call it before p is used.
func (p *Politeness) WithOwn(windows ...Window) *Politeness {
	p.classes[ClassOwn] = newWindowSet(windows)
	if len(p.classes[ClassOwn].windows) == 0 {
		p.classes[ClassOwnLimited] = newWindowSet(LimiterBudget)
	} else {
		p.classes[ClassOwnLimited] = newWindowSet(tighter(LimiterBudget, p.classes[ClassOwn].windows))
	}
	return p
}

// WithBase counts p's times from base, the caller's clock reading now
// (default: time.Now when p was made), and returns p. Call it before p is
// used.
func (p *Politeness) WithBase(base time.Time) *Politeness {
	p.base = base
	return p
}

// WithRings keeps p's rings in rings instead of a map of its own, and
// returns p. Call it before p is used.
func (p *Politeness) WithRings(rings Rings) *Politeness {
	p.rings = rings
	return p
}

// nanos is now as an offset from p.base. With a clock reading time.Now,
// Sub uses the monotonic clock: a wall-clock step (NTP, a resumed VM)
// neither frees nor blocks a window.
func (p *Politeness) nanos(now time.Time) int64 { return int64(now.Sub(p.base)) }

// class is the budget r's instance is under: public until it is known.
func (p *Politeness) class(r *Ring) *windowSet {
	if r == nil {
		return &p.classes[ClassPublic]
	}
	return &p.classes[r.class]
}

// Allowed reports whether one more search to instance at now stays within
// every window of its class. It reserves nothing; Take does.
func (p *Politeness) Allowed(instance string, now time.Time) bool {
	if p == nil {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.rings.Ring(instance, false)
	return p.allowedLocked(p.class(r), r, p.nanos(now))
}

// Take records one search to instance at now if it is allowed, and reports
// whether it was. The instance stays in the class it was last taken as
// (public when it never was).
func (p *Politeness) Take(instance string, now time.Time) bool {
	if p == nil {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.rings.Ring(instance, false)
	c := ClassPublic
	if r != nil {
		c = r.class
	}
	return p.takeLocked(instance, c, r, p.nanos(now))
}

// TakeAs is Take for an instance known to be the operator's own or not:
// a change of class starts its history afresh under the new budget.
func (p *Politeness) TakeAs(instance string, own bool, now time.Time) bool {
	return p.TakeClass(instance, ClassOf(own, false), now)
}

// TakeClass is Take for an instance known to be under class c: a change
// of class starts its history afresh under the new budget, except
// between an own instance's two classes (its limiter turned on or off:
// the searches it had still count).
func (p *Politeness) TakeClass(instance string, c Class, now time.Time) bool {
	if p == nil {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.rings.Ring(instance, false)
	if r != nil && r.class != c {
		if (r.class == ClassPublic) != (c == ClassPublic) {
			*r = Ring{} // a new tier: its history starts afresh
		} else {
			r.reshape(p.classes[r.class].size, p.classes[c].size)
		}
		r.class = c
	}
	return p.takeLocked(instance, c, r, p.nanos(now))
}

// reshape keeps the newest of r's times, in order, for a ring of size to.
func (r *Ring) reshape(from, to int) {
	n := min(len(r.times), to)
	out := make([]int64, 0, to)
	for k := n; k >= 1; k-- {
		out = append(out, r.at(k, from))
	}
	r.times, r.next = out, len(out)%max(to, 1)
}

func (p *Politeness) takeLocked(instance string, c Class, r *Ring, t int64) bool {
	ws := &p.classes[c]
	if r != nil && r.hold != 0 && t < r.hold {
		return false
	}
	if ws.size == 0 {
		if c != ClassPublic && (r == nil || r.class != c) {
			// Remember the class, so Allowed and Take read the own
			// budget (none) and not the public one.
			if r = p.rings.Ring(instance, true); r != nil {
				r.class = c
			}
		}
		return true
	}
	if !p.allowedLocked(ws, r, t) {
		return false
	}
	if r == nil {
		if r = p.rings.Ring(instance, true); r == nil {
			return true // an instance no longer kept: nothing to count against
		}
		r.class = c
	}
	if len(r.times) < ws.size {
		r.times = append(r.times, t)
	} else {
		r.times[r.next] = t
	}
	r.next = (r.next + 1) % ws.size
	return true
}

// Margin widens every window a little: a search counted when it
// was sent reaches the instance a moment later, and the limiter counts
// when it arrives. With it no instance sees more than a window's Max in
// any span of Per.
const Margin = 500 * time.Millisecond

// Restamp moves one search counted at taken to now, when it is sent
// later than it was planned (its instance's terms were read first), so
// that the windows count what the instance sees.
func (p *Politeness) Restamp(instance string, taken, now time.Time) {
	if p == nil || !now.After(taken) {
		return
	}
	from, to := p.nanos(taken), p.nanos(now)
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.rings.Ring(instance, false)
	if r == nil {
		return
	}
	size := p.class(r).size
	for k := 1; k <= len(r.times); k++ {
		if r.at(k, size) != from {
			continue
		}
		// Move it, and keep the ring newest last: shift the newer ones
		// back by one and put it where it now belongs.
		for ; k > 1 && r.at(k-1, size) < to; k-- {
			r.set(k, size, r.at(k-1, size))
		}
		r.set(k, size, to)
		return
	}
}

// Untake forgets one search counted at taken: it was never sent (the
// budget shared with other replicas said no after the local one said
// yes), so it must not hold the local window.
func (p *Politeness) Untake(instance string, taken time.Time) {
	if p == nil {
		return
	}
	t := p.nanos(taken)
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.rings.Ring(instance, false)
	if r == nil {
		return
	}
	size := p.class(r).size
	n := len(r.times)
	for k := 1; k <= n; k++ {
		if r.at(k, size) != t {
			continue
		}
		// Shift the older ones up by one; the oldest place gets a time no
		// window counts.
		for ; k < n; k++ {
			r.set(k, size, r.at(k+1, size))
		}
		r.set(n, size, forgotten)
		return
	}
}

// forgotten is a ring time no window counts (Untake's).
const forgotten = math.MinInt64 / 2

// set replaces the k-th most recent time (k = 1 is the newest).
func (r *Ring) set(k, size int, t int64) {
	if len(r.times) < size {
		r.times[len(r.times)-k] = t
		return
	}
	r.times[(r.next-k+size)%size] = t
}

func (p *Politeness) allowedLocked(ws *windowSet, r *Ring, now int64) bool {
	if r != nil && r.hold != 0 && now < r.hold {
		return false
	}
	if r == nil || ws.size == 0 {
		return true
	}
	for _, w := range ws.windows {
		if len(r.times) < w.Max {
			continue
		}
		// The w.Max-th most recent search.
		if now-r.at(w.Max, ws.size) < int64(w.Per+Margin) {
			return false
		}
	}
	return true
}

// FreeAt returns the earliest time at or after now at which every window
// of instance's class allows one more search.
func (p *Politeness) FreeAt(instance string, now time.Time) time.Time {
	if p == nil {
		return now
	}
	t := p.nanos(now)
	free := t
	p.mu.Lock()
	r := p.rings.Ring(instance, false)
	ws := p.class(r)
	if r != nil {
		if r.hold != 0 {
			free = max(free, r.hold)
		}
		for _, w := range ws.windows {
			if len(r.times) >= w.Max {
				free = max(free, r.at(w.Max, ws.size)+int64(w.Per+Margin))
			}
		}
	}
	p.mu.Unlock()
	return now.Add(time.Duration(free - t))
}

// WindowsOf returns the windows of instance's class (read only).
func (p *Politeness) WindowsOf(instance string) []Window {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.class(p.rings.Ring(instance, false)).windows
}

// Hold keeps instance from being searched before until: a budget shared
// with other searxgates refused it and said when it frees. Allowed says no
// and FreeAt says until (or later) meanwhile; a later Hold may extend it,
// never shorten it.
func (p *Politeness) Hold(instance string, until, now time.Time) {
	if p == nil || !until.After(now) {
		return
	}
	t := p.nanos(now) + int64(until.Sub(now))
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.rings.Ring(instance, true)
	if r == nil {
		return
	}
	if r.hold == 0 || t > r.hold {
		r.hold = t
	}
}

// Own reports whether instance was last taken as one of the operator's
// own.
func (p *Politeness) Own(instance string) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.rings.Ring(instance, false)
	return r != nil && r.class != ClassPublic
}

// Used reports how many searches instance made within the last per, for the
// status page.
func (p *Politeness) Used(instance string, now time.Time, per time.Duration) int {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.rings.Ring(instance, false)
	if r == nil {
		return 0
	}
	size := p.class(r).size
	n := 0
	for k := 1; k <= len(r.times); k++ {
		if p.nanos(now)-r.at(k, size) >= int64(per) {
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
	p.rings.Drop(instance)
	p.mu.Unlock()
}

// ExtraBudget bounds the upstream searches that hedges, retries and
// second opinions add on top of the first attempt of each client search:
// over a sliding window, extras may be at most Ratio of first attempts,
// or Floor, whichever is larger. So a bad hour cannot multiply the load
// searxgate puts on the instances.
//
// It is shared per client as the politeness budget is: a client's extras
// may be at most Ratio of its own first attempts, or its part of Floor
// (Floor / the clients that searched within the window), whichever is
// larger. So one client whose queries all need a second opinion spends
// its own part, and another client's retries still find room.
//
// The window is kept as buckets (a tenth of the window each); the oldest
// bucket is dropped as time moves on.
type ExtraBudget struct {
	base   time.Time // as Politeness.base
	Ratio  float64
	Floor  int
	window time.Duration

	mu       sync.Mutex // guards the buckets, clients and the active count
	buckets  [10]budgetBucket
	clients  map[string]*extraUse
	active   int   // clients with a first attempt within the window, as of activeAt
	activeAt int64 // when active was counted; counted again after a second
}

// extraUse is one client's first attempts and extras.
type extraUse struct {
	last    int64 // its last first attempt (nanoseconds since base)
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
	return &ExtraBudget{base: time.Now(), Ratio: ratio, Floor: floor, window: window, clients: make(map[string]*extraUse)}
}

// WithBase counts b's buckets from base, the caller's clock reading now
// (default: time.Now when b was made), and returns b. Call it before b is
// used.
func (b *ExtraBudget) WithBase(base time.Time) *ExtraBudget {
	b.base = base
	return b
}

func (b *ExtraBudget) nanos(now time.Time) int64 { return int64(now.Sub(b.base)) }

func (b *ExtraBudget) bucket(buckets *[10]budgetBucket, now int64) *budgetBucket {
	width := int64(b.window) / int64(len(buckets))
	q := floorDiv(now, width) // a clock before base gives negative offsets
	n := int64(len(buckets))
	bk := &buckets[(q%n+n)%n]
	start := q * width
	if bk.start != start {
		*bk = budgetBucket{start: start}
	}
	return bk
}

func (b *ExtraBudget) sums(buckets *[10]budgetBucket, now int64) (firsts, extra int) {
	oldest := now - int64(b.window)
	for i := range buckets {
		if bk := &buckets[i]; bk.start > oldest {
			firsts += bk.firsts
			extra += bk.extra
		}
	}
	return firsts, extra
}

// First records a client search's first upstream attempt (client "" is
// anonymous: counted for the whole gateway only).
func (b *ExtraBudget) First(client string, now time.Time) {
	t := b.nanos(now)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.bucket(&b.buckets, t).firsts++
	if client == "" {
		return
	}
	u := b.clients[client]
	if u == nil {
		if len(b.clients) >= maxFairClients {
			b.evictLocked(t)
		}
		u = &extraUse{}
		b.clients[client] = u
	}
	u.last = t
	b.bucket(&u.buckets, t).firsts++
}

// evictLocked drops the clients idle for the window, and when none is,
// the idlest one.
func (b *ExtraBudget) evictLocked(t int64) { evictIdle(b.clients, t, int64(b.window)) }

func (u *extraUse) lastAt() int64 { return u.last }

// activeLocked counts the clients with a first attempt within the window,
// at most once a second.
func (b *ExtraBudget) activeLocked(t int64) int {
	if b.activeAt != 0 && t-b.activeAt < int64(time.Second) && t >= b.activeAt {
		return b.active
	}
	n := countActive(b.clients, t, int64(b.window))
	b.active, b.activeAt = n, t
	return n
}

// TakeExtra reserves one extra upstream search of client if the budget
// and the client's part of it allow it, and reports whether it did. A
// hedge may use only the first half of either, so that retries and
// second opinions, which a search needs to be answered at all, still find
// room when hedges are many.
func (b *ExtraBudget) TakeExtra(client string, now time.Time, hedge bool) bool {
	t := b.nanos(now)
	b.mu.Lock()
	defer b.mu.Unlock()
	firsts, extra := b.sums(&b.buckets, t)
	allowed := max(int(b.Ratio*float64(firsts)), b.Floor)
	if hedge {
		allowed /= 2
	}
	if extra >= allowed {
		return false
	}
	var u *extraUse
	if client != "" {
		u = b.clients[client]
	}
	if u != nil {
		mine, used := b.sums(&u.buckets, t)
		part := max(int(b.Ratio*float64(mine)), b.Floor/max(b.activeLocked(t), 1), 1)
		if hedge {
			part = max(part/2, 1)
		}
		if used >= part {
			return false
		}
		b.bucket(&u.buckets, t).extra++
	}
	b.bucket(&b.buckets, t).extra++
	return true
}

// GiveBack returns an extra that client took at takenAt (TakeExtra) and
// that was never sent: no instance could take it in time, or its client's
// own limit refused it. An extra whose bucket the window has since dropped
// is gone already.
func (b *ExtraBudget) GiveBack(client string, takenAt time.Time) {
	t := b.nanos(takenAt)
	b.mu.Lock()
	defer b.mu.Unlock()
	unTake := func(buckets *[10]budgetBucket) {
		if bk := b.bucket(buckets, t); bk.extra > 0 {
			bk.extra--
		}
	}
	unTake(&b.buckets)
	if u := b.clients[client]; client != "" && u != nil {
		unTake(&u.buckets)
	}
}

// Counts returns the first attempts and extras within the window.
func (b *ExtraBudget) Counts(now time.Time) (firsts, extra int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sums(&b.buckets, b.nanos(now))
}
