package store

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// rawFile returns the store file's bytes as they are on disk.
func rawFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCacheSecret(t *testing.T) {
	path := testPath(t)
	s := openT(t, path, Options{})
	secret := s.CacheSecret()
	if len(secret) != 32 || bytes.Equal(secret, make([]byte, 32)) {
		t.Fatalf("CacheSecret = %x", secret)
	}
	other := openT(t, testPath(t), Options{})
	if bytes.Equal(other.CacheSecret(), secret) {
		t.Fatal("two installs share a cache secret")
	}
	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(s.CacheSecret(), secret) {
		t.Fatal("the secret changed with a compaction")
	}
	s.Close()
	s = openT(t, path, Options{})
	if !bytes.Equal(s.CacheSecret(), secret) {
		t.Fatal("the secret did not survive a reopen")
	}
}

// A file written by a build that kept plain-text cache keys (schema 1)
// loses its cache at Open, and none of it stays in the file.
func TestSchema1CacheDroppedAndScrubbed(t *testing.T) {
	path := testPath(t)
	writeStore(t, path, 50)
	const secret = "embarrassing rash treatment"
	writeRawBolt(t, path, func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketMeta).Put(keySchema, []byte("1")); err != nil {
			return err
		}
		if err := tx.Bucket(bucketMeta).Delete(keySecret); err != nil {
			return err
		}
		rec := append([]byte{1}, make([]byte, 16)...)
		rec = append(rec, `{"query":"`+secret+`"}`...)
		for i := range 20 {
			if err := tx.Bucket(bucketCache).Put(fmt.Appendf(nil, "s\x00%s %d", secret, i), rec); err != nil {
				return err
			}
		}
		return nil
	})
	if !bytes.Contains(rawFile(t, path), []byte(secret)) {
		t.Fatal("the test file does not hold the query")
	}
	s := openT(t, path, Options{})
	if n, _ := s.CacheStats(); n != 0 {
		t.Fatalf("the old cache kept %d entries", n)
	}
	if bytes.Contains(rawFile(t, path), []byte(secret)) {
		t.Fatal("the file still holds an old cache key's text")
	}
	if len(s.CacheSecret()) != 32 {
		t.Fatal("no cache secret after the upgrade")
	}
	if p, err := s.LoadPool(); err != nil || len(p) != 50 {
		t.Fatalf("the upgrade lost pool state: %d, %v", len(p), err)
	}
	s.Close()
	s = openT(t, path, Options{})
	if s.compactions != 0 {
		t.Fatal("an upgraded file was compacted again at the next Open")
	}
}

