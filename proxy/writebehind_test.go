package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/searxgate/searxgate/sim"
)

// fakeSealedFile is a SealedFile in memory.
type fakeSealedFile struct {
	mu     sync.Mutex // guards all
	m      map[string]Sealed
	purges int
}

func newFakeSealedFile() *fakeSealedFile { return &fakeSealedFile{m: map[string]Sealed{}} }

func (f *fakeSealedFile) CacheRecord(id string) (string, time.Time, time.Time, []byte, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.m[id]
	return s.Source, s.StoredAt, s.Expires, s.Value, ok, nil
}

func (f *fakeSealedFile) CacheDropSource(source string) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for id, s := range f.m {
		if AnsweredBy(s.Source, source) {
			delete(f.m, id)
			n++
		}
	}
	return n, nil
}

func (f *fakeSealedFile) CachePurge() (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.m)
	clear(f.m)
	f.purges++
	return n, nil
}

func (f *fakeSealedFile) CachePrune(now time.Time, maxStale time.Duration) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for id, s := range f.m {
		if s.Expires.Before(now.Add(-maxStale)) {
			delete(f.m, id)
			n++
		}
	}
	return n, nil
}

func (f *fakeSealedFile) CacheStats() (int, int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.m), 0
}

// write is a Flush's write that keeps the answers in f.
func (f *fakeSealedFile) write(answers []Sealed) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range answers {
		f.m[s.ID] = s
	}
	return nil
}

func (f *fakeSealedFile) len() int {
	n, _ := f.CacheStats()
	return n
}

var errWrite = errors.New("disk full")

var wbT0 = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// put queues the answer of the search q, given by inst, and returns its key.
func put(w *WriteBehind, q, inst string) string {
	key := w.CacheKey(q)
	w.CachePut(key, Cached{JSON: []byte(`{"query":"` + q + `"}`), Instance: inst, StoredAt: wbT0, Expires: wbT0.Add(time.Hour)})
	return key
}

// Answers wait unsealed until a flush takes them; what the flush writes
// is the id and the sealed answer, never the search, and it reads back.
func TestWriteBehindSealsAtFlush(t *testing.T) {
	f := newFakeSealedFile()
	w := NewWriteBehind(f, WriteBehindConfig{Secret: []byte("install secret")})
	keys := []string{put(w, "secret words", "https://a.example/"), put(w, "other words", "https://b.example/")}
	w.mu.Lock()
	for _, a := range w.pending {
		if a.sealed.Value != nil {
			t.Error("an answer was sealed before a flush took it")
		}
	}
	w.mu.Unlock()
	if _, ok := w.CacheGet(keys[0]); ok || f.len() != 0 {
		t.Fatal("an answer reached the file before a flush")
	}
	var written []Sealed
	err := w.Flush(func(s []Sealed) error { written = s; return f.write(s) })
	if err != nil || len(written) != 2 || w.Pending() != 0 {
		t.Fatalf("Flush = %v, wrote %d, %d still pending", err, len(written), w.Pending())
	}
	for i, s := range written {
		if id, _, _ := SplitCacheKey(keys[i]); s.ID != id {
			t.Errorf("answer %d is filed under %x, want its key's id", i, s.ID)
		}
		if bytes.Contains(s.Value, []byte("words")) || strings.Contains(s.ID, "words") {
			t.Errorf("answer %d holds the query in the clear", i)
		}
	}
	c, ok := w.CacheGet(keys[0])
	if !ok || string(c.JSON) != `{"query":"secret words"}` || c.Instance != "https://a.example/" || !c.Expires.Equal(wbT0.Add(time.Hour)) {
		t.Fatalf("read back: %+v, %v", c, ok)
	}
	if _, ok := w.CacheGet(NewKeyer([]byte("another secret")).CacheKey("secret words")); ok {
		t.Fatal("an answer opened under another secret's key")
	}
}

