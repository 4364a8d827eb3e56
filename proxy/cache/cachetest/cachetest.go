// Package cachetest holds what tests of the cache and of the search path
// behind it share: a SealedFile in memory.
package cachetest

import (
	"sync"
	"time"

	"github.com/searxgate/searxgate/proxy/cache"
)

// SealedFile is a cache.SealedFile in memory.
type SealedFile struct {
	mu     sync.Mutex // guards m and purges
	m      map[string]cache.Sealed
	purges int
}

// NewSealedFile returns an empty SealedFile.
func NewSealedFile() *SealedFile { return &SealedFile{m: map[string]cache.Sealed{}} }

// CacheRecord returns what is kept under id.
func (f *SealedFile) CacheRecord(id string) (string, time.Time, time.Time, []byte, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.m[id]
	return s.Source, s.StoredAt, s.Expires, s.Value, ok, nil
}

// CacheDropSource drops every answer source gave.
func (f *SealedFile) CacheDropSource(source string) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for id, s := range f.m {
		if cache.AnsweredBy(s.Source, source) {
			delete(f.m, id)
			n++
		}
	}
	return n, nil
}

// CachePurge drops every answer and counts the purge.
func (f *SealedFile) CachePurge() (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.m)
	clear(f.m)
	f.purges++
	return n, nil
}

// CachePrune drops the answers that expired more than maxStale before now.
func (f *SealedFile) CachePrune(now time.Time, maxStale time.Duration) (int, error) {
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

// CacheStats returns how many answers f holds (their size is not kept).
func (f *SealedFile) CacheStats() (int, int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.m), 0
}

// Write is a Flush's write that keeps the answers in f.
func (f *SealedFile) Write(answers []cache.Sealed) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range answers {
		f.m[s.ID] = s
	}
	return nil
}

// Len returns how many answers f holds.
func (f *SealedFile) Len() int {
	n, _ := f.CacheStats()
	return n
}

// Purges returns how many times f was purged.
func (f *SealedFile) Purges() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.purges
}
