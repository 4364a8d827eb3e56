package proxy

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/searxgate/searxgate/sim"
)

func TestMemCacheBounds(t *testing.T) {
	c := newMemCache(3, 0)
	for i := range 4 {
		c.put("k"+strconv.Itoa(i), &Cached{JSON: []byte("{}")})
	}
	if _, ok := c.get("k0"); ok {
		t.Fatal("the least recently used entry was not evicted")
	}
	for _, k := range []string{"k1", "k2", "k3"} {
		if _, ok := c.get(k); !ok {
			t.Fatalf("%s evicted too early", k)
		}
	}
	// Using k1 makes k2 the oldest.
	c.get("k1")
	c.put("k4", &Cached{JSON: []byte("{}")})
	if _, ok := c.get("k2"); ok {
		t.Fatal("LRU order not kept")
	}

	// The byte bound.
	one := (&Cached{JSON: make([]byte, 100)}).size("a")
	c = newMemCache(0, 2*one)
	c.put("a", &Cached{JSON: make([]byte, 100)})
	c.put("b", &Cached{JSON: make([]byte, 100)})
	c.put("c", &Cached{JSON: make([]byte, 100)})
	if n, bytes := c.len(); n != 2 || bytes != 2*one {
		t.Fatalf("len = %d, %d bytes; want 2, %d", n, bytes, 2*one)
	}
	if _, ok := c.get("a"); ok {
		t.Fatal("byte bound did not evict the oldest")
	}
	// An entry larger than the whole bound is not stored.
	c.put("huge", &Cached{JSON: make([]byte, 1000)})
	if _, ok := c.get("huge"); ok {
		t.Fatal("an entry over the byte bound was stored")
	}
	// Replacing keeps the byte count right.
	c.put("b", &Cached{JSON: make([]byte, 50), Expires: time.Unix(1, 0)})
	if _, bytes := c.len(); bytes != one+(&Cached{JSON: make([]byte, 50)}).size("b") {
		t.Fatalf("bytes after replace = %d", bytes)
	}
}

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

func TestCacheKeys(t *testing.T) {
	a, b := NewKeyer([]byte("secret one")), NewKeyer([]byte("secret two"))
	plain := (&Request{Query: "a very private question", PageNo: 1}).Key()
	k := a.CacheKey(plain)
	if len(k) != CacheKeyLen || k != a.CacheKey(plain) {
		t.Fatalf("key of %d bytes, or not the same twice", len(k))
	}
	if strings.Contains(k, "private") {
		t.Fatal("the key holds the query")
	}
	if b.CacheKey(plain) == k {
		t.Fatal("two secrets give the same key")
	}
	if a.CacheKey((&Request{Query: "a very private question", PageNo: 2}).Key()) == k {
		t.Fatal("two searches give the same key")
	}
	id, seal, ok := SplitCacheKey(k)
	if !ok || len(id) != CacheIDLen || len(seal) != CacheKeyLen-CacheIDLen || id == string(seal) {
		t.Fatalf("SplitCacheKey = %x, %x, %v", id, seal, ok)
	}
	if _, _, ok := SplitCacheKey(plain); ok {
		t.Fatal("a plain key split as a cache key")
	}
}

// fakeCacheStore is a CacheStore that keys, drops and purges, and records
// what it was given.
type fakeCacheStore struct {
	*Keyer
	mu      sync.Mutex // guards m, dropped and gets
	m       map[string]Cached
	dropped []string
	gets    int
}

func newFakeCacheStore() *fakeCacheStore {
	return &fakeCacheStore{Keyer: NewKeyer([]byte("install secret")), m: map[string]Cached{}}
}

func (f *fakeCacheStore) CacheGet(key string) (Cached, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets++
	c, ok := f.m[key]
	return c, ok
}

func (f *fakeCacheStore) CachePut(key string, c Cached) {
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
		if c.Instance == inst {
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
	if _, ok := e.proxy.cache.get(req.Key()); !ok {
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
	other := e.proxy.cacheKey("other search")
	e.proxy.cache.put(other, &Cached{JSON: []byte(`{}`), Instance: good, Expires: e.clock.Now().Add(time.Hour)})

	n, err := e.proxy.DropAnswersOf(hostile)
	if err != nil || n != 2 { // one in memory, one in the store
		t.Fatalf("DropAnswersOf = %d, %v; want 2", n, err)
	}
	if len(st.dropped) != 1 || st.dropped[0] != hostile {
		t.Fatalf("the store was told to drop %q", st.dropped)
	}
	if _, ok := e.proxy.cache.get(other); !ok {
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
	if _, err := e.proxy.DropAnswersOf(good); err != nil {
		t.Fatal(err)
	}
	if _, err := e.search(t, "fresh one"); err != nil {
		t.Fatal(err)
	}
	e.proxy.Forget(good)
	if _, ok := e.proxy.cache.get((&Request{Query: "fresh one", PageNo: 1, Format: FormatJSON}).Key()); ok {
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
	n, err := e.proxy.PurgeCache()
	if err != nil || n != 4 {
		t.Fatalf("PurgeCache = %d, %v; want 4 (2 in memory, 2 in the store)", n, err)
	}
	if entries, bytes := e.proxy.cache.len(); entries != 0 || bytes != 0 || len(st.m) != 0 {
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
	if entries, _ := e.proxy.acCache.len(); entries != 1 {
		t.Fatalf("%d autocompletions cached, want 1", entries)
	}
	if n, err := e.proxy.DropAnswersOf(e.urls[0]); err != nil || n != 1 {
		t.Fatalf("DropAnswersOf = %d, %v; want the one autocompletion", n, err)
	}
	suggest()
	if n, err := e.proxy.PurgeCache(); err != nil || n != 1 {
		t.Fatalf("PurgeCache = %d, %v; want the one autocompletion", n, err)
	}
	if entries, _ := e.proxy.acCache.len(); entries != 0 {
		t.Fatalf("%d autocompletions left after a purge", entries)
	}
}
