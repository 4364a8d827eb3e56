package cache

import (
	"container/list"
	"sync"
	"time"
)

// Entry is one cached answer: the upstream results, encoded once as
// SearXNG JSON, with who served them.
type Entry struct {
	JSON     []byte // the results as SearXNG JSON (classic shape); never modified after it is cached
	Instance string
	StoredAt time.Time
	Expires  time.Time
}

// size is what an entry counts against the cache's byte bound.
func (c *Entry) size(key string) int64 {
	return int64(len(c.JSON) + len(key) + len(c.Instance) + 96)
}

// Mem is an in-memory cache: an LRU bounded by entries and bytes. Expired
// entries stay until evicted so that a stale answer can be served when
// no instance answers.
type Mem struct {
	maxEntries int
	maxBytes   int64

	mu    sync.Mutex // guards ll, items and bytes
	ll    *list.List // front = most recently used; values are *memItem
	items map[string]*list.Element
	bytes int64
}

type memItem struct {
	key string
	val *Entry
}

// NewMem returns a Mem of at most maxEntries entries and maxBytes bytes
// (0: no bound).
func NewMem(maxEntries int, maxBytes int64) *Mem {
	return &Mem{
		maxEntries: maxEntries,
		maxBytes:   maxBytes,
		ll:         list.New(),
		items:      make(map[string]*list.Element),
	}
}

// Get returns the entry for key, fresh or stale.
func (c *Mem) Get(key string) (*Entry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	if !ok {
		return nil, false
	}
	c.ll.MoveToFront(e)
	return e.Value.(*memItem).val, true
}

// Put stores v under key, evicting least recently used entries beyond the
// bounds. An entry larger than the byte bound on its own is not stored.
func (c *Mem) Put(key string, v *Entry) {
	sz := v.size(key)
	if c.maxBytes > 0 && sz > c.maxBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		old := e.Value.(*memItem)
		c.bytes -= old.val.size(key)
		old.val = v
		c.ll.MoveToFront(e)
	} else {
		c.items[key] = c.ll.PushFront(&memItem{key: key, val: v})
	}
	c.bytes += sz
	for c.ll.Len() > 0 && ((c.maxEntries > 0 && c.ll.Len() > c.maxEntries) || (c.maxBytes > 0 && c.bytes > c.maxBytes)) {
		e := c.ll.Back()
		it := e.Value.(*memItem)
		c.ll.Remove(e)
		delete(c.items, it.key)
		c.bytes -= it.val.size(it.key)
	}
}

// Drop removes the entries doomed says so of, and returns how many.
func (c *Mem) Drop(doomed func(*Entry) bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for e := c.ll.Front(); e != nil; {
		next := e.Next()
		it := e.Value.(*memItem)
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

// Purge removes every entry and returns how many there were.
func (c *Mem) Purge() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.ll.Len()
	c.ll.Init()
	clear(c.items)
	c.bytes = 0
	return n
}

// Len returns the number of entries and the bytes they count.
func (c *Mem) Len() (int, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len(), c.bytes
}
