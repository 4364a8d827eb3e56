package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	bolt "go.etcd.io/bbolt"
)

// CacheEntry is one answer in the result cache.
type CacheEntry struct {
	Key      string
	Value    []byte
	StoredAt time.Time // orders eviction: the oldest stored goes first
	Expires  time.Time // zero: never expires (only evicted)
}

// The cache bucket maps Key to a record: a format byte, StoredAt and
// Expires as big-endian Unix nanoseconds (math.MinInt64 for a zero time),
// then Value. The cache_order bucket holds one empty-valued key per entry:
// StoredAt as 8 big-endian bytes with the sign bit flipped (so byte order is
// time order), then Key.
const (
	cacheFormat     = 1
	cacheHeaderSize = 17
	orderPrefixSize = 8
)

func encodeTime(t time.Time) int64 {
	if t.IsZero() {
		return math.MinInt64
	}
	return t.UnixNano()
}

func decodeTime(n int64) time.Time {
	if n == math.MinInt64 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func encodeCacheRecord(storedAt, expires time.Time, value []byte) []byte {
	b := make([]byte, cacheHeaderSize+len(value))
	b[0] = cacheFormat
	binary.BigEndian.PutUint64(b[1:], uint64(encodeTime(storedAt)))
	binary.BigEndian.PutUint64(b[9:], uint64(encodeTime(expires)))
	copy(b[cacheHeaderSize:], value)
	return b
}

// decodeCacheRecord reads a record; value aliases b.
func decodeCacheRecord(b []byte) (storedAt, expires time.Time, value []byte, err error) {
	if len(b) < cacheHeaderSize {
		return time.Time{}, time.Time{}, nil, fmt.Errorf("%w: cache record of %d bytes", ErrCorrupt, len(b))
	}
	if b[0] != cacheFormat {
		return time.Time{}, time.Time{}, nil, fmt.Errorf("%w: cache record format %d", ErrCorrupt, b[0])
	}
	storedAt = decodeTime(int64(binary.BigEndian.Uint64(b[1:])))
	expires = decodeTime(int64(binary.BigEndian.Uint64(b[9:])))
	return storedAt, expires, b[cacheHeaderSize:], nil
}

func orderKey(storedAt time.Time, key []byte) []byte {
	k := make([]byte, orderPrefixSize+len(key))
	binary.BigEndian.PutUint64(k, uint64(encodeTime(storedAt))^(1<<63))
	copy(k[orderPrefixSize:], key)
	return k
}

type cacheTotals struct {
	entries int
	bytes   int64
}

// cacheTx is the result cache inside one write transaction.
type cacheTx struct {
	cache, order *bolt.Bucket
	t            *cacheTotals
}

// put stores e (StoredAt zero means now). An entry larger than maxBytes on
// its own is not stored: it would only evict everything else.
func (c cacheTx) put(e CacheEntry, now time.Time, maxBytes int64) error {
	size := int64(len(e.Key) + len(e.Value))
	key := []byte(e.Key)
	if err := c.remove(key); err != nil {
		return err
	}
	if size > maxBytes {
		return nil
	}
	storedAt := e.StoredAt
	if storedAt.IsZero() {
		storedAt = now
	}
	if err := c.cache.Put(key, encodeCacheRecord(storedAt, e.Expires, e.Value)); err != nil {
		return err
	}
	if err := c.order.Put(orderKey(storedAt, key), []byte{}); err != nil {
		return err
	}
	c.t.entries++
	c.t.bytes += size
	return nil
}

// remove deletes key and its index entry, if present.
func (c cacheTx) remove(key []byte) error {
	old := c.cache.Get(key)
	if old == nil {
		return nil
	}
	size := int64(len(key) + len(old) - cacheHeaderSize)
	if storedAt, _, _, err := decodeCacheRecord(old); err == nil {
		if err := c.order.Delete(orderKey(storedAt, key)); err != nil {
			return err
		}
	} else {
		size = int64(len(key))
	}
	if err := c.cache.Delete(key); err != nil {
		return err
	}
	c.t.entries--
	c.t.bytes -= max(size, 0)
	return nil
}

// evict removes the oldest stored entries until the cache is within both
// bounds, and returns how many it removed.
func (c cacheTx) evict(maxEntries int, maxBytes int64) (int, error) {
	n := 0
	cur := c.order.Cursor()
	for c.t.entries > maxEntries || c.t.bytes > maxBytes {
		k, _ := cur.First()
		if k == nil {
			// The index is empty, so is the cache: the totals were off.
			c.t.entries, c.t.bytes = 0, 0
			break
		}
		key := bytes.Clone(k[orderPrefixSize:])
		stale := true
		if rec := c.cache.Get(key); rec != nil {
			storedAt, _, _, err := decodeCacheRecord(rec)
			stale = err == nil && !bytes.Equal(orderKey(storedAt, key), k)
		}
		if err := cur.Delete(); err != nil {
			return n, err
		}
		if stale {
			continue // an index entry left by nothing: drop it alone
		}
		if err := c.remove(key); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// CacheGet returns the entry stored under key, expired or not; ok is false
// when there is none.
func (s *Store) CacheGet(key string) (e CacheEntry, ok bool, err error) {
	err = s.view(func(tx *bolt.Tx) error {
		rec := tx.Bucket(bucketCache).Get([]byte(key))
		if rec == nil {
			return nil
		}
		storedAt, expires, value, err := decodeCacheRecord(rec)
		if err != nil {
			return fmt.Errorf("%q: %w", key, err)
		}
		e = CacheEntry{Key: key, Value: bytes.Clone(value), StoredAt: storedAt, Expires: expires}
		if e.Value == nil {
			e.Value = []byte{}
		}
		ok = true
		return nil
	})
	if err != nil {
		return CacheEntry{}, false, fmt.Errorf("store: reading the result cache: %w", err)
	}
	return e, ok, nil
}

// CachePrune removes the entries that expired more than maxStale before
// now (and records that cannot be read), and returns how many it removed.
func (s *Store) CachePrune(now time.Time, maxStale time.Duration) (removed int, err error) {
	limit := now.Add(-maxStale)
	s.mu.Lock()
	defer s.mu.Unlock()
	totals := cacheTotals{entries: s.cacheEntries, bytes: s.cacheBytes}
	err = s.update(func(tx *bolt.Tx) error {
		c := cacheTx{cache: tx.Bucket(bucketCache), order: tx.Bucket(bucketCacheOrder), t: &totals}
		var doomed [][]byte
		err := c.cache.ForEach(func(k, v []byte) error {
			_, expires, _, derr := decodeCacheRecord(v)
			if derr != nil || (!expires.IsZero() && expires.Before(limit)) {
				doomed = append(doomed, bytes.Clone(k))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range doomed {
			if err := c.remove(k); err != nil {
				return err
			}
		}
		removed = len(doomed)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: pruning the result cache: %w", err)
	}
	s.cacheEntries, s.cacheBytes = totals.entries, totals.bytes
	return removed, nil
}

// CacheStats returns the result cache's entry count and size in bytes
// (len(Key)+len(Value) summed).
func (s *Store) CacheStats() (entries int, size int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cacheEntries, s.cacheBytes
}

// initCache counts the result cache, rebuilds its index when it does not
// match the entries (dropping records that cannot be read), and brings the
// cache within the bounds of this Open's options.
func (s *Store) initCache() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var totals cacheTotals
	consistent := true
	err := s.view(func(tx *bolt.Tx) error {
		order := tx.Bucket(bucketCacheOrder)
		err := tx.Bucket(bucketCache).ForEach(func(k, v []byte) error {
			storedAt, _, value, err := decodeCacheRecord(v)
			if err != nil || order.Get(orderKey(storedAt, k)) == nil {
				consistent = false
				return nil
			}
			totals.entries++
			totals.bytes += int64(len(k) + len(value))
			return nil
		})
		if err != nil {
			return err
		}
		if n := order.Stats().KeyN; n != totals.entries {
			consistent = false
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: reading the result cache: %w", err)
	}
	if !consistent {
		totals, err = s.rebuildCacheIndex()
		if err != nil {
			return err
		}
	}
	if totals.entries > s.opts.CacheMaxEntries || totals.bytes > s.opts.CacheMaxBytes {
		err = s.update(func(tx *bolt.Tx) error {
			c := cacheTx{cache: tx.Bucket(bucketCache), order: tx.Bucket(bucketCacheOrder), t: &totals}
			_, err := c.evict(s.opts.CacheMaxEntries, s.opts.CacheMaxBytes)
			return err
		})
		if err != nil {
			return fmt.Errorf("store: bounding the result cache: %w", err)
		}
	}
	s.cacheEntries, s.cacheBytes = totals.entries, totals.bytes
	return nil
}

// rebuildCacheIndex rewrites cache_order from the cache bucket, dropping
// records that cannot be read. The caller holds s.mu.
func (s *Store) rebuildCacheIndex() (cacheTotals, error) {
	var totals cacheTotals
	dropped := 0
	err := s.update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucketCacheOrder); err != nil {
			return err
		}
		order, err := tx.CreateBucket(bucketCacheOrder)
		if err != nil {
			return err
		}
		cache := tx.Bucket(bucketCache)
		var bad [][]byte
		err = cache.ForEach(func(k, v []byte) error {
			storedAt, _, value, err := decodeCacheRecord(v)
			if err != nil {
				bad = append(bad, bytes.Clone(k))
				return nil
			}
			totals.entries++
			totals.bytes += int64(len(k) + len(value))
			return order.Put(orderKey(storedAt, k), []byte{})
		})
		if err != nil {
			return err
		}
		for _, k := range bad {
			if err := cache.Delete(k); err != nil {
				return err
			}
		}
		dropped = len(bad)
		return nil
	})
	if err != nil {
		return cacheTotals{}, fmt.Errorf("store: rebuilding the result cache index: %w", err)
	}
	s.log.Warn("store: result cache index rebuilt", "path", s.path, "entries", totals.entries, "dropped_unreadable", dropped)
	return totals, nil
}
