package proxy

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/searxgate/searxgate/proxy/cache"
	"github.com/searxgate/searxgate/sim"
)

// fakeSharedCache is a cache.Shared that keeps nothing and counts what it
// is asked.
type fakeSharedCache struct {
	mu                     sync.Mutex // guards the counts
	gets, puts, leads, wts int
}

func (f *fakeSharedCache) Get(context.Context, string) (cache.Entry, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets++
	return cache.Entry{}, false
}

func (f *fakeSharedCache) Put(string, cache.Entry) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.puts++
}

func (f *fakeSharedCache) Lead(context.Context, string, time.Time) (bool, func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.leads++
	return true, func() {}
}

func (f *fakeSharedCache) Wait(context.Context, string, time.Time) (cache.Entry, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.wts++
	return cache.Entry{}, false
}

func (f *fakeSharedCache) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gets + f.puts + f.leads + f.wts
}

// brief says how a response was served, for a test's failure.
func brief(r *Response) string {
	if r == nil {
		return "no response"
	}
	return fmt.Sprintf("from %s, %d attempts, cached %v, stale %v, soft %q", r.Instance, r.Attempts, r.Cached, r.Stale, r.Soft)
}

// With NoCache every search is asked upstream (a repeat, an empty answer,
// the query's own poor one), nothing is written to or read from the store
// or the shared cache, and nothing is kept in memory.
func TestNoCacheKeepsNoAnswer(t *testing.T) {
	st := newFakeCacheStore()
	shared := &fakeSharedCache{}
	e := newEnv(t, Config{NoCache: true, Store: st, Shared: Shared{Cache: shared}},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	for i := range 2 {
		res, err := e.search(t, "never kept")
		if err != nil || res.Cached || res.Attempts != 1 {
			t.Fatalf("search %d: %s, %v; want an upstream answer", i, brief(res), err)
		}
	}
	if n := e.searches(0) + e.searches(1); n != 2 {
		t.Fatalf("%d upstream searches for a search and its repeat, want 2", n)
	}
	// Nothing found, twice: each asks again (with its confirmation).
	for i := range 2 {
		if res, err := e.search(t, sim.NoResultsPrefix+" gibberish"); err != nil || res.Cached {
			t.Fatalf("empty search %d: %s, %v", i, brief(res), err)
		}
	}
	if n := e.searches(0) + e.searches(1); n != 2+4 {
		t.Fatalf("%d upstream searches, want 6: nothing found is not kept either", n)
	}
	if entries, _ := e.proxy.cache.Answers().Len(); entries != 0 {
		t.Fatalf("%d answers in memory", entries)
	}
	st.mu.Lock()
	stored, gets := len(st.m), st.gets
	st.mu.Unlock()
	if stored != 0 || gets != 0 {
		t.Fatalf("the store was given %d answers and asked %d times", stored, gets)
	}
	if n := shared.calls(); n != 0 {
		t.Fatalf("the shared cache was used %d times", n)
	}
	if ttl, keep := e.proxy.Cache().Lifetime(); ttl != 0 || keep != 0 {
		t.Fatalf("Lifetime = %v, %v; want none", ttl, keep)
	}
}

// With NoCache an answer the query's engines made poor on both instances
// is served, and asked again on a repeat.
func TestNoCacheAsksThePoorQueryAgain(t *testing.T) {
	e := newEnv(t, Config{NoCache: true, MaxAttempts: 2},
		sim.InstanceConfig{Behaviour: sim.EmptyEnginesDown, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.EmptyEnginesDown, Latency: -1, JSON: true})
	for i := range 2 {
		res, err := e.search(t, "nothing out there")
		if err != nil || res.Cached || res.Soft == "" {
			t.Fatalf("search %d: %s, %v; want the poor answer from upstream", i, brief(res), err)
		}
	}
	if n := e.searches(0) + e.searches(1); n != 4 {
		t.Fatalf("%d upstream searches, want 4", n)
	}
}

// With NoCache there is no stale answer to fall back on: a search nothing
// answers fails, as it says.
func TestNoCacheServesNothingStale(t *testing.T) {
	e := newEnv(t, Config{NoCache: true},
		sim.InstanceConfig{Behaviour: sim.Flapping, FlapPeriod: time.Hour, Latency: -1, JSON: true})
	if _, err := e.search(t, "keep me"); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour + time.Second) // the instance is down now
	res, err := e.search(t, "keep me")
	if !errors.Is(err, ErrNoAnswer) {
		t.Fatalf("with no cache and no instance: %s, %v; want no answer", brief(res), err)
	}
}

// With NoCache autocompletions are asked every time.
func TestNoCacheAsksSuggestionsAgain(t *testing.T) {
	e := newEnv(t, Config{NoCache: true}, sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	e.proxy.setCaps(e.urls[0], func(c *Caps) { c.Autocomplete = "duckduckgo" })
	for i := range 2 {
		if out, err := e.proxy.Autocomplete(context.Background(), "tidal", "en"); err != nil || len(out) == 0 {
			t.Fatalf("suggestions %d: %q, %v", i, out, err)
		}
	}
	if n := e.fleet.Instances()[0].Truth().Requests; n != 2 {
		t.Fatalf("%d requests upstream for two suggestions, want 2", n)
	}
	if entries, _ := e.proxy.cache.Suggestions().Len(); entries != 0 {
		t.Fatalf("%d autocompletions kept", entries)
	}
}

// The cache's lifetime without NoCache: the TTL, then StaleFor.
func TestCacheLifetime(t *testing.T) {
	e := newEnv(t, Config{CacheTTL: 5 * time.Minute}, sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	if ttl, keep := e.proxy.Cache().Lifetime(); ttl != 5*time.Minute || keep != 5*time.Minute+24*time.Hour {
		t.Fatalf("Lifetime = %v, %v", ttl, keep)
	}
}
