package proxy

import (
	"container/list"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"hash"
	"strings"
	"sync"
	"time"
)

// Cache keys are keyed hashes, never the search itself. A key is 64 bytes:
// HMAC-SHA256(secret, "id" + Request.Key()) names the entry (in memory, in
// the coalescing table and on disk), and HMAC-SHA256(secret, "seal" +
// Request.Key()) is a key a CacheStore may seal the stored answer with.
// The second half is never written anywhere: only a process that is asked
// the same search again can rebuild it, so a stored answer (live, or left
// in the file's free pages after eviction) cannot be read without knowing
// the search. The secret comes from the CacheStore when it offers one
// (CacheKeyer; the store keeps it per install), else it is made at start
// and kept in memory.

// CacheKeyLen is the length of a cache key; CacheIDLen of its first half,
// the part that names an entry.
const (
	CacheKeyLen = 2 * sha256.Size
	CacheIDLen  = sha256.Size
)

// CacheKeyer makes cache keys. A CacheStore that implements it keys the
// cache with its own (persistent) secret.
type CacheKeyer interface {
	CacheKey(plain string) string
}

// CacheDropper is what a CacheStore may also do: drop what it keeps, for
// DropAnswersOf and PurgeCache.
type CacheDropper interface {
	// CacheDropInstance drops every answer inst gave.
	CacheDropInstance(inst string) (int, error)
	// CachePurge drops every answer, leaving none of it on disk.
	CachePurge() (int, error)
}

// CachePruner is what a CacheStore may also do: drop the answers that
// expired more than maxStale before now, for PruneCache.
type CachePruner interface {
	CachePrune(now time.Time, maxStale time.Duration) (int, error)
}

// Keyer makes cache keys with one secret. It is safe for concurrent use.
type Keyer struct {
	pool sync.Pool // of hash.Hash: HMAC-SHA256 under the secret
}

// NewKeyer returns a Keyer for secret (which it copies).
func NewKeyer(secret []byte) *Keyer {
	s := append([]byte(nil), secret...)
	k := &Keyer{}
	k.pool.New = func() any { return hmac.New(sha256.New, s) }
	return k
}

// CacheKey returns the cache key of the plain key (Request.Key()).
func (k *Keyer) CacheKey(plain string) string {
	h := k.pool.Get().(hash.Hash)
	var out [CacheKeyLen]byte
	h.Reset()
	h.Write([]byte("id\x00"))
	h.Write([]byte(plain))
	h.Sum(out[:0])
	h.Reset()
	h.Write([]byte("seal\x00"))
	h.Write([]byte(plain))
	h.Sum(out[CacheIDLen:CacheIDLen])
	k.pool.Put(h)
	return string(out[:])
}

// SplitCacheKey returns a cache key's halves: id names the entry; seal is
// the key its stored value may be sealed with, never to be stored. ok is
// false for a string that is not a cache key.
func SplitCacheKey(key string) (id string, seal []byte, ok bool) {
	if len(key) != CacheKeyLen {
		return "", nil, false
	}
	return key[:CacheIDLen], []byte(key[CacheIDLen:]), true
}

// processKeyer keys the cache of a Proxy whose store offers no secret: a
// secret made once per process, never written anywhere.
var processKeyer = sync.OnceValue(func() *Keyer {
	secret := make([]byte, 32)
	_, _ = rand.Read(secret) // crypto/rand.Read never fails
	return NewKeyer(secret)
})

// searchKey is one search's plain key, by which memory knows it, and its
// keyed hash, by which the store and the shared cache do: computed once,
// when the search first needs it (two HMAC-SHA256 sums).
type searchKey struct {
	plain  string
	hashed string
}

// hashedKey is k's keyed hash (cacheKey), computed on first use. A
// searchKey belongs to the goroutine of the search that made it.
func (p *Proxy) hashedKey(k *searchKey) string {
	if k.hashed == "" {
		k.hashed = p.cacheKey(k.plain)
	}
	return k.hashed
}

// cacheKey is the key of a search (or an autocompletion) in the cache and
// the coalescing table, given its plain key.
func (p *Proxy) cacheKey(plain string) string {
	if k, ok := p.cfg.Store.(CacheKeyer); ok {
		return k.CacheKey(plain)
	}
	return processKeyer().CacheKey(plain)
}

// DropAnswersOf drops every cached answer and autocompletion inst gave,
// from memory, the shared cache and the store (when they can drop), and
// returns how many it dropped: an instance the operator removed or
// disabled, or one that left the directory, serves nothing more from the
// cache, fresh or stale. An answer an attempt brings back at the very
// moment its instance's answers are dropped may still be cached (it was
// not there to drop).
func (p *Proxy) DropAnswersOf(inst string) (int, error) {
	doomed := func(c *Cached) bool { return AnsweredBy(c.Instance, inst) }
	n := p.cache.drop(doomed) + p.acCache.drop(doomed)
	return p.dropStored(n, func(d CacheDropper) (int, error) { return d.CacheDropInstance(inst) })
}

// dropStored adds to n what drop drops from the shared cache and from the
// store, when they can drop.
func (p *Proxy) dropStored(n int, drop func(CacheDropper) (int, error)) (int, error) {
	n += p.sharedDrop(drop)
	if d, ok := p.cfg.Store.(CacheDropper); ok {
		m, err := drop(d)
		if err != nil {
			return n, err
		}
		n += m
	}
	return n, nil
}

