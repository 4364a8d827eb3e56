package cache_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/searxgate/searxgate/proxy/cache"
	"github.com/searxgate/searxgate/proxy/cache/cachetest"
)

var errWrite = errors.New("disk full")

var wbT0 = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// put queues the answer of the search q, given by inst, and returns its key.
func put(w *cache.WriteBehind, q, inst string) string {
	key := w.CacheKey(q)
	w.CachePut(key, cache.Entry{JSON: []byte(`{"query":"` + q + `"}`), Instance: inst, StoredAt: wbT0, Expires: wbT0.Add(time.Hour)})
	return key
}

// Answers wait unsealed until a flush takes them; what the flush writes
// is the id and the sealed answer, never the search, and it reads back.
func TestWriteBehindSealsAtFlush(t *testing.T) {
	f := cachetest.NewSealedFile()
	w := cache.NewWriteBehind(f, cache.WriteBehindConfig{Secret: []byte("install secret")})
	keys := []string{put(w, "secret words", "https://a.example/"), put(w, "other words", "https://b.example/")}
	if n := cache.SealedPending(w); n != 0 {
		t.Errorf("%d answers were sealed before a flush took them", n)
	}
	if _, ok := w.CacheGet(keys[0]); ok || f.Len() != 0 {
		t.Fatal("an answer reached the file before a flush")
	}
	var written []cache.Sealed
	err := w.Flush(func(s []cache.Sealed) error { written = s; return f.Write(s) })
	if err != nil || len(written) != 2 || w.Pending() != 0 {
		t.Fatalf("Flush = %v, wrote %d, %d still pending", err, len(written), w.Pending())
	}
	for i, s := range written {
		if id, _, _ := cache.SplitKey(keys[i]); s.ID != id {
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
	if _, ok := w.CacheGet(cache.NewKeyer([]byte("another secret")).CacheKey("secret words")); ok {
		t.Fatal("an answer opened under another secret's key")
	}
}

// The queue is bounded: past MaxPending the oldest answers go.
func TestWriteBehindBoundedQueue(t *testing.T) {
	f := cachetest.NewSealedFile()
	w := cache.NewWriteBehind(f, cache.WriteBehindConfig{Secret: []byte("s"), MaxPending: 3})
	var keys []string
	for i := range 5 {
		keys = append(keys, put(w, fmt.Sprint("q", i), "https://a.example/"))
	}
	if w.Pending() != 3 {
		t.Fatalf("%d pending, want 3", w.Pending())
	}
	if err := w.Flush(f.Write); err != nil {
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
	f := cachetest.NewSealedFile()
	w := cache.NewWriteBehind(f, cache.WriteBehindConfig{Secret: []byte("s"), MaxPending: 3})
	put(w, "a", "https://a.example/")
	put(w, "b", "https://a.example/")
	var first []cache.Sealed
	if err := w.Flush(func(s []cache.Sealed) error { first = slices.Clone(s); return errWrite }); !errors.Is(err, errWrite) {
		t.Fatalf("Flush = %v, want the write's error", err)
	}
	if w.Pending() != 2 {
		t.Fatalf("%d pending after a failed flush, want 2", w.Pending())
	}
	put(w, "c", "https://a.example/")
	put(w, "d", "https://a.example/") // past the bound: "a" goes
	var second []cache.Sealed
	if err := w.Flush(func(s []cache.Sealed) error { second = s; return f.Write(s) }); err != nil {
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
			f := cachetest.NewSealedFile()
			w := cache.NewWriteBehind(f, cache.WriteBehindConfig{Secret: []byte("s")})
			put(w, "stored", "https://hostile.example/")
			if err := w.Flush(f.Write); err != nil {
				t.Fatal(err)
			}
			put(w, "waiting", "https://hostile.example/")
			done := make(chan int, 1)
			for _, fails := range []bool{true, false} {
				put(w, fmt.Sprint("waiting ", fails), "https://hostile.example/")
				err := w.Flush(func(s []cache.Sealed) error {
					if !cache.FlushHolds(w) {
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
					return f.Write(s)
				})
				if fails != (err != nil) {
					t.Fatalf("Flush = %v", err)
				}
				<-done
				if w.Pending() != 0 || f.Len() != 0 {
					t.Fatalf("after a %s during a flush (failing %v): %d pending, %d stored", name, fails, w.Pending(), f.Len())
				}
			}
		})
	}
}

// Drops and purges count what waited and what was stored.
func TestWriteBehindDropCountsBoth(t *testing.T) {
	f := cachetest.NewSealedFile()
	w := cache.NewWriteBehind(f, cache.WriteBehindConfig{Secret: []byte("s")})
	put(w, "one", "https://a.example/, https://b.example/")
	put(w, "two", "https://c.example/")
	if err := w.Flush(f.Write); err != nil {
		t.Fatal(err)
	}
	put(w, "three", "https://b.example/")
	if n, err := w.CacheDropInstance("https://b.example/"); n != 2 || err != nil {
		t.Fatalf("CacheDropInstance = %d, %v; want the fan-out's stored and the waiting one", n, err)
	}
	put(w, "four", "https://c.example/")
	if n, err := w.CachePurge(); n != 2 || err != nil || f.Len() != 0 || w.Pending() != 0 {
		t.Fatalf("CachePurge = %d, %v; %d stored, %d pending", n, err, f.Len(), w.Pending())
	}
}

// With NoCache nothing is read, queued or written, and what an earlier
// run stored is dropped at once.
func TestWriteBehindNoCache(t *testing.T) {
	f := cachetest.NewSealedFile()
	w := cache.NewWriteBehind(f, cache.WriteBehindConfig{Secret: []byte("s")})
	key := put(w, "kept before", "https://a.example/")
	if err := w.Flush(f.Write); err != nil {
		t.Fatal(err)
	}
	off := cache.NewWriteBehind(f, cache.WriteBehindConfig{Secret: []byte("s"), NoCache: true})
	if f.Len() != 0 || f.Purges() != 1 {
		t.Fatalf("an earlier run's answers: %d stored, %d purges", f.Len(), f.Purges())
	}
	put(w, "kept before", "https://a.example/") // by a process with a cache
	if err := w.Flush(f.Write); err != nil {
		t.Fatal(err)
	}
	if _, ok := off.CacheGet(key); ok {
		t.Fatal("an answer was read from the file with NoCache")
	}
	put(off, "never kept", "https://a.example/")
	if off.Pending() != 0 {
		t.Fatal("an answer was queued with NoCache")
	}
	cache.NewWriteBehind(cachetest.NewSealedFile(), cache.WriteBehindConfig{NoCache: true}) // an empty file is not purged
}
