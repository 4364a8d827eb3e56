package proxy

import (
	"container/list"
	"sync"
	"time"
)

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

// len returns the number of entries and the bytes they count.
func (c *memCache) len() (int, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len(), c.bytes
}
