package main

import (
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/store"
)

// cacheQueue is the proxy's persistent cache: reads go to the store, writes
// wait in memory for the next flush.
//
// What reaches the file: the entry's id (the first half of the proxy's
// keyed hash, never the search), who answered, when, and the answer sealed
// (AES-256-GCM) with the key's second half, which is never stored. So the
// file holds no query text, not even in the free pages an evicted answer
// leaves: an answer can be read back only by a process asked the same
// search again. With --cache-ttl 0 nothing is written at all.
type cacheQueue struct {
	st    *store.Store
	log   *slog.Logger
	keyer atomic.Pointer[proxy.Keyer]
	off   bool // --cache-ttl 0: nothing is kept on disk

	// flushing is held by a flush from take until its batch is written or
	// requeued, and by a drop or a purge: neither can land between a flush
	// taking answers and writing them, which would bring them back.
	flushing sync.Mutex

	mu sync.Mutex // guards pending
	// pending are the answers waiting for a flush, sealed only when the
	// flush takes them: under load most are pushed out by newer ones first
	// (maxPendingCache), and sealing those would be work for nothing.
	pending []pendingAnswer
}

// pendingAnswer is one answer waiting for a flush: its entry, whose Value
// is nil until sealed, and what sealing it needs (its cache key, its JSON).
type pendingAnswer struct {
	entry store.CacheEntry
	key   string
	json  []byte
}

// newCacheQueue returns the cache queue of st. With ttl 0 it also drops
// what an earlier run with a cache left in the file.
func newCacheQueue(st *store.Store, log *slog.Logger, ttl time.Duration) *cacheQueue {
	q := &cacheQueue{st: st, log: log, off: ttl == 0}
	q.keyer.Store(proxy.NewKeyer(st.CacheSecret()))
	if n, _ := st.CacheStats(); q.off && n > 0 {
		if _, err := st.CachePurge(); err != nil {
			log.Error("--cache-ttl is 0 but the answers an earlier run cached could not be dropped", "err", err)
		} else {
			log.Info("--cache-ttl is 0: the answers an earlier run cached were dropped", "entries", n)
		}
	}
	return q
}

// proxyCacheTTL is the proxy's TTL for --cache-ttl: 0 means no answer is
// served from the cache (the proxy reads 0 as its default), so answers
// expire at once; in memory the last one is still the stale fallback
// when no instance answers.
func proxyCacheTTL(ttl time.Duration) time.Duration {
	if ttl == 0 {
		return time.Nanosecond
	}
	return ttl
}

// staleFor is how long past its expiry a cached answer may still be served
// when nothing answers (the proxy's default); older ones are pruned.
const staleFor = 24 * time.Hour

// cacheKeep is how long an answer is kept in all, for /about: its TTL
// and then staleFor (none when the TTL is 0).
func cacheKeep(ttl time.Duration) time.Duration {
	if ttl == 0 {
		return 0
	}
	return ttl + staleFor
}

// maxPendingCache bounds the cache writes waiting for a flush; past it the
// oldest are dropped (they are still in the memory cache).
const maxPendingCache = 4096

// CacheKey keys the cache with the store's per-install secret, or with
// the one derived from the operator's secret (--redis), so that one
// search has one key on every replica.
func (q *cacheQueue) CacheKey(plain string) string { return q.keyer.Load().CacheKey(plain) }

// useSecret keys the cache with secret from now on (answers cached under
// the former key are no longer found: they expire).
func (q *cacheQueue) useSecret(secret []byte) {
	q.keyer.Store(proxy.NewKeyer(secret))
}

func (q *cacheQueue) CacheGet(key string) (proxy.Cached, bool) {
	id, _, ok := proxy.SplitCacheKey(key)
	if !ok || q.off {
		return proxy.Cached{}, false
	}
	e, ok, err := q.st.CacheGet(id)
	if err != nil || !ok {
		return proxy.Cached{}, false
	}
	js, ok := proxy.OpenAnswer(key, e.Value)
	if !ok {
		return proxy.Cached{}, false
	}
	return proxy.Cached{JSON: js, Instance: e.Source, StoredAt: e.StoredAt, Expires: e.Expires}, true
}

func (q *cacheQueue) CachePut(key string, c proxy.Cached) {
	if q.off {
		return
	}
	id, _, ok := proxy.SplitCacheKey(key)
	if !ok {
		return
	}
	q.mu.Lock()
	if len(q.pending) >= maxPendingCache {
		q.pending = q.pending[1:]
	}
	q.pending = append(q.pending, pendingAnswer{
		entry: store.CacheEntry{Key: id, Source: c.Instance, StoredAt: c.StoredAt, Expires: c.Expires},
		key:   key, json: c.JSON, // never modified once cached
	})
	q.mu.Unlock()
}

// CacheDropInstance drops inst's answers, waiting or stored; a flush
// under way ends first.
func (q *cacheQueue) CacheDropInstance(inst string) (int, error) {
	q.flushing.Lock()
	defer q.flushing.Unlock()
	q.mu.Lock()
	before := len(q.pending)
	q.pending = slices.DeleteFunc(q.pending, func(a pendingAnswer) bool { return proxy.AnsweredBy(a.entry.Source, inst) })
	n := before - len(q.pending)
	q.mu.Unlock()
	m, err := q.st.CacheDropSource(inst)
	return n + m, err
}

// CachePurge drops every answer, waiting or stored, and compacts the
// file; a flush under way ends first.
func (q *cacheQueue) CachePurge() (int, error) {
	q.flushing.Lock()
	defer q.flushing.Unlock()
	q.mu.Lock()
	n := len(q.pending)
	q.pending = nil
	q.mu.Unlock()
	m, err := q.st.CachePurge()
	return n + m, err
}

// requeue puts back entries a failed flush took, ahead of newer ones,
// within the bound.
func (q *cacheQueue) requeue(entries []store.CacheEntry) {
	if len(entries) == 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	all := make([]pendingAnswer, 0, len(entries)+len(q.pending))
	for _, e := range entries {
		all = append(all, pendingAnswer{entry: e}) // sealed already
	}
	all = append(all, q.pending...)
	if len(all) > maxPendingCache {
		all = all[len(all)-maxPendingCache:]
	}
	q.pending = all
}

// take returns the entries waiting for a flush, sealing them; the caller
// holds flushing until they are written or requeued.
func (q *cacheQueue) take() []store.CacheEntry {
	q.mu.Lock()
	p := q.pending
	q.pending = nil
	q.mu.Unlock()
	out := make([]store.CacheEntry, 0, len(p))
	for _, a := range p {
		if a.entry.Value == nil {
			_, v, err := proxy.SealAnswer(a.key, a.json)
			if err != nil {
				q.log.Error("sealing a cached answer failed; it is not stored", "err", err)
				continue
			}
			a.entry.Value = v
		}
		out = append(out, a.entry)
	}
	return out
}
