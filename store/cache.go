package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// CacheEntry is one answer in the result cache.
type CacheEntry struct {
	// Key names the entry. The store keeps it as given: callers pass
	// keyed hashes, never anything a person typed.
	Key      string
	Value    []byte
	Source   string    // who gave the answer (an instance URL); CacheDropSource drops by it
	StoredAt time.Time // orders eviction: the oldest stored goes first
	Expires  time.Time // zero: never expires (only evicted)
}

// The cache bucket maps Key to a record: a format byte, StoredAt and
// Expires as big-endian Unix nanoseconds (math.MinInt64 for a zero time),
// Source's length (big-endian uint16), Source, then Value. The cache_order
// bucket holds one empty-valued key per entry: StoredAt as 8 big-endian
// bytes with the sign bit flipped (so byte order is time order), then Key.
const (
	cacheFormat     = 2
	cacheHeaderSize = 19 // without Source
	orderPrefixSize = 8
	maxSourceLen    = 1024
)

// leafElemSize is bbolt's per-key header in a leaf page.
const leafElemSize = 16

// entryCost is what one entry counts against CacheMaxBytes: the space it
// takes in the file, estimated. A record larger than half a page gets
// pages of its own (rounded up to whole pages); a smaller one shares a
// page that splits leave about half full, so it counts twice. Its index
// entry counts the same way.
func entryCost(keyLen, sourceLen, valueLen, pageSize int) int64 {
	rec := int64(leafElemSize + keyLen + cacheHeaderSize + sourceLen + valueLen)
	ps := int64(pageSize)
	if rec > ps/2 {
		rec = (rec + ps - 1) / ps * ps
	} else {
		rec *= 2
	}
	return rec + 2*int64(leafElemSize+orderPrefixSize+keyLen)
}

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

func encodeCacheRecord(storedAt, expires time.Time, source string, value []byte) []byte {
	b := make([]byte, cacheHeaderSize+len(source)+len(value))
	b[0] = cacheFormat
	binary.BigEndian.PutUint64(b[1:], uint64(encodeTime(storedAt)))
	binary.BigEndian.PutUint64(b[9:], uint64(encodeTime(expires)))
	binary.BigEndian.PutUint16(b[17:], uint16(len(source)))
	copy(b[cacheHeaderSize:], source)
	copy(b[cacheHeaderSize+len(source):], value)
	return b
}

// cacheRecord is a decoded record; source and value alias the bytes it was
// read from.
type cacheRecord struct {
	storedAt, expires time.Time
	source, value     []byte
}

// cost is what the record under a key of keyLen bytes counts.
func (r cacheRecord) cost(keyLen, pageSize int) int64 {
	return entryCost(keyLen, len(r.source), len(r.value), pageSize)
}

// decodeCacheRecord reads a record.
func decodeCacheRecord(b []byte) (cacheRecord, error) {
	if len(b) < cacheHeaderSize {
		return cacheRecord{}, fmt.Errorf("%w: cache record of %d bytes", ErrCorrupt, len(b))
	}
	if b[0] != cacheFormat {
		return cacheRecord{}, fmt.Errorf("%w: cache record format %d", ErrCorrupt, b[0])
	}
	n := int(binary.BigEndian.Uint16(b[17:]))
	if len(b) < cacheHeaderSize+n {
		return cacheRecord{}, fmt.Errorf("%w: cache record of %d bytes with a source of %d", ErrCorrupt, len(b), n)
	}
	return cacheRecord{
		storedAt: decodeTime(int64(binary.BigEndian.Uint64(b[1:]))),
		expires:  decodeTime(int64(binary.BigEndian.Uint64(b[9:]))),
		source:   b[cacheHeaderSize : cacheHeaderSize+n],
		value:    b[cacheHeaderSize+n:],
	}, nil
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
	ids     []idOp // the keys this transaction added and removed, in order
}

// idOp is a key added to (add) or removed from the result cache.
type idOp struct {
	id  uint64
	add bool
}

// cacheIDs counts the result cache's keys by a hash of each, so that
// CacheGet tells a key the file does not hold, every cache miss's lookup,
// without a read transaction (a few microseconds under load, and a lock
// that the writer shares). It follows the file: a transaction's keys are
// applied once it committed (applyTotals). A hash two keys share only
// costs the other a read.
type cacheIDs struct {
	mu     sync.RWMutex
	m      map[uint64]int32
	closed bool // the store is closed: a lookup must say so
}

