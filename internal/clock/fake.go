package clock

import (
	"slices"
	"sync"
	"time"
)

// Fake is a Clock that moves only when told to (Set, Advance). Its timers
// and tickers fire, in the order they are due, inside the Advance or Set
// that reaches their time: a test knows they fired when the call returns,
// and nothing sleeps. Safe for concurrent use. The zero value reads the
// zero time; NewFake starts elsewhere.
type Fake struct {
	mu      sync.Mutex // guards all
	now     time.Time
	waiting []*waiter     // timers and tickers not fired (or stopped) yet
	changed chan struct{} // closed (and replaced) when waiting changes
}

// waiter is one timer (period 0) or ticker.
type waiter struct {
	when   time.Time
	period time.Duration
	c      chan time.Time // buffered 1: a send never blocks
}

// NewFake is a Fake reading start.
func NewFake(start time.Time) *Fake { return &Fake{now: start} }

// Now is the fake's time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Advance moves the time forward by d (d < 0 is 0) and fires what falls due.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.set(f.now.Add(max(d, 0)))
}

// Set moves the time to t and fires what falls due. Moving back fires
// nothing and moves no timer.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.set(t)
}

func (f *Fake) set(t time.Time) {
	f.now = t
	slices.SortStableFunc(f.waiting, func(a, b *waiter) int { return a.when.Compare(b.when) })
	kept := f.waiting[:0]
	fired := false
	for _, w := range f.waiting {
		if w.when.After(t) {
			kept = append(kept, w)
			continue
		}
		fired = true
		select {
		case w.c <- w.when:
		default: // a ticker whose last tick is still unread: dropped
		}
		if w.period > 0 {
			// The next tick after t, on the ticker's beat.
			w.when = w.when.Add(w.period * (t.Sub(w.when)/w.period + 1))
			kept = append(kept, w)
		}
	}
	clear(f.waiting[len(kept):])
	f.waiting = kept
	if fired {
		f.notify()
	}
}

// NewTimer is a timer that fires when the fake reaches now+d.
func (f *Fake) NewTimer(d time.Duration) (<-chan time.Time, func() bool) {
	w := f.add(d, 0)
	return w.c, func() bool { return f.remove(w) }
}

// NewTicker is a ticker that fires every d of fake time. It panics when
// d ≤ 0, as time.NewTicker.
func (f *Fake) NewTicker(d time.Duration) (<-chan time.Time, func()) {
	if d <= 0 {
		panic("clock: non-positive interval for NewTicker")
	}
	w := f.add(d, d)
	return w.c, func() { f.remove(w) }
}

func (f *Fake) add(d, period time.Duration) *waiter {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := &waiter{when: f.now.Add(d), period: period, c: make(chan time.Time, 1)}
	if d <= 0 {
		w.c <- f.now
		return w
	}
	f.waiting = append(f.waiting, w)
	f.notify()
	return w
}

// remove stops w, reporting whether it was still waiting.
func (f *Fake) remove(w *waiter) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := slices.Index(f.waiting, w)
	if i < 0 {
		return false
	}
	f.waiting = slices.Delete(f.waiting, i, i+1)
	f.notify()
	return true
}

// notify wakes BlockUntil. f.mu is held.
func (f *Fake) notify() {
	if f.changed != nil {
		close(f.changed)
		f.changed = nil
	}
}

// Pending is the time left on each timer and ticker still waiting, soonest
// first.
func (f *Fake) Pending() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pending()
}

func (f *Fake) pending() []time.Duration {
	left := make([]time.Duration, len(f.waiting))
	for i, w := range f.waiting {
		left[i] = w.when.Sub(f.now)
	}
	slices.Sort(left)
	return left
}

// BlockUntil waits until at least n timers and tickers are waiting and
// returns Pending. A test calls it to know that a loop running in another
// goroutine has reached its wait, before it calls Advance.
func (f *Fake) BlockUntil(n int) []time.Duration {
	for {
		f.mu.Lock()
		if len(f.waiting) >= n {
			p := f.pending()
			f.mu.Unlock()
			return p
		}
		if f.changed == nil {
			f.changed = make(chan struct{})
		}
		ch := f.changed
		f.mu.Unlock()
		<-ch
	}
}

var _ Clock = (*Fake)(nil)
var _ Clock = Real{}
