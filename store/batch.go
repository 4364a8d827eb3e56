package store

import (
	"fmt"
	"maps"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Batch is what one flush writes: one bbolt transaction, all or nothing,
// synced to disk before WriteBatch returns (but for a large cache part,
// written in several; see WriteBatch). Within a batch the upserts are
// applied before the deletions, so a URL in both ends up deleted.
type Batch struct {
	Pool       map[string][]byte // instance URL -> state (JSON made by the pool); upsert
	PoolDelete []string
	// ReplacePool says Pool is every instance's state: the records of
	// instances not in it (gone from the pool since the last batch, or
	// unreadable) are deleted in the same transaction. With it an empty
	// Pool empties the bucket.
	ReplacePool bool
	Caps        map[string][]byte // instance URL -> capabilities learned (JSON made by the proxy); upsert
	CapsDelete  []string
	Cache       []CacheEntry // result cache puts, in order; StoredAt zero means now
}

// Empty reports whether b writes nothing. A batch that only replaces the
// pool with an empty set is not empty: it deletes what the bucket holds.
func (b Batch) Empty() bool {
	return len(b.Pool) == 0 && len(b.PoolDelete) == 0 && !b.ReplacePool && len(b.Caps) == 0 &&
		len(b.CapsDelete) == 0 && len(b.Cache) == 0
}

// emptiesPoolOnly reports whether all b does is replace the pool with an
// empty set.
func (b Batch) emptiesPoolOnly() bool {
	rest := b
	rest.ReplacePool = false
	return b.ReplacePool && rest.Empty()
}

func (b Batch) validate() error {
	for _, m := range []struct {
		what string
		kv   map[string][]byte
		del  []string
	}{{"pool", b.Pool, b.PoolDelete}, {"caps", b.Caps, b.CapsDelete}} {
		for k, v := range m.kv {
			if err := checkKey(m.what, []byte(k), 0); err != nil {
				return err
			}
			if err := checkValue(m.what, k, v, 0); err != nil {
				return err
			}
		}
		for _, k := range m.del {
			if err := checkKey(m.what, []byte(k), 0); err != nil {
				return err
			}
		}
	}
	for _, e := range b.Cache {
		if err := checkKey("cache", []byte(e.Key), orderPrefixSize); err != nil {
			return err
		}
		if len(e.Source) > maxSourceLen {
			return fmt.Errorf("%w: cache source of %d bytes is longer than %d", ErrInvalid, len(e.Source), maxSourceLen)
		}
		if err := checkValue("cache", e.Key, e.Value, cacheHeaderSize+len(e.Source)); err != nil {
			return err
		}
	}
	return nil
}

// WriteBatch writes b: its pool and capabilities with the first of its
// cache entries in one transaction, the rest of the cache entries in
// further ones of at most a 64th of the cache's bound each (see
// cacheChunks), each synced. An invalid key or value fails the whole
// batch with ErrInvalid before anything is written. The result cache is
// brought back within its bounds in each transaction, oldest stored
// first, and the file is compacted after any that left it past its bound.
func (s *Store) WriteBatch(b Batch) error {
	if err := b.validate(); err != nil {
		return err
	}
	if b.Empty() || (b.emptiesPoolOnly() && s.poolEmpty()) {
		return nil // nothing to write: no transaction, no sync
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Clock.Now()
	chunks := s.cacheChunks(b.Cache)
	for i, chunk := range chunks {
		var totals cacheTotals
		err := s.update(func(tx *bolt.Tx) error {
			if i == 0 {
				if err := putAll(tx.Bucket(bucketPool), b.Pool, b.PoolDelete, b.ReplacePool); err != nil {
					return fmt.Errorf("store: writing pool state: %w", err)
				}
				if err := putAll(tx.Bucket(bucketCaps), b.Caps, b.CapsDelete, false); err != nil {
					return fmt.Errorf("store: writing capabilities: %w", err)
				}
			}
			totals = cacheTotals{entries: s.cacheEntries, bytes: s.cacheBytes}
			return s.putCache(tx, &totals, chunk, now)
		})
		if err != nil {
			return err
		}
		s.applyTotals(totals)
		if len(chunk) == 0 {
			continue
		}
		// The chunk is written: a compaction that fails leaves it in place.
		if err := s.maybeCompact(); err != nil {
			s.log.Warn("store: compacting the file failed; it stays larger than its bound until the next try", "err", err)
		}
	}
	return nil
}

// putCache puts entries into the result cache within tx and evicts down
// to its bounds.
func (s *Store) putCache(tx *bolt.Tx, totals *cacheTotals, entries []CacheEntry, now time.Time) error {
	if len(entries) == 0 {
		return nil
	}
	c := s.cacheTx(tx, totals)
	var put int64
	for _, e := range entries {
		if err := c.put(e, now, s.opts.CacheMaxBytes); err != nil {
			return fmt.Errorf("store: writing the result cache: %w", err)
		}
		put += entryCost(len(e.Key), len(e.Source), len(e.Value), s.pageSize)
	}
	s.maxBatch = max(s.maxBatch, min(put, s.opts.CacheMaxBytes))
	_, err := c.evict(s.opts.CacheMaxEntries, s.opts.CacheMaxBytes)
	return err
}

// cacheChunks cuts entries into the runs one transaction writes: each
// counts at most a 64th of the cache's bound (one entry alone may count
// more). A transaction cannot reuse the pages it frees, and freed runs of
// pages fragment: written in one transaction, a flush as large as the
// bound grew the file to twice the bound, past the compaction's slack (a
// quarter of it, or four times the largest write). Runs this small reuse
// what the one before freed, and hold the file within the bound and a
// quarter, with about two compactions for every bound's worth written
// (TestCacheFileBoundedUnderLargeFlushes). There is always one run.
func (s *Store) cacheChunks(entries []CacheEntry) [][]CacheEntry {
	limit := max(s.opts.CacheMaxBytes/64, 1)
	var out [][]CacheEntry
	start, cost := 0, int64(0)
	for i, e := range entries {
		c := entryCost(len(e.Key), len(e.Source), len(e.Value), s.pageSize)
		if i > start && cost+c > limit {
			out = append(out, entries[start:i])
			start, cost = i, 0
		}
		cost += c
	}
	return append(out, entries[start:])
}

// putAll writes kv into bk and deletes del; with only, it also deletes
// every key of bk that kv does not have.
func putAll(bk *bolt.Bucket, kv map[string][]byte, del []string, only bool) error {
	if only {
		var gone []string
		err := bk.ForEach(func(k, _ []byte) error {
			if _, ok := kv[string(k)]; !ok {
				gone = append(gone, string(k))
			}
			return nil
		})
		if err != nil {
			return err
		}
		del = append(gone, del...)
	}
	// In key order, bbolt appends to its nodes instead of shifting them.
	for _, k := range slices.Sorted(maps.Keys(kv)) {
		v := kv[k]
		if v == nil {
			v = []byte{}
		}
		if err := bk.Put([]byte(k), v); err != nil {
			return fmt.Errorf("%q: %w", k, err)
		}
	}
	for _, k := range del {
		if err := bk.Delete([]byte(k)); err != nil {
			return fmt.Errorf("%q: %w", k, err)
		}
	}
	return nil
}

// poolEmpty reports whether the pool bucket holds no record (a read error
// counts as not empty: the write that follows will say what is wrong).
func (s *Store) poolEmpty() bool {
	empty := false
	err := s.view(func(tx *bolt.Tx) error {
		k, _ := tx.Bucket(bucketPool).Cursor().First()
		empty = k == nil
		return nil
	})
	return err == nil && empty
}

// LoadPool returns every instance's pool state, keyed by instance URL.
func (s *Store) LoadPool() (map[string][]byte, error) {
	return s.loadAll(bucketPool)
}

// LoadCaps returns every instance's capabilities, keyed by instance URL.
func (s *Store) LoadCaps() (map[string][]byte, error) {
	return s.loadAll(bucketCaps)
}

func (s *Store) loadAll(name []byte) (map[string][]byte, error) {
	var out map[string][]byte
	err := s.view(func(tx *bolt.Tx) error {
		bk := tx.Bucket(name)
		out = make(map[string][]byte, bk.Stats().KeyN)
		return bk.ForEach(func(k, v []byte) error {
			out[string(k)] = clone(v)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("store: reading %s: %w", name, err)
	}
	return out, nil
}

// ResetPool drops all pool state (the operator's reset). Capabilities and
// operator changes stay.
func (s *Store) ResetPool() error { return s.resetBucket(bucketPool) }

// ResetCaps drops every capability learned.
func (s *Store) ResetCaps() error { return s.resetBucket(bucketCaps) }

func (s *Store) resetBucket(name []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(name); err != nil {
			return err
		}
		_, err := tx.CreateBucket(name)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: resetting %s: %w", name, err)
	}
	return nil
}
