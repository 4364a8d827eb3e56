package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/searxgate/searxgate/internal/clock"
)

var t0 = time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.UTC)

// fixedClock is a clock that stays at t0.
func fixedClock() *clock.Fake { return clock.NewFake(t0) }

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func testPath(t testing.TB) string { return filepath.Join(t.TempDir(), "data", FileName) }

func openT(t testing.TB, path string, opts Options) *Store {
	t.Helper()
	if opts.Clock == nil {
		opts.Clock = fixedClock()
	}
	if opts.Logger == nil {
		opts.Logger = discard()
	}
	s, err := Open(path, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestOpenCreatesFolderAndSchema(t *testing.T) {
	path := testPath(t)
	s := openT(t, path, Options{})
	if s.Path() != path {
		t.Errorf("Path() = %q, want %q", s.Path(), path)
	}
	if s.Recovered() != "" {
		t.Errorf("Recovered() = %q on a new file", s.Recovered())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		for _, name := range allBuckets {
			if tx.Bucket(name) == nil {
				t.Errorf("bucket %s missing", name)
			}
		}
		if got := string(tx.Bucket(bucketMeta).Get(keySchema)); got != fmt.Sprint(SchemaVersion) {
			t.Errorf("schema version = %q, want %d", got, SchemaVersion)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Everything written survives a Close and an Open, bucket by bucket.
func TestRoundTripEveryBucket(t *testing.T) {
	path := testPath(t)
	s := openT(t, path, Options{})

	pool := map[string][]byte{
		"https://a.example/": []byte(`{"latency_ewma_ms":412.5,"circuit":"closed"}`),
		"https://b.example/": []byte(`{"latency_ewma_ms":980,"circuit":"open","cooldown_until":"2025-03-14T16:00:00Z"}`),
		"https://c.example/": []byte(`{}`),
		"https://e.example/": {},
	}
	caps := map[string][]byte{
		"https://a.example/": []byte(`{"json":true,"limiter":false}`),
		"https://b.example/": []byte(`{"json":false,"limiter":true,"link_token":true}`),
	}
	if err := s.WriteBatch(Batch{Pool: pool, Caps: caps}); err != nil {
		t.Fatal(err)
	}
	// A second batch: update one, delete one of each, and put cache entries.
	pool2 := map[string][]byte{"https://a.example/": []byte(`{"latency_ewma_ms":300}`), "https://d.example/": []byte(`{"x":1}`)}
	cache := []CacheEntry{
		{Key: "q=go&format=json", Value: []byte(`{"results":[]}`), StoredAt: t0, Expires: t0.Add(time.Hour)},
		{Key: "q=bbolt", Value: []byte("<html>"), StoredAt: t0.Add(time.Second)}, // never expires
		{Key: "q=empty", Value: nil, StoredAt: t0.Add(2 * time.Second), Expires: t0.Add(time.Minute)},
	}
	if err := s.WriteBatch(Batch{Pool: pool2, PoolDelete: []string{"https://c.example/"}, CapsDelete: []string{"https://b.example/"}, Cache: cache}); err != nil {
		t.Fatal(err)
	}
	ops := []Operator{
		{URL: "https://own.home.arpa/", Added: true, Tier: "own", UpdatedAt: t0},
		{URL: "https://bad.example/", Removed: true, UpdatedAt: t0.Add(time.Minute)},
		{URL: "https://slow.example/", Disabled: true, UpdatedAt: t0.Add(2 * time.Minute)},
		{URL: "https://gone.example/", Added: true, UpdatedAt: t0},
	}
	for _, o := range ops {
		if err := s.PutOperator(o); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteOperator("https://gone.example/"); err != nil {
		t.Fatal(err)
	}
	dir := Directory{Raw: []byte(`{"instances":{"https://a.example/":{}}}`), ETag: `W/"abc"`, LastModified: "Fri, 14 Mar 2025 15:00:00 GMT", FetchedAt: t0}
	if err := s.SaveDirectory(dir); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openT(t, path, Options{})
	gotPool, err := s.LoadPool()
	if err != nil {
		t.Fatal(err)
	}
	wantPool := map[string][]byte{
		"https://a.example/": pool2["https://a.example/"],
		"https://b.example/": pool["https://b.example/"],
		"https://d.example/": pool2["https://d.example/"],
		"https://e.example/": {},
	}
	if !equalMaps(gotPool, wantPool) {
		t.Errorf("LoadPool = %s\nwant %s", dump(gotPool), dump(wantPool))
	}
	gotCaps, err := s.LoadCaps()
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string][]byte{"https://a.example/": caps["https://a.example/"]}; !equalMaps(gotCaps, want) {
		t.Errorf("LoadCaps = %s\nwant %s", dump(gotCaps), dump(want))
	}

	gotOps, err := s.Operators()
	if err != nil {
		t.Fatal(err)
	}
	wantOps := []Operator{ops[1], ops[0], ops[2]} // sorted by URL, "gone" deleted
	if len(gotOps) != len(wantOps) {
		t.Fatalf("Operators = %+v, want %+v", gotOps, wantOps)
	}
	for i := range wantOps {
		g, w := gotOps[i], wantOps[i]
		if g.URL != w.URL || g.Added != w.Added || g.Removed != w.Removed || g.Disabled != w.Disabled || g.Tier != w.Tier || !g.UpdatedAt.Equal(w.UpdatedAt) {
			t.Errorf("Operators[%d] = %+v, want %+v", i, g, w)
		}
	}

	gotDir, ok, err := s.LoadDirectory()
	if err != nil || !ok {
		t.Fatalf("LoadDirectory = %v, %v", ok, err)
	}
	if !bytes.Equal(gotDir.Raw, dir.Raw) || gotDir.ETag != dir.ETag || gotDir.LastModified != dir.LastModified || !gotDir.FetchedAt.Equal(dir.FetchedAt) {
		t.Errorf("LoadDirectory = %+v, want %+v", gotDir, dir)
	}

	for _, want := range cache {
		got, ok, err := s.CacheGet(want.Key)
		if err != nil || !ok {
			t.Fatalf("CacheGet(%q) = %v, %v", want.Key, ok, err)
		}
		if got.Key != want.Key || !bytes.Equal(got.Value, want.Value) || !got.StoredAt.Equal(want.StoredAt) || !got.Expires.Equal(want.Expires) || got.Expires.IsZero() != want.Expires.IsZero() {
			t.Errorf("CacheGet(%q) = %+v, want %+v", want.Key, got, want)
		}
	}
	if _, ok, err := s.CacheGet("q=missing"); ok || err != nil {
		t.Errorf("CacheGet(missing) = %v, %v", ok, err)
	}
	entries, size := s.CacheStats()
	wantSize := int64(0)
	for _, e := range cache {
		wantSize += entryCost(len(e.Key), len(e.Source), len(e.Value), s.pageSize)
	}
	if entries != len(cache) || size != wantSize {
		t.Errorf("CacheStats after reopen = %d, %d; want %d, %d", entries, size, len(cache), wantSize)
	}
}

func TestLoadDirectoryNone(t *testing.T) {
	s := openT(t, testPath(t), Options{})
	d, ok, err := s.LoadDirectory()
	if ok || err != nil || d.Raw != nil {
		t.Fatalf("LoadDirectory on a new store = %+v, %v, %v", d, ok, err)
	}
	// A saved directory replaces the one before, ETag and all.
	for i, d := range []Directory{{Raw: []byte("one"), ETag: "1", FetchedAt: t0}, {Raw: []byte("two"), FetchedAt: t0.Add(time.Hour)}} {
		if err := s.SaveDirectory(d); err != nil {
			t.Fatal(err)
		}
		got, ok, err := s.LoadDirectory()
		if !ok || err != nil || string(got.Raw) != string(d.Raw) || got.ETag != d.ETag || !got.FetchedAt.Equal(d.FetchedAt) {
			t.Errorf("save %d: LoadDirectory = %+v, %v, %v", i, got, ok, err)
		}
	}
}

func TestBatchDeleteWinsOverUpsert(t *testing.T) {
	s := openT(t, testPath(t), Options{})
	if err := s.WriteBatch(Batch{Pool: map[string][]byte{"u": []byte("1")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteBatch(Batch{Pool: map[string][]byte{"u": []byte("2")}, PoolDelete: []string{"u", "never-there"}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.LoadPool()
	if err != nil || len(got) != 0 {
		t.Fatalf("LoadPool = %s, %v; want empty", dump(got), err)
	}
}

// ReplacePool makes Pool the whole set: what is not in it goes, in the
// same transaction as the capabilities and the cache; a batch that fails
// deletes nothing.
func TestBatchReplacePool(t *testing.T) {
	s := openT(t, testPath(t), Options{})
	err := s.WriteBatch(Batch{Pool: map[string][]byte{"https://a/": []byte("1"), "https://b/": []byte("1"), "https://c/": []byte("1")}})
	if err != nil {
		t.Fatal(err)
	}
	// An invalid cache entry fails the whole batch: nothing is deleted.
	bad := Batch{Pool: map[string][]byte{"https://a/": []byte("2")}, ReplacePool: true, Cache: []CacheEntry{{Key: ""}}}
	if err := s.WriteBatch(bad); err == nil {
		t.Fatal("a batch with an empty cache key was written")
	}
	if got, _ := s.LoadPool(); len(got) != 3 {
		t.Fatalf("after a failed batch the pool holds %s", dump(got))
	}
	err = s.WriteBatch(Batch{
		Pool: map[string][]byte{"https://a/": []byte("2"), "https://d/": []byte("2")}, ReplacePool: true,
		Caps:  map[string][]byte{"https://b/": []byte("c")},
		Cache: []CacheEntry{{Key: "k", Value: []byte("v"), Source: "https://a/"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.LoadPool()
	if err != nil || len(got) != 2 || string(got["https://a/"]) != "2" || string(got["https://d/"]) != "2" {
		t.Fatalf("LoadPool = %s, %v; want a and d only", dump(got), err)
	}
	if caps, _ := s.LoadCaps(); string(caps["https://b/"]) != "c" {
		t.Fatalf("the capabilities of the same batch: %s", dump(caps))
	}
	if src, _, _, v, ok, err := s.CacheRecord("k"); !ok || err != nil || src != "https://a/" || string(v) != "v" {
		t.Fatalf("CacheRecord = %q, %q, %v, %v", src, v, ok, err)
	}
	// An empty set empties the bucket.
	if err := s.WriteBatch(Batch{ReplacePool: true}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.LoadPool(); len(got) != 0 {
		t.Fatalf("after an empty replace the pool holds %s", dump(got))
	}
	if err := s.WriteBatch(Batch{ReplacePool: true}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, _, ok, err := s.CacheRecord("never"); ok || err != nil {
		t.Fatalf("CacheRecord of a missing key: %v, %v", ok, err)
	}
}

func TestResetPoolKeepsTheRest(t *testing.T) {
	s := openT(t, testPath(t), Options{})
	err := s.WriteBatch(Batch{
		Pool: map[string][]byte{"https://a/": []byte("p")},
		Caps: map[string][]byte{"https://a/": []byte("c")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutOperator(Operator{URL: "https://a/", Disabled: true, UpdatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if err := s.ResetPool(); err != nil {
		t.Fatal(err)
	}
	if p, err := s.LoadPool(); err != nil || len(p) != 0 {
		t.Errorf("LoadPool after ResetPool = %s, %v", dump(p), err)
	}
	if c, err := s.LoadCaps(); err != nil || string(c["https://a/"]) != "c" {
		t.Errorf("LoadCaps after ResetPool = %s, %v", dump(c), err)
	}
	if o, err := s.Operators(); err != nil || len(o) != 1 || !o[0].Disabled {
		t.Errorf("Operators after ResetPool = %+v, %v", o, err)
	}
	// The pool still takes writes after a reset.
	if err := s.WriteBatch(Batch{Pool: map[string][]byte{"https://b/": []byte("q")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.ResetCaps(); err != nil {
		t.Fatal(err)
	}
	if c, err := s.LoadCaps(); err != nil || len(c) != 0 {
		t.Errorf("LoadCaps after ResetCaps = %s, %v", dump(c), err)
	}
	if p, err := s.LoadPool(); err != nil || string(p["https://b/"]) != "q" {
		t.Errorf("LoadPool after ResetCaps = %s, %v", dump(p), err)
	}
}

// Reads hand out copies, and writes do not keep the caller's slices.
func TestCopiesAreTheCallers(t *testing.T) {
	s := openT(t, testPath(t), Options{})
	val := []byte("original")
	if err := s.WriteBatch(Batch{Pool: map[string][]byte{"k": val}, Cache: []CacheEntry{{Key: "c", Value: val, StoredAt: t0}}}); err != nil {
		t.Fatal(err)
	}
	copy(val, "CHANGED!")
	p, _ := s.LoadPool()
	e, _, _ := s.CacheGet("c")
	if string(p["k"]) != "original" || string(e.Value) != "original" {
		t.Fatalf("store kept the caller's slice: pool %q, cache %q", p["k"], e.Value)
	}
	copy(p["k"], "XXXXXXXX")
	copy(e.Value, "YYYYYYYY")
	p2, _ := s.LoadPool()
	e2, _, _ := s.CacheGet("c")
	if string(p2["k"]) != "original" || string(e2.Value) != "original" {
		t.Fatalf("a read returned memory the store reuses: pool %q, cache %q", p2["k"], e2.Value)
	}
	if err := s.SaveDirectory(Directory{Raw: []byte("raw"), FetchedAt: t0}); err != nil {
		t.Fatal(err)
	}
	d, _, _ := s.LoadDirectory()
	copy(d.Raw, "XXX")
	d2, _, _ := s.LoadDirectory()
	if string(d2.Raw) != "raw" {
		t.Fatalf("LoadDirectory returned memory the store reuses: %q", d2.Raw)
	}
}

func TestInvalidArguments(t *testing.T) {
	long := strings.Repeat("x", bolt.MaxKeySize+1)
	cases := []struct {
		name string
		call func(*Store) error
	}{
		{"empty pool key", func(s *Store) error { return s.WriteBatch(Batch{Pool: map[string][]byte{"": []byte("v")}}) }},
		{"long caps key", func(s *Store) error { return s.WriteBatch(Batch{Caps: map[string][]byte{long: nil}}) }},
		{"empty delete key", func(s *Store) error { return s.WriteBatch(Batch{PoolDelete: []string{""}}) }},
		{"empty cache key", func(s *Store) error { return s.WriteBatch(Batch{Cache: []CacheEntry{{Value: []byte("v")}}}) }},
		{"empty operator URL", func(s *Store) error { return s.PutOperator(Operator{}) }},
		{"empty operator delete", func(s *Store) error { return s.DeleteOperator("") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := openT(t, testPath(t), Options{})
			good := map[string][]byte{"https://kept/": []byte("v")}
			if err := s.WriteBatch(Batch{Pool: good}); err != nil {
				t.Fatal(err)
			}
			if err := c.call(s); !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			if p, err := s.LoadPool(); err != nil || !equalMaps(p, good) {
				t.Fatalf("state after a refused call = %s, %v", dump(p), err)
			}
		})
	}
	if _, err := Open("", Options{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Open(\"\") = %v, want ErrInvalid", err)
	}
}

// A batch is one transaction: a batch that fails inside bbolt writes nothing.
func TestBatchIsAtomic(t *testing.T) {
	s := openT(t, testPath(t), Options{})
	if err := s.WriteBatch(Batch{Pool: map[string][]byte{"https://a/": []byte("1")}}); err != nil {
		t.Fatal(err)
	}
	// Make the caps bucket unusable for this transaction: a nested bucket
	// under the key the batch writes makes bbolt refuse the Put.
	err := s.db.Update(func(tx *bolt.Tx) error {
		_, err := tx.Bucket(bucketCaps).CreateBucket([]byte("https://b/"))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.WriteBatch(Batch{
		Pool: map[string][]byte{"https://a/": []byte("2")},
		Caps: map[string][]byte{"https://b/": []byte("x")},
	})
	if err == nil {
		t.Fatal("WriteBatch over a bucket key succeeded")
	}
	if p, _ := s.LoadPool(); string(p["https://a/"]) != "1" {
		t.Fatalf("a failed batch left pool state %q", p["https://a/"])
	}
}

func TestClosed(t *testing.T) {
	s := openT(t, testPath(t), Options{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	checks := map[string]error{
		"WriteBatch":  s.WriteBatch(Batch{Pool: map[string][]byte{"a": nil}}),
		"PutOperator": s.PutOperator(Operator{URL: "a"}),
		"ResetPool":   s.ResetPool(),
	}
	_, checks["LoadPool"] = s.LoadPool()
	_, checks["Operators"] = s.Operators()
	_, _, checks["CacheGet"] = s.CacheGet("a")
	_, checks["CachePrune"] = s.CachePrune(t0, 0)
	for name, err := range checks {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close = %v, want ErrClosed", name, err)
		}
	}
}

func TestSecondOpenFailsWithErrLocked(t *testing.T) {
	path := testPath(t)
	first := openT(t, path, Options{})
	for _, timeout := range []time.Duration{-1, 80 * time.Millisecond} {
		start := time.Now()
		s, err := Open(path, Options{LockTimeout: timeout, Logger: discard()})
		elapsed := time.Since(start)
		if err == nil {
			s.Close()
			t.Fatalf("timeout %v: second Open succeeded", timeout)
		}
		if !errors.Is(err, ErrLocked) {
			t.Fatalf("timeout %v: err = %v, want ErrLocked", timeout, err)
		}
		if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, "another searxgate") {
			t.Errorf("message %q does not say who holds which file", msg)
		}
		if timeout > 0 && elapsed < timeout {
			t.Errorf("gave up after %v, before the %v timeout", elapsed, timeout)
		}
		if limit := max(timeout, 0) + 2*time.Second; elapsed > limit {
			t.Errorf("took %v to fail, more than %v", elapsed, limit)
		}
	}
	// The refused Open left the file alone, and it opens once freed.
	if err := first.WriteBatch(Batch{Pool: map[string][]byte{"a": []byte("1")}}); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	s := openT(t, path, Options{LockTimeout: 80 * time.Millisecond})
	if p, err := s.LoadPool(); err != nil || string(p["a"]) != "1" {
		t.Fatalf("after the lock was freed: %s, %v", dump(p), err)
	}
	if s.Recovered() != "" {
		t.Fatalf("a locked file was treated as damaged: %s", s.Recovered())
	}
}

func TestConcurrentUse(t *testing.T) {
	s := openT(t, testPath(t), Options{CacheMaxEntries: 50})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				k := fmt.Sprintf("w%d-%d", w, i)
				err := s.WriteBatch(Batch{
					Pool:  map[string][]byte{k: []byte(k)},
					Cache: []CacheEntry{{Key: k, Value: []byte(k), StoredAt: t0.Add(time.Duration(i) * time.Second)}},
				})
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := s.LoadPool(); err != nil {
					t.Error(err)
					return
				}
				if _, _, err := s.CacheGet(k); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	p, err := s.LoadPool()
	if err != nil || len(p) != 100 {
		t.Fatalf("LoadPool after concurrent writes: %d entries, %v", len(p), err)
	}
	if n, _ := s.CacheStats(); n != 50 {
		t.Fatalf("cache holds %d entries, bound is 50", n)
	}
}

func equalMaps(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	return true
}

func dump(m map[string][]byte) string {
	s := make(map[string]string, len(m))
	for k, v := range m {
		s[k] = string(v)
	}
	return fmt.Sprint(s)
}
