package proxy

import (
	"sync"

	"github.com/searxgate/searxgate/results"
)

// flights coalesces identical searches in flight at the same time: the
// first caller of a key runs the search, the others wait for its answer.
type flights struct {
	mu sync.Mutex // guards m
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
		return fl, false
	}
	fl := &flight{done: make(chan struct{})}
	f.m[key] = fl
	return fl, true
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
