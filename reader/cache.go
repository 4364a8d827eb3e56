package reader

import (
	"container/list"
	"sync"
	"time"
)

// cache keeps read pages until they expire, the least recently used
// dropped first past its entry or byte bound. A nil cache keeps nothing
// (Config.NoCache).
type cache struct {
	maxEntries, maxBytes int

	mu    sync.Mutex // guards all below
	byKey map[string]*list.Element
	lru   *list.List // front = most recently used; values are *cached
	bytes int
}

type cached struct {
	key     string
	page    *Page
	expires time.Time
}

func newCache(entries, bytes int) *cache {
	return &cache{maxEntries: entries, maxBytes: bytes, byKey: map[string]*list.Element{}, lru: list.New()}
}

func (c *cache) get(key string, now time.Time) (*Page, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	v := e.Value.(*cached)
	if !now.Before(v.expires) {
		c.remove(e)
		return nil, false
	}
	c.lru.MoveToFront(e)
	return v.page, true
}

func (c *cache) put(key string, p *Page, expires time.Time) {
	size := len(p.Markdown) + len(p.Title) + len(key)
	if c == nil || size > c.maxBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		c.remove(e)
	}
	c.byKey[key] = c.lru.PushFront(&cached{key: key, page: p, expires: expires})
	c.bytes += size
	for c.lru.Len() > c.maxEntries || c.bytes > c.maxBytes {
		c.remove(c.lru.Back())
	}
}

func (c *cache) remove(e *list.Element) {
	v := e.Value.(*cached)
	c.lru.Remove(e)
	delete(c.byKey, v.key)
	c.bytes -= len(v.page.Markdown) + len(v.page.Title) + len(v.key)
}

func (c *cache) len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}
