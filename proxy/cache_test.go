package proxy

import (
	"strconv"
	"testing"
	"time"
)

func TestMemCacheBounds(t *testing.T) {
	c := newMemCache(3, 0)
	for i := range 4 {
		c.put("k"+strconv.Itoa(i), &Cached{JSON: []byte("{}")})
	}
	if _, ok := c.get("k0"); ok {
		t.Fatal("the least recently used entry was not evicted")
	}
	for _, k := range []string{"k1", "k2", "k3"} {
		if _, ok := c.get(k); !ok {
			t.Fatalf("%s evicted too early", k)
		}
	}
	// Using k1 makes k2 the oldest.
	c.get("k1")
	c.put("k4", &Cached{JSON: []byte("{}")})
	if _, ok := c.get("k2"); ok {
		t.Fatal("LRU order not kept")
	}

	// The byte bound.
	one := (&Cached{JSON: make([]byte, 100)}).size("a")
	c = newMemCache(0, 2*one)
	c.put("a", &Cached{JSON: make([]byte, 100)})
	c.put("b", &Cached{JSON: make([]byte, 100)})
	c.put("c", &Cached{JSON: make([]byte, 100)})
	if n, bytes := c.len(); n != 2 || bytes != 2*one {
		t.Fatalf("len = %d, %d bytes; want 2, %d", n, bytes, 2*one)
	}
	if _, ok := c.get("a"); ok {
		t.Fatal("byte bound did not evict the oldest")
	}
	// An entry larger than the whole bound is not stored.
	c.put("huge", &Cached{JSON: make([]byte, 1000)})
	if _, ok := c.get("huge"); ok {
		t.Fatal("an entry over the byte bound was stored")
	}
	// Replacing keeps the byte count right.
	c.put("b", &Cached{JSON: make([]byte, 50), Expires: time.Unix(1, 0)})
	if _, bytes := c.len(); bytes != one+(&Cached{JSON: make([]byte, 50)}).size("b") {
		t.Fatalf("bytes after replace = %d", bytes)
	}
}

func TestFlights(t *testing.T) {
	var f flights
	fl, leader := f.join("k")
	if !leader {
		t.Fatal("first caller is not the leader")
	}
	fl2, leader2 := f.join("k")
	if leader2 || fl2 != fl {
		t.Fatal("second caller did not join the first flight")
	}
	res := &Response{Instance: "x"}
	f.finish("k", fl, res, nil)
	<-fl2.done
	if fl2.res != res {
		t.Fatal("joined caller did not get the leader's answer")
	}
	if _, leader := f.join("k"); !leader {
		t.Fatal("a finished flight was joined again")
	}
}
