package polite

import (
	"slices"
	"sync"
	"time"
)

// Queue is the slot queue's own structure: the searches waiting for a
// slot (an in-flight cap, a politeness window, a half-open trial, a
// cooldown ending soon), oldest first, at most max of them, served by
// turns of client (Serve). What a waiter is (T) and what serving it means
// are the caller's.
//
// Its lock guards the queue alone. Whoever serves decides under it what
// can be decided in memory, and asks anything slow (a budget shared with
// other replicas) after, with the waiter set aside: it keeps its place,
// no other pass serves it meanwhile, and Settle ends the ask. A waiter
// that leaves while set aside is gone at once; Settle says so to whoever
// asked.
type Queue[T any] struct {
	mu      sync.Mutex
	max     int
	waiters []*Waiter[T] // oldest first; guarded by mu
}

// Waiter is one search waiting in a Queue.
type Waiter[T any] struct {
	Value  T
	Client string    // who asked: waiters take turns by it
	Since  time.Time // when it began to wait

	aside bool // guarded by the queue's lock: a slot is being asked for it (Aside)
	left  bool // guarded by the queue's lock: it left while set aside
}

// Turn is what serving a waiter came to.
type Turn uint8

const (
	// Wait: no slot for it now; it keeps waiting in its place.
	Wait Turn = iota
	// Done: its wait ended (a slot, or a refusal); it leaves the queue.
	Done
	// Aside: a slot is being asked for it outside the queue's lock; it
	// keeps its place, no pass serves it until Settle.
	Aside
)

// NewQueue returns an empty queue of at most max waiters.
func NewQueue[T any](max int) *Queue[T] { return &Queue[T]{max: max} }

// Join puts w at the end of the queue, unless the queue is full or w's
// client holds its share of the places; n is the queue's length after.
func (q *Queue[T]) Join(w *Waiter[T]) (n int, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.waiters) >= q.max || !q.roomFor(w.Client) {
		return len(q.waiters), false
	}
	q.waiters = append(q.waiters, w)
	return len(q.waiters), true
}

// roomFor reports whether client may take one more place, as Fair shares
// a window: a client not waiting yet always may, while there is a place.
// One already waiting leaves a seat of max/(3n) free for newcomers (n:
// the clients waiting, itself among them), and takes more than an even
// share, max/n, only while the queue is less than half full. So one
// client's flood never refuses another's first search. mu is held.
func (q *Queue[T]) roomFor(client string) bool {
	mine, n := 0, 1
	seen := make(map[string]bool, 8)
	for _, w := range q.waiters {
		switch {
		case w.Client == client:
			mine++
		case !seen[w.Client]:
			seen[w.Client] = true
			n++
		}
	}
	if mine == 0 {
		return true
	}
	held := len(q.waiters)
	seat := (q.max + 3*n - 1) / (3 * n)
	return held < q.max-seat && (held < q.max/2 || mine < q.max/n)
}

// Leave takes w out of the queue (it gave up waiting); n is the queue's
// length after. A w set aside is marked as gone for Settle.
func (q *Queue[T]) Leave(w *Waiter[T]) (n int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.remove(w) && w.aside {
		w.left = true
	}
	return len(q.waiters)
}

// remove takes w out of the list; it reports whether w was there. mu is
// held.
func (q *Queue[T]) remove(w *Waiter[T]) bool {
	i := slices.Index(q.waiters, w)
	if i < 0 {
		return false
	}
	q.waiters = slices.Delete(q.waiters, i, i+1)
	return true
}

// Serve calls serve, under the queue's lock, with the waiters in turn: a
// first pass serves the oldest waiter of each client, a second every one
// still waiting in order of arrival, so that one client's many waiters do
// not take every slot that frees while another client's one waits behind
// them. Waiters set aside are skipped; those whose wait ended (Done)
// leave the queue. It returns the queue's length after.
func (q *Queue[T]) Serve(serve func(w *Waiter[T]) Turn) (n int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.waiters) == 0 {
		return 0
	}
	var turn map[string]bool
	if len(q.waiters) > 1 {
		turn = make(map[string]bool, len(q.waiters))
	}
	done := make([]bool, len(q.waiters))
	for pass := range 2 {
		for i, w := range q.waiters {
			if done[i] || w.aside || (pass == 0 && turn != nil && turn[w.Client]) {
				continue
			}
			if turn != nil {
				turn[w.Client] = true
			}
			switch serve(w) {
			case Done:
				done[i] = true
			case Aside:
				w.aside = true
			}
		}
		if turn == nil {
			break
		}
	}
	kept := q.waiters[:0]
	for i, w := range q.waiters {
		if !done[i] {
			kept = append(kept, w)
		}
	}
	clear(q.waiters[len(kept):])
	q.waiters = kept
	return len(kept)
}

// Settle ends the ask for w, set aside by Serve: settle runs under the
// queue's lock, told whether w left meanwhile (it is gone then, whatever
// settle says), and reports whether w's wait ended; otherwise w waits
// again in its place. It returns the queue's length after.
func (q *Queue[T]) Settle(w *Waiter[T], settle func(left bool) (done bool)) (n int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	w.aside = false
	if settle(w.left) && !w.left {
		q.remove(w)
	}
	return len(q.waiters)
}

// Len is the number of waiters, those set aside included.
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiters)
}

// MinRetryAfter is the shortest Retry-After a refusal says: HTTP counts in
// whole seconds, and "0" would invite a client to come back at once.
const MinRetryAfter = time.Second

// RetryAfter is the Retry-After of a refusal whose earliest slot is at.
func RetryAfter(at, now time.Time) time.Duration {
	return max(at.Sub(now), MinRetryAfter)
}

// Slot is when the first instance a waiting search may use is expected to
// take it, and what the search should expect once there: among the
// instances offered (Offer), the one expected to answer first counts.
type Slot struct {
	At time.Time // when it frees (at or after now)
	// Done is when a search sent then is expected to be answered: At plus
	// the instance's usual latency. Past the deadline, the slot is no use
	// to the search.
	Done time.Time
	// Wake is the earliest time a window or a cooldown frees something
	// (zero when only busy instances are waited for: a lease coming back
	// wakes the waiters then).
	Wake time.Time

	found bool
}

// Offer counts one instance the search may use: it frees at at (the
// latest of what the pool, the budget and the client's fair share say;
// now when that is past), a search there takes lat, and busy says it
// waits for a lease to come back rather than for a time.
func (s *Slot) Offer(at, now time.Time, lat time.Duration, busy bool) {
	if at.Before(now) {
		at = now
	}
	done := at.Add(lat)
	if !s.found || done.Before(s.Done) {
		s.At, s.Done, s.found = at, done, true
	}
	if timed := at.After(now) || !busy; timed && (s.Wake.IsZero() || at.Before(s.Wake)) {
		s.Wake = at
	}
}

// Found reports whether any instance was offered: without one the search
// has nothing to wait for.
func (s *Slot) Found() bool { return s.found }
