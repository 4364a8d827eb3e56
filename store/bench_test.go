package store

import (
	"fmt"
	"testing"
	"time"
)

// poolState1000 is the state of 1,000 instances, each ~400 bytes of JSON.
func poolState1000(b *testing.B) map[string][]byte {
	m := make(map[string][]byte, 1000)
	total := 0
	for i := range 1000 {
		u := fmt.Sprintf("https://searx-%04d.example.org/", i)
		m[u] = stateJSON(u, i)
		total += len(m[u])
	}
	if avg := total / 1000; avg < 350 || avg > 450 {
		b.Fatalf("average state of %d bytes, want ~400", avg)
	}
	return m
}

// Save: one flush of 1,000 instances' state, synced to disk.
func BenchmarkSavePool1000(b *testing.B) {
	s := openT(b, testPath(b), Options{})
	state := poolState1000(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := s.WriteBatch(Batch{Pool: state}); err != nil {
			b.Fatal(err)
		}
	}
}

// Load: what a start reads to restore the pool.
func BenchmarkLoadPool1000(b *testing.B) {
	s := openT(b, testPath(b), Options{})
	if err := s.WriteBatch(Batch{Pool: poolState1000(b)}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		m, err := s.LoadPool()
		if err != nil || len(m) != 1000 {
			b.Fatal(len(m), err)
		}
	}
}

// Open: a start with 1,000 instances and a full cache of 10,000 answers
// (~4 MB), structural and consistency checks included.
func BenchmarkOpen(b *testing.B) {
	path := testPath(b)
	s := openT(b, path, Options{})
	batch := Batch{Pool: poolState1000(b)}
	for i := range 10000 {
		batch.Cache = append(batch.Cache, CacheEntry{Key: fmt.Sprintf("q=%d&format=json", i), Value: stateJSON("x", i), StoredAt: t0.Add(time.Duration(i)), Expires: t0.Add(time.Hour)})
	}
	if err := s.WriteBatch(batch); err != nil {
		b.Fatal(err)
	}
	s.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s, err := Open(path, Options{Logger: discard(), Clock: fixedClock()})
		if err != nil || s.Recovered() != "" {
			b.Fatal(err, s.Recovered())
		}
		s.Close()
	}
}

// A cache put into a full cache: the put, the eviction of the oldest, and
// the sync.
func BenchmarkCachePutFull(b *testing.B) {
	s := openT(b, testPath(b), Options{CacheMaxEntries: 1000})
	var batch Batch
	for i := range 1000 {
		batch.Cache = append(batch.Cache, CacheEntry{Key: fmt.Sprintf("q=%d", i), Value: stateJSON("x", i), StoredAt: t0.Add(time.Duration(i))})
	}
	if err := s.WriteBatch(batch); err != nil {
		b.Fatal(err)
	}
	i := 1000
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		i++
		e := CacheEntry{Key: fmt.Sprintf("q=%d", i), Value: stateJSON("x", i), StoredAt: t0.Add(time.Duration(i))}
		if err := s.WriteBatch(Batch{Cache: []CacheEntry{e}}); err != nil {
			b.Fatal(err)
		}
	}
	if n, _ := s.CacheStats(); n != 1000 {
		b.Fatalf("cache holds %d", n)
	}
}

// storeWithAnswers opens a store holding 1,000 cached answers, keyed
// q=0 to q=999.
func storeWithAnswers(b *testing.B) *Store {
	s := openT(b, testPath(b), Options{})
	var batch Batch
	for i := range 1000 {
		batch.Cache = append(batch.Cache, CacheEntry{Key: fmt.Sprintf("q=%d", i), Value: stateJSON("x", i), StoredAt: t0})
	}
	if err := s.WriteBatch(batch); err != nil {
		b.Fatal(err)
	}
	return s
}

func BenchmarkCacheGet(b *testing.B) {
	s := storeWithAnswers(b)
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		i++
		if _, ok, err := s.CacheGet(fmt.Sprintf("q=%d", i%1000)); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkCacheGetMissing: the lookup every cache miss makes, for a key
// the file does not hold.
func BenchmarkCacheGetMissing(b *testing.B) {
	s := storeWithAnswers(b)
	key := "a key the file does not hold"
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, err := s.CacheGet(key); ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
