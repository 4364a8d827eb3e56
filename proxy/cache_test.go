package proxy

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/searxgate/searxgate/proxy/cache"
	"github.com/searxgate/searxgate/sim"
)

func TestFlights(t *testing.T) {
	var f flights
	fl, leader := f.join("k")
	if !leader {
		t.Fatal("first caller is not the leader")
	}
	fl2, leader2 := f.join("k")
	if leader2 || fl2 != fl {
		t.Fatal("second caller did not join the first flight")
	}
	res := &Response{Instance: "x"}
	f.finish("k", fl, res, nil)
	<-fl2.done
	if fl2.res != res {
		t.Fatal("joined caller did not get the leader's answer")
	}
	if _, leader := f.join("k"); !leader {
		t.Fatal("a finished flight was joined again")
	}
}

// fakeCacheStore is a cache.Store that keys, drops and purges, and records
// what it was given.
type fakeCacheStore struct {
	*cache.Keyer
	mu      sync.Mutex // guards m, dropped and gets
	m       map[string]cache.Entry
	dropped []string
	gets    int
}

func newFakeCacheStore() *fakeCacheStore {
	return &fakeCacheStore{Keyer: cache.NewKeyer([]byte("install secret")), m: map[string]cache.Entry{}}
}

func (f *fakeCacheStore) CacheGet(key string) (cache.Entry, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets++
	c, ok := f.m[key]
	return c, ok
}

func (f *fakeCacheStore) CachePut(key string, c cache.Entry) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.m[key] = c
}

func (f *fakeCacheStore) CacheDropInstance(inst string) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dropped = append(f.dropped, inst)
	n := 0
	for k, c := range f.m {
		if cache.AnsweredBy(c.Instance, inst) {
			delete(f.m, k)
			n++
		}
	}
	return n, nil
}

func (f *fakeCacheStore) CachePurge() (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.m)
	clear(f.m)
	return n, nil
}

// What leaves memory is keyed by the store's keyed hash: nothing of the
// query is in a stored key. (In memory, where the search itself is, the
// cache holds it under its plain key: a hit costs no hashing.)
func TestSearchKeysTheCacheWithTheStoresSecret(t *testing.T) {
	st := newFakeCacheStore()
	e := newEnv(t, Config{Store: st}, sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	req := Request{Query: "private words", PageNo: 1, Format: FormatJSON}
	if _, err := e.proxy.Search(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	want := st.CacheKey(req.Key())
	if _, ok := st.CacheGet(want); !ok || len(st.m) != 1 {
		t.Fatalf("the store holds %d entries, none under the keyed hash", len(st.m))
	}
	for k := range st.m {
		if strings.Contains(k, "private") {
			t.Error("a stored key holds the query")
		}
	}
	if _, ok := e.proxy.cache.Answers().Get(req.Key()); !ok {
		t.Fatal("the answer is not in the memory cache")
	}
}

// A removed (forgotten) or disabled instance's answers are not served
// from the cache, fresh or stale; other instances' answers stay.
func TestDropAnswersOf(t *testing.T) {
	st := newFakeCacheStore()
	e := newEnv(t, Config{Store: st},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	hostile, good := e.urls[0], e.urls[1]
	if res, err := e.search(t, "poisoned answer"); err != nil || res.Instance != hostile {
		t.Fatalf("first search: %v, %v", res, err)
	}
	if res, err := e.search(t, "poisoned answer"); err != nil || !res.Cached {
		t.Fatalf("second search not cached: %+v, %v", res, err)
	}
	other := e.proxy.cache.Key("other search")
	e.proxy.cache.Answers().Put(other, &cache.Entry{JSON: []byte(`{}`), Instance: good, Expires: e.clock.Now().Add(time.Hour)})

	n, err := e.proxy.Cache().DropAnswersOf(hostile)
	if err != nil || n != 2 { // one in memory, one in the store
		t.Fatalf("DropAnswersOf = %d, %v; want 2", n, err)
	}
	if len(st.dropped) != 1 || st.dropped[0] != hostile {
		t.Fatalf("the store was told to drop %q", st.dropped)
	}
	if _, ok := e.proxy.cache.Answers().Get(other); !ok {
		t.Fatal("another instance's answer was dropped too")
	}
	// Served again from upstream, not from the cache; the hostile
	// instance is taken out of the pool as the operator would.
	e.pool.Remove(hostile)
	res, err := e.search(t, "poisoned answer")
	if err != nil || res.Cached || res.Instance != good {
		t.Fatalf("after the drop: %+v, %v", res, err)
	}

	// Forget drops them too (an instance removed from the pool).
	if _, err := e.proxy.Cache().DropAnswersOf(good); err != nil {
		t.Fatal(err)
	}
	if _, err := e.search(t, "fresh one"); err != nil {
		t.Fatal(err)
	}
	e.proxy.Forget(good)
	if _, ok := e.proxy.cache.Answers().Get((&Request{Query: "fresh one", PageNo: 1, Format: FormatJSON}).Key()); ok {
		t.Fatal("Forget left the instance's answer in memory")
	}
	if len(st.m) != 0 {
		t.Fatalf("Forget left %d answers in the store", len(st.m))
	}
}

func TestPurgeCache(t *testing.T) {
	st := newFakeCacheStore()
	e := newEnv(t, Config{Store: st}, sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	for _, q := range []string{"one", "two"} {
		if _, err := e.search(t, q); err != nil {
			t.Fatal(err)
		}
	}
	n, err := e.proxy.Cache().Purge()
	if err != nil || n != 4 {
		t.Fatalf("Purge = %d, %v; want 4 (2 in memory, 2 in the store)", n, err)
	}
	if entries, bytes := e.proxy.cache.Answers().Len(); entries != 0 || bytes != 0 || len(st.m) != 0 {
		t.Fatalf("after a purge: %d entries (%d bytes) in memory, %d in the store", entries, bytes, len(st.m))
	}
	res, err := e.search(t, "one")
	if err != nil || res.Cached {
		t.Fatalf("after a purge: %+v, %v", res, err)
	}
}

// Dropping an instance's answers and purging the cache reach its
// autocompletions too.
func TestDropAndPurgeReachAutocompletions(t *testing.T) {
	e := newEnv(t, Config{}, sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	e.proxy.setCaps(e.urls[0], func(c *Caps) { c.Autocomplete = "duckduckgo" })
	suggest := func() {
		t.Helper()
		if out, err := e.proxy.Autocomplete(context.Background(), "hel", "en"); err != nil || len(out) == 0 {
			t.Fatalf("suggestions %q, %v", out, err)
		}
	}
	suggest()
	if entries, _ := e.proxy.cache.Suggestions().Len(); entries != 1 {
		t.Fatalf("%d autocompletions cached, want 1", entries)
	}
	if n, err := e.proxy.Cache().DropAnswersOf(e.urls[0]); err != nil || n != 1 {
		t.Fatalf("DropAnswersOf = %d, %v; want the one autocompletion", n, err)
	}
	suggest()
	if n, err := e.proxy.Cache().Purge(); err != nil || n != 1 {
		t.Fatalf("Purge = %d, %v; want the one autocompletion", n, err)
	}
	if entries, _ := e.proxy.cache.Suggestions().Len(); entries != 0 {
		t.Fatalf("%d autocompletions left after a purge", entries)
	}
}
