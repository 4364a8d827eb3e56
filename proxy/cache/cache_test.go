package cache

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// The plain keys below are Request.Key()'s shape: "s", the query, the
// categories, engines, language, page, time range and safe search.

func TestMemCacheBounds(t *testing.T) {
	c := NewMem(3, 0)
	for i := range 4 {
		c.Put("k"+strconv.Itoa(i), &Entry{JSON: []byte("{}")})
	}
	if _, ok := c.Get("k0"); ok {
		t.Fatal("the least recently used entry was not evicted")
	}
	for _, k := range []string{"k1", "k2", "k3"} {
		if _, ok := c.Get(k); !ok {
			t.Fatalf("%s evicted too early", k)
		}
	}
	// Using k1 makes k2 the oldest.
	c.Get("k1")
	c.Put("k4", &Entry{JSON: []byte("{}")})
	if _, ok := c.Get("k2"); ok {
		t.Fatal("LRU order not kept")
	}

	// The byte bound.
	one := (&Entry{JSON: make([]byte, 100)}).size("a")
	c = NewMem(0, 2*one)
	c.Put("a", &Entry{JSON: make([]byte, 100)})
	c.Put("b", &Entry{JSON: make([]byte, 100)})
	c.Put("c", &Entry{JSON: make([]byte, 100)})
	if n, bytes := c.Len(); n != 2 || bytes != 2*one {
		t.Fatalf("len = %d, %d bytes; want 2, %d", n, bytes, 2*one)
	}
	if _, ok := c.Get("a"); ok {
		t.Fatal("byte bound did not evict the oldest")
	}
	// An entry larger than the whole bound is not stored.
	c.Put("huge", &Entry{JSON: make([]byte, 1000)})
	if _, ok := c.Get("huge"); ok {
		t.Fatal("an entry over the byte bound was stored")
	}
	// Replacing keeps the byte count right.
	c.Put("b", &Entry{JSON: make([]byte, 50), Expires: time.Unix(1, 0)})
	if _, bytes := c.Len(); bytes != one+(&Entry{JSON: make([]byte, 50)}).size("b") {
		t.Fatalf("bytes after replace = %d", bytes)
	}
}

func TestCacheKeys(t *testing.T) {
	a, b := NewKeyer([]byte("secret one")), NewKeyer([]byte("secret two"))
	plain := "s\x00a very private question\x00\x00\x00\x001\x00\x00"
	k := a.CacheKey(plain)
	if len(k) != KeyLen || k != a.CacheKey(plain) {
		t.Fatalf("key of %d bytes, or not the same twice", len(k))
	}
	if strings.Contains(k, "private") {
		t.Fatal("the key holds the query")
	}
	if b.CacheKey(plain) == k {
		t.Fatal("two secrets give the same key")
	}
	if a.CacheKey("s\x00a very private question\x00\x00\x00\x002\x00\x00") == k {
		t.Fatal("two searches give the same key")
	}
	id, seal, ok := SplitKey(k)
	if !ok || len(id) != IDLen || len(seal) != KeyLen-IDLen || id == string(seal) {
		t.Fatalf("SplitKey = %x, %x, %v", id, seal, ok)
	}
	if _, _, ok := SplitKey(plain); ok {
		t.Fatal("a plain key split as a cache key")
	}
}

func TestAnsweredBy(t *testing.T) {
	for _, c := range []struct {
		answerer, inst string
		want           bool
	}{
		{"https://a.example/", "https://a.example/", true},
		{"https://a.example/, https://b.example/", "https://b.example/", true},
		{"https://a.example/, https://b.example/", "https://b.example", false},
		{"https://ab.example/", "https://a.example/", false},
		{"", "https://a.example/", false},
	} {
		if got := AnsweredBy(c.answerer, c.inst); got != c.want {
			t.Errorf("AnsweredBy(%q, %q) = %v", c.answerer, c.inst, got)
		}
	}
}
