// Package fair shares a few slots among the clients waiting for them now:
// the client holding the fewest first, then the one served longest ago,
// then first come. One client's queue, however long, never holds back
// another client's next turn by more than one slot's time.
package fair

import (
	"context"
	"slices"
	"sync"
)

// Order remembers when each active client was last served; its zero value
// is ready. Its caller guards it.
type Order struct {
	seq    uint64
	served map[string]uint64
}

// Pick is the index, among the n pieces of work waiting (in the order
// they came, clientOf(i) the client of the i-th), of the one to serve
// next; holding says how many slots a client holds now. It is -1 when n
// is 0.
func (o *Order) Pick(n int, clientOf func(i int) string, holding func(client string) int) int {
	best := -1
	var bestHeld int
	var bestServed uint64
	for i := range n {
		c := clientOf(i)
		held, served := holding(c), o.served[c]
		if best < 0 || held < bestHeld || (held == bestHeld && served < bestServed) {
			best, bestHeld, bestServed = i, held, served
		}
	}
	return best
}

// Served notes that client was given a slot.
func (o *Order) Served(client string) {
	if o.served == nil {
		o.served = map[string]uint64{}
	}
	o.seq++
	o.served[client] = o.seq
}

// remembered is how many clients an Order keeps before it forgets those
// no longer active: a client that comes back soon after its last turn is
// still known to have been served.
const remembered = 64

// Prune forgets the clients active says are not, once more than a few
// are remembered: only the clients active now, and recently, are kept.
func (o *Order) Prune(active func(client string) bool) {
	if len(o.served) <= remembered {
		return
	}
	for c := range o.served {
		if !active(c) {
			delete(o.served, c)
		}
	}
}

// Queue hands out a fixed number of slots in Order.
type Queue struct {
	slots int

	mu      sync.Mutex // guards order, running and waiting
	order   Order
	running map[string]int // slots held, by client
	busy    int            // slots held, all clients
	waiting []*waiter      // in the order they came
}

type waiter struct {
	client string
	ready  chan struct{} // closed when the slot is given
	given  bool
}

// NewQueue is a Queue of n slots (at least 1).
func NewQueue(n int) *Queue {
	return &Queue{slots: max(n, 1), running: map[string]int{}}
}

// Wait waits within ctx for a slot for client and returns the function
// that gives it back (once). A wait that ctx ends leaves the queue and
// returns ctx's error.
func (q *Queue) Wait(ctx context.Context, client string) (release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w := &waiter{client: client, ready: make(chan struct{})}
	q.mu.Lock()
	q.waiting = append(q.waiting, w)
	q.dispatchLocked()
	q.mu.Unlock()
	select {
	case <-w.ready:
		return q.releaser(client), nil
	case <-ctx.Done():
	}
	q.mu.Lock()
	if w.given {
		// Given as the wait ended: handed on.
		q.mu.Unlock()
		q.releaser(client)()
		return nil, ctx.Err()
	}
	q.waiting = slices.DeleteFunc(q.waiting, func(x *waiter) bool { return x == w })
	q.forgetLocked(client)
	q.mu.Unlock()
	return nil, ctx.Err()
}

// Waiting is how many waits client has in the queue, and all clients'.
func (q *Queue) Waiting(client string) (own, all int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, w := range q.waiting {
		if w.client == client {
			own++
		}
	}
	return own, len(q.waiting)
}

func (q *Queue) releaser(client string) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			q.mu.Lock()
			defer q.mu.Unlock()
			q.running[client]--
			q.busy--
			q.forgetLocked(client)
			q.dispatchLocked()
		})
	}
}

// dispatchLocked gives free slots to the waits next in Order; q.mu is held.
func (q *Queue) dispatchLocked() {
	for len(q.waiting) > 0 && q.busy < q.slots {
		i := q.order.Pick(len(q.waiting), func(i int) string { return q.waiting[i].client },
			func(c string) int { return q.running[c] })
		w := q.waiting[i]
		q.waiting = slices.Delete(q.waiting, i, i+1)
		q.running[w.client]++
		q.busy++
		q.order.Served(w.client)
		w.given = true
		close(w.ready)
	}
}

// forgetLocked drops client's count once it holds and waits for
// nothing, and prunes the order.
func (q *Queue) forgetLocked(client string) {
	if q.running[client] > 0 || slices.ContainsFunc(q.waiting, func(w *waiter) bool { return w.client == client }) {
		return
	}
	delete(q.running, client)
	q.order.Prune(func(c string) bool {
		return q.running[c] > 0 || slices.ContainsFunc(q.waiting, func(w *waiter) bool { return w.client == c })
	})
}