// AnsweredBy reports whether inst gave the answer whose Instance is
// answerer: one instance, or several separated by ", " (a fan-out).
func AnsweredBy(answerer, inst string) bool {
	for a := range strings.SplitSeq(answerer, ", ") {
		if a == inst {
			return true
		}
	}
	return false
}

// PurgeCache drops every cached answer and autocompletion, from memory
// and from the store, and returns how many entries it dropped (an answer
// in both counts twice).
func (p *Proxy) PurgeCache() (int, error) {
	n := p.cache.purge() + p.acCache.purge()
	return p.dropStored(n, CacheDropper.CachePurge)
}

// PruneCache drops what is too old to be served at all: the answers
// that expired more than StaleFor before now, from memory and from the
// store when it can prune (CachePruner), and the autocompletions that
// expired. It returns how many it dropped; call it now and then.
func (p *Proxy) PruneCache(now time.Time) (int, error) {
	limit := now.Add(-p.cfg.StaleFor)
	n := p.cache.drop(func(c *Cached) bool { return c.Expires.Before(limit) })
	n += p.acCache.drop(func(c *Cached) bool { return !now.Before(c.Expires) })
	if pr, ok := p.cfg.Store.(CachePruner); ok {
		m, err := pr.CachePrune(now, p.cfg.StaleFor)
		return n + m, err
	}
	return n, nil
}

// CacheLifetime is how long an answer is served from the cache (ttl) and
// kept in all (keep: past its TTL it is served only when no instance
// answers, until it is pruned); both 0 with NoCache. Answers that found
// nothing, or whose poverty is the query's own, are served for less.
func (p *Proxy) CacheLifetime() (ttl, keep time.Duration) {
	if p.cfg.NoCache {
		return 0, 0
	}
	return p.cfg.CacheTTL, p.cfg.CacheTTL + p.cfg.StaleFor
}

// CacheBytes is the most the search path's caches hold in memory: the
// answers' and the suggestions' (0 with NoCache).
func (p *Proxy) CacheBytes() int64 {
	if p.cfg.NoCache {
		return 0
	}
	return p.cfg.CacheBytes + suggestionCacheBytes
}

// Cached is one cached answer: the upstream results, encoded once as
// SearXNG JSON, with who served them.
type Cached struct {
	JSON     []byte // the results as SearXNG JSON (classic shape); never modified after it is cached
	Instance string
	StoredAt time.Time
	Expires  time.Time
}

// size is what an entry counts against the cache's byte bound.
func (c *Cached) size(key string) int64 {
	return int64(len(c.JSON) + len(key) + len(c.Instance) + 96)
}

// memCache is the in-memory result cache: an LRU bounded by entries and
// bytes. Expired entries stay until evicted so that a stale answer can be
// served when no instance answers.
type memCache struct {
	maxEntries int
	maxBytes   int64

	mu    sync.Mutex // guards ll, items and bytes
	ll    *list.List // front = most recently used; values are *cacheItem
	items map[string]*list.Element
	bytes int64
}

type cacheItem struct {
	key string
	val *Cached
}

func newMemCache(maxEntries int, maxBytes int64) *memCache {
	return &memCache{
		maxEntries: maxEntries,
		maxBytes:   maxBytes,
		ll:         list.New(),
		items:      make(map[string]*list.Element),
	}
}

// get returns the entry for key, fresh or stale.
func (c *memCache) get(key string) (*Cached, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	if !ok {
		return nil, false
	}
	c.ll.MoveToFront(e)
	return e.Value.(*cacheItem).val, true
}

// put stores v under key, evicting least recently used entries beyond the
// bounds. An entry larger than the byte bound on its own is not stored.
func (c *memCache) put(key string, v *Cached) {
	sz := v.size(key)
	if c.maxBytes > 0 && sz > c.maxBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		old := e.Value.(*cacheItem)
		c.bytes -= old.val.size(key)
		old.val = v
		c.ll.MoveToFront(e)
	} else {
		c.items[key] = c.ll.PushFront(&cacheItem{key: key, val: v})
	}
	c.bytes += sz
	for c.ll.Len() > 0 && ((c.maxEntries > 0 && c.ll.Len() > c.maxEntries) || (c.maxBytes > 0 && c.bytes > c.maxBytes)) {
		e := c.ll.Back()
		it := e.Value.(*cacheItem)
		c.ll.Remove(e)
		delete(c.items, it.key)
		c.bytes -= it.val.size(it.key)
	}
}

// drop removes the entries doomed says so of, and returns how many.
func (c *memCache) drop(doomed func(*Cached) bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for e := c.ll.Front(); e != nil; {
		next := e.Next()
		it := e.Value.(*cacheItem)
		if doomed(it.val) {
			c.ll.Remove(e)
			delete(c.items, it.key)
			c.bytes -= it.val.size(it.key)
			n++
		}
		e = next
	}
	return n
}

// purge removes every entry and returns how many there were.
func (c *memCache) purge() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.ll.Len()
	c.ll.Init()
	clear(c.items)
	c.bytes = 0
	return n
}

// len returns the number of entries and the bytes they count.
func (c *memCache) len() (int, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len(), c.bytes
}
