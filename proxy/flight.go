package proxy

import (
	"context"
	"sync"

	"github.com/searxgate/searxgate/results"
)

// flights coalesces identical searches in flight at the same time: the
// first caller of a key runs the search, the others wait for its answer.
// A search runs as long as one of its callers still waits for it: when the
// last has gone, it is cancelled: it leaves the slot queue and starts no
// more attempts (no retry, hedge or second opinion), so nobody's gone
// search waits for a slot or spends a budget. An attempt already sent
// runs on to its answer or its deadline, holding its slot meanwhile, and
// its instance is judged by it (blame.go).
type flights struct {
	mu sync.Mutex // guards m and every flight's waiting and cancel
	m  map[string]*flight
}

type flight struct {
	done chan struct{} // closed when res and err are set
	res  *Response
	err  error
	// results is res's decoded results as finish found them, for the
	// followers to share (read only); res's own field may still be set
	// later by its leader's Results, so followers never read it.
	results *results.Page
	dups    int // callers that joined, guarded by flights.mu
	// waiting counts the callers still waiting (the leader's own and
	// those that joined); cancel ends the search, called when waiting
	// falls to 0. Both guarded by flights.mu.
	waiting int
	cancel  context.CancelFunc
}

// join returns the flight for key and whether the caller is its leader
// (the one that must run it and call finish).
func (f *flights) join(key string) (*flight, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = make(map[string]*flight)
	}
	if fl, ok := f.m[key]; ok {
		fl.dups++
		fl.waiting++
		return fl, false
	}
	fl := &flight{done: make(chan struct{}), waiting: 1}
	f.m[key] = fl
	return fl, true
}

// arm gives fl the cancel of its search; called by the leader once, before
// it searches. A flight whose callers all left before is cancelled at once.
func (f *flights) arm(fl *flight, cancel context.CancelFunc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fl.cancel = cancel
	if fl.waiting <= 0 {
		cancel()
	}
}

// leave is a caller of fl no longer waiting (its context ended); the last
// to leave cancels the search.
func (f *flights) leave(fl *flight) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fl.waiting--
	if fl.waiting <= 0 && fl.cancel != nil {
		fl.cancel()
	}
}

// finish publishes the leader's answer to everyone waiting on key.
func (f *flights) finish(key string, fl *flight, res *Response, err error) {
	f.mu.Lock()
	delete(f.m, key)
	f.mu.Unlock()
	fl.res, fl.err = res, err
	if res != nil {
		fl.results = res.results
	}
	close(fl.done)
}