var idSeed = maphash.MakeSeed()

func idOf(key []byte) uint64 { return maphash.Bytes(idSeed, key) }

// has reports whether the file may hold key; it is true once the store
// is closed, so that the read that follows reports it.
func (c *cacheIDs) has(key string) bool {
	id := maphash.String(idSeed, key)
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.closed || c.m[id] > 0
}

func (c *cacheIDs) apply(ops []idOp) {
	if len(ops) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[uint64]int32, len(ops))
	}
	for _, op := range ops {
		switch {
		case op.add:
			c.m[op.id]++
		case c.m[op.id] > 1:
			c.m[op.id]--
		default:
			delete(c.m, op.id)
		}
	}
}

func (c *cacheIDs) reset() {
	c.mu.Lock()
	c.m = nil
	c.mu.Unlock()
}

func (c *cacheIDs) close() {
	c.mu.Lock()
	c.m, c.closed = nil, true
	c.mu.Unlock()
}

// applyTotals makes t, which a committed transaction computed, the
// cache's totals and keys. The caller holds s.mu.
func (s *Store) applyTotals(t cacheTotals) {
	s.cacheEntries, s.cacheBytes = t.entries, t.bytes
	s.cacheIDs.apply(t.ids)
}

// cacheTx is the result cache inside one write transaction.
type cacheTx struct {
	cache, order *bolt.Bucket
	t            *cacheTotals
	pageSize     int
}

func (s *Store) cacheTx(tx *bolt.Tx, t *cacheTotals) cacheTx {
	order := tx.Bucket(bucketCacheOrder)
	order.FillPercent = 0.9 // keys are appended (newest last)
	return cacheTx{cache: tx.Bucket(bucketCache), order: order, t: t, pageSize: s.pageSize}
}

// put stores e (StoredAt zero means now). An entry larger than maxBytes on
// its own is not stored: it would only evict everything else.
func (c cacheTx) put(e CacheEntry, now time.Time, maxBytes int64) error {
	size := entryCost(len(e.Key), len(e.Source), len(e.Value), c.pageSize)
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
	if err := c.cache.Put(key, encodeCacheRecord(storedAt, e.Expires, e.Source, e.Value)); err != nil {
		return err
	}
	if err := c.order.Put(orderKey(storedAt, key), []byte{}); err != nil {
		return err
	}
	c.t.entries++
	c.t.bytes += size
	c.t.ids = append(c.t.ids, idOp{id: idOf(key), add: true})
	return nil
}

