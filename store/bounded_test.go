package store

import (
	"math/rand/v2"
	"os"
	"testing"
	"time"
)

// TestCacheFileBoundedUnderLargeFlushes: flushes as large as the whole
// cache bound (a write-behind's queue after a burst), one after another,
// keep the file under its documented size while running: the cache's
// bound and a quarter, plus what the rest of the store takes, plus
// bbolt's allocation step.
func TestCacheFileBoundedUnderLargeFlushes(t *testing.T) {
	path := testPath(t)
	const maxBytes = 4 << 20
	s := openT(t, path, Options{CacheMaxBytes: maxBytes})
	s.compactMin = 256 << 10 // below a quarter of the bound, as the default is below 64 MiB's
	r := rand.New(rand.NewPCG(3, 4))
	var biggest int64
	i := 0
	const batches = 6
	for range batches {
		var b Batch
		var cost int64
		for cost < maxBytes {
			i++
			e := randomEntry(r, i, 2000, 40000)
			cost += entryCost(len(e.Key), len(e.Source), len(e.Value), s.pageSize)
			b.Cache = append(b.Cache, e)
		}
		biggest = max(biggest, writeAndMeasure(t, s, path, b))
	}
	limit := int64(maxBytes + maxBytes/4 + allocSize + 1<<20)
	if biggest > limit {
		t.Fatalf("the file reached %d bytes; bound %d (%d compactions)", biggest, limit, s.compactions)
	}
	// Compacting at every write would hold the bound too, at a cost: about
	// two compactions for every bound's worth written.
	if s.compactions == 0 || s.compactions > 4*batches {
		t.Fatalf("%d compactions for %d bounds' worth written", s.compactions, batches)
	}
	if _, size := s.CacheStats(); size > maxBytes {
		t.Fatalf("the cache counts %d bytes, over its bound", size)
	}
	t.Logf("%d entries written, %d compactions, largest file %d bytes", i, s.compactions, biggest)
}

// randomEntry is the i-th of a stream of cache entries: a random 32-byte
// key, a value of size to size+spread bytes, stored i seconds after t0.
func randomEntry(r *rand.Rand, i, size, spread int) CacheEntry {
	key := make([]byte, 32)
	for j := range key {
		key[j] = byte(r.Uint32())
	}
	return CacheEntry{Key: string(key), Source: "https://a.example/",
		Value: make([]byte, size+r.IntN(spread)), StoredAt: t0.Add(time.Duration(i) * time.Second)}
}

// writeAndMeasure writes b and returns the size of the file at path.
func writeAndMeasure(t *testing.T, s *Store, path string, b Batch) int64 {
	t.Helper()
	if err := s.WriteBatch(b); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