// CachePurge leaves nothing the cache held in the file, evicted or live.
func TestCachePurgeScrubsTheFile(t *testing.T) {
	path := testPath(t)
	s := openT(t, path, Options{CacheMaxEntries: 20})
	for i := range 60 {
		e := CacheEntry{Key: fmt.Sprintf("marker-key-%03d", i), Source: "https://a.example/",
			Value: bytes.Repeat(fmt.Appendf(nil, "marker-value-%03d ", i), 50), StoredAt: t0.Add(time.Duration(i) * time.Second)}
		if err := s.WriteBatch(Batch{Cache: []CacheEntry{e}}); err != nil {
			t.Fatal(err)
		}
	}
	raw := rawFile(t, path)
	if !bytes.Contains(raw, []byte("marker-value-059")) {
		t.Fatal("the newest entry is not in the file (the test proves nothing)")
	}
	evicted := 0
	for i := range 40 {
		if bytes.Contains(raw, fmt.Appendf(nil, "marker-value-%03d", i)) {
			evicted++
		}
	}
	t.Logf("before the purge, %d of 40 evicted entries are still in the file's free pages", evicted)
	n, err := s.CachePurge()
	if err != nil || n != 20 {
		t.Fatalf("CachePurge = %d, %v; want 20", n, err)
	}
	if raw := rawFile(t, path); bytes.Contains(raw, []byte("marker-")) {
		t.Fatal("after a purge the file still holds cached bytes")
	}
	if n, size := s.CacheStats(); n != 0 || size != 0 {
		t.Fatalf("CacheStats after purge = %d, %d", n, size)
	}
	// The store goes on working, and the purge holds across a reopen.
	if err := s.WriteBatch(Batch{Cache: []CacheEntry{{Key: "k", Value: []byte("v")}}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openT(t, path, Options{})
	if got := cacheKeys(t, s); len(got) != 1 || got[0] != "k" {
		t.Fatalf("after reopen the cache holds %q", got)
	}
}

func TestCacheDropSource(t *testing.T) {
	path := testPath(t)
	s := openT(t, path, Options{})
	var b Batch
	for i := range 10 {
		src := "https://good.example/"
		switch {
		case i == 4: // a merged answer the hostile instance took part in
			src = "https://good.example/, https://hostile.example/"
		case i%2 == 0:
			src = "https://hostile.example/"
		}
		b.Cache = append(b.Cache, CacheEntry{Key: fmt.Sprintf("k%d", i), Source: src, Value: []byte("v"), StoredAt: t0.Add(time.Duration(i))})
	}
	if err := s.WriteBatch(b); err != nil {
		t.Fatal(err)
	}
	n, err := s.CacheDropSource("https://hostile.example/")
	if err != nil || n != 5 {
		t.Fatalf("CacheDropSource = %d, %v; want 5", n, err)
	}
	want := []string{"k1", "k3", "k5", "k7", "k9"}
	if got := cacheKeys(t, s); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("cache holds %q, want %q", got, want)
	}
	e, ok, err := s.CacheGet("k1")
	if !ok || err != nil || e.Source != "https://good.example/" {
		t.Fatalf("CacheGet = %+v, %v, %v", e, ok, err)
	}
	entries, size := s.CacheStats()
	s.Close()
	s = openT(t, path, Options{})
	if e2, size2 := s.CacheStats(); e2 != entries || size2 != size || entries != 5 {
		t.Fatalf("CacheStats %d, %d before reopen; %d, %d after", entries, size, e2, size2)
	}
	if n, err := s.CacheDropSource("https://nobody.example/"); n != 0 || err != nil {
		t.Fatalf("CacheDropSource(unknown) = %d, %v", n, err)
	}
}

// However many distinct answers pass through, the file stays within its
// bound: the cache's bound, the slack before a compaction, and what the
// rest of the store takes.
func TestCacheFileStaysBounded(t *testing.T) {
	path := testPath(t)
	const maxBytes = 1 << 20
	s := openT(t, path, Options{CacheMaxBytes: maxBytes})
	s.compactMin = 128 << 10 // a tighter slack than the default, so that compactions happen
	r := rand.New(rand.NewPCG(1, 2))
	i := 0
	var biggest int64
	for batch := range 150 {
		var b Batch
		for range 10 {
			i++
			b.Cache = append(b.Cache, randomEntry(r, i, 500, 20000))
		}
		if batch%10 == 0 { // the rest of the store changes too
			b.Pool = map[string][]byte{fmt.Sprintf("https://%d.example/", batch): stateJSON("x", batch)}
		}
		biggest = max(biggest, writeAndMeasure(t, s, path, b))
	}
	// base (the pool above, the meta pages) is well under 1 MiB.
	limit := int64(maxBytes + maxBytes/4 + allocSize + 1<<20)
	if biggest > limit {
		t.Fatalf("the file reached %d bytes; bound %d", biggest, limit)
	}
	if s.compactions == 0 {
		t.Fatal("never compacted: the test wrote too little")
	}
	if _, size := s.CacheStats(); size > maxBytes {
		t.Fatalf("the cache counts %d bytes, over its bound", size)
	}
	t.Logf("%d entries written, %d compactions, largest file %d bytes", i, s.compactions, biggest)
}

// Reads go on while the file is compacted under them.
func TestCompactWhileReading(t *testing.T) {
	s := openT(t, testPath(t), Options{})
	var b Batch
	for i := range 200 {
		b.Cache = append(b.Cache, CacheEntry{Key: fmt.Sprintf("k%d", i), Value: make([]byte, 3000), StoredAt: t0})
	}
	if err := s.WriteBatch(b); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := w; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, ok, err := s.CacheGet(fmt.Sprintf("k%d", i%200)); !ok || err != nil {
					t.Errorf("CacheGet during a compaction = %v, %v", ok, err)
					return
				}
			}
		})
	}
	for range 3 {
		if err := s.Compact(); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
}

// After a compaction the file at path is the new one, and it is locked: a
// second store on it fails with ErrLocked instead of opening the old,
// replaced file.
func TestCompactKeepsTheLock(t *testing.T) {
	path := testPath(t)
	s := openT(t, path, Options{})
	if err := s.WriteBatch(Batch{Cache: []CacheEntry{{Key: "k", Value: []byte("v")}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, Options{LockTimeout: -1, Logger: discard()}); !errors.Is(err, ErrLocked) {
		t.Fatalf("a second Open after a compaction: %v, want ErrLocked", err)
	}
	if _, err := os.Stat(path + ".compact"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the compaction's copy is still there: %v", err)
	}
	if e, ok, err := s.CacheGet("k"); !ok || err != nil || string(e.Value) != "v" {
		t.Fatalf("CacheGet after a compaction = %+v, %v, %v", e, ok, err)
	}
}

// A copy left by a compaction that a crash cut short is removed at Open.
func TestCompactionLeftoverRemoved(t *testing.T) {
	path := testPath(t)
	writeStore(t, path, 5)
	writeFile(t, path+".compact", []byte("half a copy of the cache"))
	s := openT(t, path, Options{})
	if _, err := os.Stat(path + ".compact"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the leftover copy is still there: %v", err)
	}
	if p, err := s.LoadPool(); err != nil || len(p) != 5 {
		t.Fatalf("LoadPool = %d, %v", len(p), err)
	}
}
