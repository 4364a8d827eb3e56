package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func cacheKeys(t *testing.T, s *Store) []string {
	t.Helper()
	var keys []string
	err := s.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketCache).ForEach(func(k, _ []byte) error {
			keys = append(keys, string(k))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// cost is what entry(key, size, ...) counts against CacheMaxBytes.
func cost(key string, size int) int64 {
	return entryCost(len(key), 0, size-len(key), os.Getpagesize())
}

func entry(key string, size int, storedAt time.Duration) CacheEntry {
	return CacheEntry{Key: key, Value: bytes.Repeat([]byte{'v'}, size-len(key)), StoredAt: t0.Add(storedAt), Expires: t0.Add(storedAt + time.Hour)}
}

func TestCacheEviction(t *testing.T) {
	cases := []struct {
		name       string
		maxEntries int
		maxBytes   int64
		batches    [][]CacheEntry
		want       []string // what stays, sorted
	}{
		{
			name:       "by entries, oldest stored first",
			maxEntries: 3, maxBytes: 1 << 20,
			batches: [][]CacheEntry{
				{entry("a", 10, 5*time.Second), entry("b", 10, 1*time.Second), entry("c", 10, 3*time.Second)},
				{entry("d", 10, 4*time.Second), entry("e", 10, 2*time.Second)},
			},
			want: []string{"a", "c", "d"},
		},
		{
			name:       "by bytes, oldest stored first",
			maxEntries: 100, maxBytes: 2*cost("a", 40) + cost("d", 15),
			batches: [][]CacheEntry{
				{entry("a", 40, 1*time.Second), entry("b", 40, 2*time.Second)},
				{entry("c", 40, 3*time.Second)}, // 3 of 40: a goes
				{entry("d", 15, 4*time.Second)}, // the bound: stays
				{entry("e", 10, 5*time.Second)}, // over it: b goes
			},
			want: []string{"c", "d", "e"},
		},
		{
			name:       "rewriting a key moves it to the newest",
			maxEntries: 2, maxBytes: 1 << 20,
			batches: [][]CacheEntry{
				{entry("a", 10, 1*time.Second), entry("b", 10, 2*time.Second)},
				{entry("a", 10, 3*time.Second)},
				{entry("c", 10, 4*time.Second)},
			},
			want: []string{"a", "c"},
		},
		{
			name:       "an entry larger than the byte bound is not stored",
			maxEntries: 10, maxBytes: 2 * cost("a", 20),
			batches: [][]CacheEntry{
				{entry("a", 20, 1*time.Second), entry("b", 20, 2*time.Second)},
				{entry("huge", 200, 3*time.Second)},
			},
			want: []string{"a", "b"},
		},
		{
			name:       "one batch over the bound keeps its newest",
			maxEntries: 2, maxBytes: 1 << 20,
			batches: [][]CacheEntry{
				{entry("a", 10, 4*time.Second), entry("b", 10, 3*time.Second), entry("c", 10, 2*time.Second), entry("d", 10, 1*time.Second)},
			},
			want: []string{"a", "b"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := openT(t, testPath(t), Options{CacheMaxEntries: c.maxEntries, CacheMaxBytes: c.maxBytes})
			sizes := map[string]int64{}
			for _, b := range c.batches {
				if err := s.WriteBatch(Batch{Cache: b}); err != nil {
					t.Fatal(err)
				}
				for _, e := range b {
					sizes[e.Key] = cost(e.Key, len(e.Key)+len(e.Value))
				}
			}
			got := cacheKeys(t, s)
			if !slices.Equal(got, c.want) {
				t.Fatalf("cache holds %q, want %q", got, c.want)
			}
			var wantBytes int64
			for _, k := range c.want {
				wantBytes += sizes[k]
			}
			if n, b := s.CacheStats(); n != len(c.want) || b != wantBytes {
				t.Errorf("CacheStats = %d, %d; want %d, %d", n, b, len(c.want), wantBytes)
			}
			// The index matches: reopening finds nothing to rebuild or evict.
			path := s.Path()
			s.Close()
			s2 := openT(t, path, Options{CacheMaxEntries: c.maxEntries, CacheMaxBytes: c.maxBytes})
			if got := cacheKeys(t, s2); !slices.Equal(got, c.want) {
				t.Fatalf("after reopen the cache holds %q, want %q", got, c.want)
			}
			if n, b := s2.CacheStats(); n != len(c.want) || b != wantBytes {
				t.Errorf("CacheStats after reopen = %d, %d; want %d, %d", n, b, len(c.want), wantBytes)
			}
		})
	}
}

// Opening with smaller bounds evicts the oldest at once.
func TestCacheBoundsAppliedAtOpen(t *testing.T) {
	path := testPath(t)
	s := openT(t, path, Options{})
	var b Batch
	for i := range 10 {
		b.Cache = append(b.Cache, entry(fmt.Sprintf("k%d", i), 10, time.Duration(10-i)*time.Second))
	}
	if err := s.WriteBatch(b); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openT(t, path, Options{CacheMaxEntries: 3})
	if got, want := cacheKeys(t, s), []string{"k0", "k1", "k2"}; !slices.Equal(got, want) {
		t.Fatalf("cache holds %q, want %q", got, want)
	}
	if n, size := s.CacheStats(); n != 3 || size != 3*cost("k0", 10) {
		t.Fatalf("CacheStats = %d, %d", n, size)
	}
}

func TestCachePrune(t *testing.T) {
	s := openT(t, testPath(t), Options{})
	entries := []CacheEntry{
		{Key: "fresh", Value: []byte("1"), StoredAt: t0, Expires: t0.Add(time.Hour)},
		{Key: "stale", Value: []byte("2"), StoredAt: t0, Expires: t0.Add(-time.Minute)},     // expired, within the stale limit
		{Key: "too-stale", Value: []byte("3"), StoredAt: t0, Expires: t0.Add(-time.Hour)},   // expired past it
		{Key: "forever", Value: []byte("4"), StoredAt: t0.Add(-48 * time.Hour)},             // no expiry
		{Key: "edge", Value: []byte("5"), StoredAt: t0, Expires: t0.Add(-10 * time.Minute)}, // exactly at the limit: kept
	}
	if err := s.WriteBatch(Batch{Cache: entries}); err != nil {
		t.Fatal(err)
	}
	// Expired entries are still returned until pruned.
	if e, ok, err := s.CacheGet("too-stale"); !ok || err != nil || string(e.Value) != "3" {
		t.Fatalf("CacheGet(expired) = %+v, %v, %v", e, ok, err)
	}
	n, err := s.CachePrune(t0, 10*time.Minute)
	if err != nil || n != 1 {
		t.Fatalf("CachePrune = %d, %v; want 1", n, err)
	}
	if got, want := cacheKeys(t, s), []string{"edge", "forever", "fresh", "stale"}; !slices.Equal(got, want) {
		t.Fatalf("after prune the cache holds %q, want %q", got, want)
	}
	if c, size := s.CacheStats(); c != 4 || size != cost("edge", 5)+cost("forever", 8)+cost("fresh", 6)+cost("stale", 6) {
		t.Fatalf("CacheStats = %d, %d", c, size)
	}
	n, err = s.CachePrune(t0.Add(2*time.Hour), 0)
	if err != nil || n != 3 {
		t.Fatalf("second CachePrune = %d, %v; want 3", n, err)
	}
	if got := cacheKeys(t, s); !slices.Equal(got, []string{"forever"}) {
		t.Fatalf("after the second prune the cache holds %q", got)
	}
}

// A cache entry written without StoredAt is stored at Options.Now.
func TestCacheZeroStoredAtIsNow(t *testing.T) {
	s := openT(t, testPath(t), Options{})
	if err := s.WriteBatch(Batch{Cache: []CacheEntry{{Key: "k", Value: []byte("v")}}}); err != nil {
		t.Fatal(err)
	}
	e, ok, err := s.CacheGet("k")
	if !ok || err != nil || !e.StoredAt.Equal(t0) || !e.Expires.IsZero() {
		t.Fatalf("CacheGet = %+v, %v, %v", e, ok, err)
	}
}

// A cache index that does not match the entries (lost, or with records
// that cannot be read) is rebuilt at Open and eviction order is kept.
func TestCacheIndexRebuilt(t *testing.T) {
	path := testPath(t)
	s := openT(t, path, Options{})
	var b Batch
	for i := range 5 {
		b.Cache = append(b.Cache, entry(fmt.Sprintf("k%d", i), 10, time.Duration(i)*time.Second))
	}
	if err := s.WriteBatch(b); err != nil {
		t.Fatal(err)
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucketCacheOrder); err != nil {
			return err
		}
		if _, err := tx.CreateBucket(bucketCacheOrder); err != nil {
			return err
		}
		return tx.Bucket(bucketCache).Put([]byte("bad"), []byte{9, 9})
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openT(t, path, Options{CacheMaxEntries: 3})
	if got, want := cacheKeys(t, s), []string{"k2", "k3", "k4"}; !slices.Equal(got, want) {
		t.Fatalf("cache holds %q, want %q", got, want)
	}
	if n, size := s.CacheStats(); n != 3 || size != 3*cost("k0", 10) {
		t.Fatalf("CacheStats = %d, %d", n, size)
	}
}

func TestCacheRecordCodec(t *testing.T) {
	cases := []struct {
		storedAt, expires time.Time
		source            string
		value             []byte
	}{
		{t0, t0.Add(time.Hour), "https://a.example/", []byte("answer")},
		{t0, time.Time{}, "", nil},
		{time.Unix(0, 1), time.Unix(-5, 0), "x", []byte{0}},
		{t0.In(time.FixedZone("X", 3600)), t0, "", bytes.Repeat([]byte("x"), 1000)},
	}
	for i, c := range cases {
		r, err := decodeCacheRecord(encodeCacheRecord(c.storedAt, c.expires, c.source, c.value))
		if err != nil || !r.storedAt.Equal(c.storedAt) || !r.expires.Equal(c.expires) || r.expires.IsZero() != c.expires.IsZero() ||
			string(r.source) != c.source || !bytes.Equal(r.value, c.value) {
			t.Errorf("case %d: decoded %+v %v", i, r, err)
		}
	}
	short := encodeCacheRecord(t0, t0, "source", nil)[:cacheHeaderSize+2]
	format1 := make([]byte, 17)
	format1[0] = 1
	for _, bad := range [][]byte{nil, {cacheFormat}, make([]byte, cacheHeaderSize), short, format1} {
		if _, err := decodeCacheRecord(bad); err == nil {
			t.Errorf("decodeCacheRecord(%v) accepted it", bad)
		}
	}
	// The index orders by time, across the Unix epoch.
	times := []time.Time{time.Unix(-100, 0), time.Unix(0, 0), time.Unix(0, 1), t0, t0.Add(time.Nanosecond)}
	for i := 1; i < len(times); i++ {
		if bytes.Compare(orderKey(times[i-1], []byte("z")), orderKey(times[i], []byte("a"))) >= 0 {
			t.Errorf("orderKey(%v) does not sort before orderKey(%v)", times[i-1], times[i])
		}
	}
}

func FuzzDecodeCacheRecord(f *testing.F) {
	f.Add(encodeCacheRecord(t0, t0.Add(time.Hour), "https://a.example/", []byte("answer")))
	f.Add(encodeCacheRecord(t0, time.Time{}, "", nil))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeCacheRecord(b)
		if err != nil {
			return
		}
		if len(r.source)+len(r.value) != len(b)-cacheHeaderSize {
			t.Fatalf("source and value of %d bytes from a record of %d", len(r.source)+len(r.value), len(b))
		}
		re := encodeCacheRecord(r.storedAt, r.expires, string(r.source), r.value)
		if !bytes.Equal(re, b) {
			t.Fatalf("re-encoding %x gave %x", b, re)
		}
	})
}