// The queue is bounded: past MaxPending the oldest answers go.
func TestWriteBehindBoundedQueue(t *testing.T) {
	f := newFakeSealedFile()
	w := NewWriteBehind(f, WriteBehindConfig{Secret: []byte("s"), MaxPending: 3})
	var keys []string
	for i := range 5 {
		keys = append(keys, put(w, fmt.Sprint("q", i), "https://a.example/"))
	}
	if w.Pending() != 3 {
		t.Fatalf("%d pending, want 3", w.Pending())
	}
	if err := w.Flush(f.write); err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		if _, ok := w.CacheGet(k); ok != (i >= 2) {
			t.Errorf("answer %d stored %v", i, ok)
		}
	}
}

// A failed flush loses nothing: its answers wait again, sealed once,
// ahead of newer ones, within the bound.
func TestWriteBehindFailedFlushLosesNothing(t *testing.T) {
	f := newFakeSealedFile()
	w := NewWriteBehind(f, WriteBehindConfig{Secret: []byte("s"), MaxPending: 3})
	put(w, "a", "https://a.example/")
	put(w, "b", "https://a.example/")
	var first []Sealed
	if err := w.Flush(func(s []Sealed) error { first = slices.Clone(s); return errWrite }); !errors.Is(err, errWrite) {
		t.Fatalf("Flush = %v, want the write's error", err)
	}
	if w.Pending() != 2 {
		t.Fatalf("%d pending after a failed flush, want 2", w.Pending())
	}
	put(w, "c", "https://a.example/")
	put(w, "d", "https://a.example/") // past the bound: "a" goes
	var second []Sealed
	if err := w.Flush(func(s []Sealed) error { second = s; return f.write(s) }); err != nil {
		t.Fatal(err)
	}
	if len(second) != 3 || second[0].ID != first[1].ID || !bytes.Equal(second[0].Value, first[1].Value) {
		t.Fatalf("the second flush wrote %d answers; want b (as sealed the first time), c, d", len(second))
	}
	if _, ok := w.CacheGet(w.CacheKey("d")); !ok {
		t.Fatal("the newest answer was not written")
	}
}

// A drop or a purge waits for a flush under way, so it cannot land
// between the flush taking answers and writing (or putting back) them.
func TestWriteBehindDropCannotBeUndoneByAFlush(t *testing.T) {
	for _, name := range []string{"drop", "purge"} {
		t.Run(name, func(t *testing.T) {
			f := newFakeSealedFile()
			w := NewWriteBehind(f, WriteBehindConfig{Secret: []byte("s")})
			put(w, "stored", "https://hostile.example/")
			if err := w.Flush(f.write); err != nil {
				t.Fatal(err)
			}
			put(w, "waiting", "https://hostile.example/")
			done := make(chan int, 1)
			for _, fails := range []bool{true, false} {
				put(w, fmt.Sprint("waiting ", fails), "https://hostile.example/")
				err := w.Flush(func(s []Sealed) error {
					if w.flushing.TryLock() {
						t.Fatal("a flush runs without holding off drops")
					}
					go func() {
						var n int
						if name == "drop" {
							n, _ = w.CacheDropInstance("https://hostile.example/")
						} else {
							n, _ = w.CachePurge()
						}
						done <- n
					}()
					if fails {
						return errWrite
					}
					return f.write(s)
				})
				if fails != (err != nil) {
					t.Fatalf("Flush = %v", err)
				}
				<-done
				if w.Pending() != 0 || f.len() != 0 {
					t.Fatalf("after a %s during a flush (failing %v): %d pending, %d stored", name, fails, w.Pending(), f.len())
				}
			}
		})
	}
}

// Drops and purges count what waited and what was stored.
func TestWriteBehindDropCountsBoth(t *testing.T) {
	f := newFakeSealedFile()
	w := NewWriteBehind(f, WriteBehindConfig{Secret: []byte("s")})
	put(w, "one", "https://a.example/, https://b.example/")
	put(w, "two", "https://c.example/")
	if err := w.Flush(f.write); err != nil {
		t.Fatal(err)
	}
	put(w, "three", "https://b.example/")
	if n, err := w.CacheDropInstance("https://b.example/"); n != 2 || err != nil {
		t.Fatalf("CacheDropInstance = %d, %v; want the fan-out's stored and the waiting one", n, err)
	}
	put(w, "four", "https://c.example/")
	if n, err := w.CachePurge(); n != 2 || err != nil || f.len() != 0 || w.Pending() != 0 {
		t.Fatalf("CachePurge = %d, %v; %d stored, %d pending", n, err, f.len(), w.Pending())
	}
}