// remove deletes key and its index entry, if present.
func (c cacheTx) remove(key []byte) error {
	old := c.cache.Get(key)
	if old == nil {
		return nil
	}
	var size int64
	if r, err := decodeCacheRecord(old); err == nil {
		size = r.cost(len(key), c.pageSize)
		if err := c.order.Delete(orderKey(r.storedAt, key)); err != nil {
			return err
		}
	}
	if err := c.cache.Delete(key); err != nil {
		return err
	}
	c.t.entries--
	c.t.bytes -= max(size, 0)
	c.t.ids = append(c.t.ids, idOp{id: idOf(key)})
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
			r, err := decodeCacheRecord(rec)
			stale = err == nil && !bytes.Equal(orderKey(r.storedAt, key), k)
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
// when there is none. A key the store does not hold (every cache miss
// asks) is answered from an in-memory count of its keys, by hash, without
// a read transaction.
func (s *Store) CacheGet(key string) (e CacheEntry, ok bool, err error) {
	if !s.cacheIDs.has(key) {
		return CacheEntry{}, false, nil
	}
	err = s.view(func(tx *bolt.Tx) error {
		rec := tx.Bucket(bucketCache).Get([]byte(key))
		if rec == nil {
			return nil
		}
		r, err := decodeCacheRecord(rec)
		if err != nil {
			return err
		}
		e = CacheEntry{Key: key, Value: bytes.Clone(r.value), Source: string(r.source), StoredAt: r.storedAt, Expires: r.expires}
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

// CacheRecord is CacheGet in parts, for a caller that knows no store type
// (proxy's write-behind reads the file through it): who gave the answer,
// when it was stored and expires, and its value; ok is false when key
// holds none.
func (s *Store) CacheRecord(key string) (source string, storedAt, expires time.Time, value []byte, ok bool, err error) {
	e, ok, err := s.CacheGet(key)
	return e.Source, e.StoredAt, e.Expires, e.Value, ok, err
}

// CachePrune removes the entries that expired more than maxStale before
// now (and records that cannot be read), and returns how many it removed.
func (s *Store) CachePrune(now time.Time, maxStale time.Duration) (removed int, err error) {
	limit := now.Add(-maxStale)
	removed, err = s.dropWhere(func(r cacheRecord, ok bool) bool {
		return !ok || (!r.expires.IsZero() && r.expires.Before(limit))
	})
	if err != nil {
		return 0, fmt.Errorf("store: pruning the result cache: %w", err)
	}
	return removed, nil
}

// dropWhere removes the cache entries doomed picks (ok is false for a
// record that cannot be read) and returns how many. The scan is a read
// transaction; a write follows only when something is to go.
func (s *Store) dropWhere(doomed func(r cacheRecord, ok bool) bool) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var keys [][]byte
	err := s.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketCache).ForEach(func(k, v []byte) error {
			if r, err := decodeCacheRecord(v); doomed(r, err == nil) {
				keys = append(keys, bytes.Clone(k))
			}
			return nil
		})
	})
	if err != nil || len(keys) == 0 {
		return 0, err
	}
	totals := cacheTotals{entries: s.cacheEntries, bytes: s.cacheBytes}
	err = s.update(func(tx *bolt.Tx) error {
		c := s.cacheTx(tx, &totals)
		for _, k := range keys {
			if err := c.remove(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	s.applyTotals(totals)
	return len(keys), nil
}

// CacheStats returns the result cache's entry count and the space it
// takes in the file, estimated as CacheMaxBytes counts it.
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
	s.cacheIDs.reset()
	var totals cacheTotals
	consistent := true
	err := s.view(func(tx *bolt.Tx) error {
		order := tx.Bucket(bucketCacheOrder)
		err := tx.Bucket(bucketCache).ForEach(func(k, v []byte) error {
			r, err := decodeCacheRecord(v)
			if err != nil || order.Get(orderKey(r.storedAt, k)) == nil {
				consistent = false
				return nil
			}
			totals.entries++
			totals.bytes += r.cost(len(k), s.pageSize)
			totals.ids = append(totals.ids, idOp{id: idOf(k), add: true})
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
			c := s.cacheTx(tx, &totals)
			_, err := c.evict(s.opts.CacheMaxEntries, s.opts.CacheMaxBytes)
			return err
		})
		if err != nil {
			return fmt.Errorf("store: bounding the result cache: %w", err)
		}
	}
	s.applyTotals(totals)
	if s.migrated {
		s.log.Info("store: the result cache of an older searxgate (plain-text keys) was dropped", "path", s.path)
		return s.compactLocked()
	}
	return s.maybeCompact()
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
			r, err := decodeCacheRecord(v)
			if err != nil {
				bad = append(bad, bytes.Clone(k))
				return nil
			}
			totals.entries++
			totals.bytes += r.cost(len(k), s.pageSize)
			totals.ids = append(totals.ids, idOp{id: idOf(k), add: true})
			return order.Put(orderKey(r.storedAt, k), []byte{})
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

// CacheDropSource removes every entry whose Source is source (the answers
// of an instance that was removed or disabled), and returns how many it
// removed. Their bytes stay in the file's free pages until bbolt reuses
// them or the file is compacted (CachePurge compacts).
func (s *Store) CacheDropSource(source string) (removed int, err error) {
	if source == "" {
		return 0, nil
	}
	removed, err = s.dropWhere(func(r cacheRecord, ok bool) bool { return ok && hasSource(string(r.source), source) })
	if err != nil {
		return 0, fmt.Errorf("store: dropping cached answers: %w", err)
	}
	return removed, nil
}

// CachePurge drops the whole result cache and compacts the file, so that
// nothing the cache held stays on disk, not even in free pages. It returns
// how many entries it dropped.
func (s *Store) CachePurge() (removed int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	err = s.update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketCache, bucketCacheOrder} {
			if err := tx.DeleteBucket(name); err != nil {
				return err
			}
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: purging the result cache: %w", err)
	}
	removed = s.cacheEntries
	s.cacheEntries, s.cacheBytes = 0, 0
	s.cacheIDs.reset()
	return removed, s.compactLocked()
}

// hasSource reports whether an entry's source, one name or several
// separated by ", " (an answer merged from several instances), names
// source.
func hasSource(sources, source string) bool {
	for s := range strings.SplitSeq(sources, ", ") {
		if s == source {
			return true
		}
	}
	return false
}