// The key index CacheGet consults first follows the file through every
// way an entry comes and goes: each key the file holds is found, and the
// index holds nothing else.
func TestCacheKeyIndexFollowsTheFile(t *testing.T) {
	path := testPath(t)
	clk := fixedClock()
	s := openT(t, path, Options{Clock: clk, CacheMaxEntries: 20})
	check := func(when string) {
		t.Helper()
		keys := cacheKeys(t, s)
		for _, k := range keys {
			if !s.cacheIDs.has(k) {
				t.Fatalf("%s: the index misses %q, which the file holds", when, k)
			}
			if _, ok, err := s.CacheGet(k); err != nil || !ok {
				t.Fatalf("%s: CacheGet(%q) = %v, %v", when, k, ok, err)
			}
		}
		s.cacheIDs.mu.RLock()
		n := len(s.cacheIDs.m)
		s.cacheIDs.mu.RUnlock()
		if n != len(keys) {
			t.Fatalf("%s: the index holds %d keys, the file %d", when, n, len(keys))
		}
		if _, ok, err := s.CacheGet("never stored"); err != nil || ok {
			t.Fatalf("%s: CacheGet of a key never stored = %v, %v", when, ok, err)
		}
	}
	put := func(from, to int, source string, expires time.Time) {
		t.Helper()
		var b Batch
		for i := from; i < to; i++ {
			b.Cache = append(b.Cache, CacheEntry{Key: fmt.Sprintf("k%03d", i), Value: []byte("v"), Source: source, StoredAt: clk.Now(), Expires: expires})
		}
		if err := s.WriteBatch(b); err != nil {
			t.Fatal(err)
		}
	}
	check("empty")
	put(0, 15, "https://a.example/", t0.Add(time.Hour))
	check("after a batch")
	put(10, 30, "https://b.example/", t0.Add(time.Minute)) // replaces 10-14, evicts the oldest past 20
	check("after replacing and evicting")
	if _, err := s.CacheDropSource("https://a.example/"); err != nil {
		t.Fatal(err)
	}
	check("after dropping a source")
	if _, err := s.CachePrune(t0.Add(time.Hour), time.Second); err != nil {
		t.Fatal(err)
	}
	check("after pruning")
	put(40, 45, "https://c.example/", t0.Add(time.Hour))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CacheGet("k040"); !errors.Is(err, ErrClosed) {
		t.Fatalf("CacheGet after Close: %v, want ErrClosed", err)
	}
	s = openT(t, path, Options{Clock: clk, CacheMaxEntries: 20})
	check("after reopening")
	if len(cacheKeys(t, s)) != 5 {
		t.Fatalf("reopened with %d entries, want 5", len(cacheKeys(t, s)))
	}
	if _, err := s.CachePurge(); err != nil {
		t.Fatal(err)
	}
	check("after purging")
}