// With NoCache nothing is read, queued or written, and what an earlier
// run stored is dropped at once.
func TestWriteBehindNoCache(t *testing.T) {
	f := newFakeSealedFile()
	w := NewWriteBehind(f, WriteBehindConfig{Secret: []byte("s")})
	key := put(w, "kept before", "https://a.example/")
	if err := w.Flush(f.write); err != nil {
		t.Fatal(err)
	}
	off := NewWriteBehind(f, WriteBehindConfig{Secret: []byte("s"), NoCache: true})
	if f.len() != 0 || f.purges != 1 {
		t.Fatalf("an earlier run's answers: %d stored, %d purges", f.len(), f.purges)
	}
	put(w, "kept before", "https://a.example/") // by a process with a cache
	if err := w.Flush(f.write); err != nil {
		t.Fatal(err)
	}
	if _, ok := off.CacheGet(key); ok {
		t.Fatal("an answer was read from the file with NoCache")
	}
	put(off, "never kept", "https://a.example/")
	if off.Pending() != 0 {
		t.Fatal("an answer was queued with NoCache")
	}
	NewWriteBehind(newFakeSealedFile(), WriteBehindConfig{NoCache: true}) // an empty file is not purged
}

// Behind a proxy: an answer searched once is written by the next flush
// and served from the file to a proxy that never saw it (a restart).
func TestWriteBehindBehindAProxy(t *testing.T) {
	f := newFakeSealedFile()
	secret := []byte("install secret")
	e := newEnv(t, Config{Store: NewWriteBehind(f, WriteBehindConfig{Secret: secret})},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	if _, err := e.search(t, "remember me"); err != nil {
		t.Fatal(err)
	}
	wb := e.proxy.cfg.Store.(*WriteBehind)
	if err := wb.Flush(f.write); err != nil || f.len() != 1 {
		t.Fatalf("Flush = %v, %d stored", err, f.len())
	}
	again := newEnv(t, Config{Store: NewWriteBehind(f, WriteBehindConfig{Secret: secret})},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	res, err := again.search(t, "remember me")
	if err != nil || !res.Cached || again.searches(0) != 0 {
		t.Fatalf("after a restart: %+v, %v, %d upstream searches", res, err, again.searches(0))
	}
}

// PruneCache drops what can no longer be served, even stale: in memory,
// in the file, and the expired autocompletions.
func TestPruneCache(t *testing.T) {
	f := newFakeSealedFile()
	wb := NewWriteBehind(f, WriteBehindConfig{Secret: []byte("s")})
	e := newEnv(t, Config{Store: wb, CacheTTL: time.Hour, StaleFor: 24 * time.Hour},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	e.proxy.setCaps(e.urls[0], func(c *Caps) { c.Autocomplete = "duckduckgo" })
	if _, err := e.search(t, "old one"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.proxy.Autocomplete(t.Context(), "old", "en"); err != nil {
		t.Fatal(err)
	}
	if err := wb.Flush(f.write); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(24 * time.Hour) // expired 23 h ago: still served stale
	if _, err := e.search(t, "new one"); err != nil {
		t.Fatal(err)
	}
	if err := wb.Flush(f.write); err != nil {
		t.Fatal(err)
	}
	if n, err := e.proxy.PruneCache(e.clock.Now()); n != 1 || err != nil {
		t.Fatalf("PruneCache = %d, %v; want the expired autocompletion only", n, err)
	}
	e.clock.Advance(time.Hour + time.Second)
	if n, err := e.proxy.PruneCache(e.clock.Now()); n != 2 || err != nil {
		t.Fatalf("PruneCache = %d, %v; want the old answer, in memory and in the file", n, err)
	}
	if entries, _ := e.proxy.cache.len(); entries != 1 || f.len() != 1 {
		t.Fatalf("after pruning: %d in memory, %d in the file; want the new one in each", entries, f.len())
	}
}
