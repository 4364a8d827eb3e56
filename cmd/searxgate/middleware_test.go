package main

import (
	"net/netip"
	"testing"
	"time"
)

func TestClientLimiter(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	l := newClientLimiter(60, 3, func() time.Time { return now })
	a := netip.MustParseAddr("192.0.2.1")
	b := netip.MustParseAddr("192.0.2.2")
	for i := range 3 {
		if ok, _ := l.allow(a); !ok {
			t.Fatalf("request %d within the burst refused", i+1)
		}
	}
	ok, wait := l.allow(a)
	if ok {
		t.Fatal("a request past the burst was allowed")
	}
	if wait <= 0 || wait > time.Second {
		t.Fatalf("wait %v, want up to 1 s at 60 a minute", wait)
	}
	if ok, _ := l.allow(b); !ok {
		t.Fatal("another client shares the bucket")
	}
	now = now.Add(time.Second)
	if ok, _ := l.allow(a); !ok {
		t.Fatal("a token was not added after a second")
	}
	if ok, _ := l.allow(a); ok {
		t.Fatal("two tokens after one second at 60 a minute")
	}
	// Idle clients are swept once their bucket is full again.
	now = now.Add(time.Hour)
	l.allow(b)
	if len(l.buckets) != 1 {
		t.Fatalf("%d buckets after a sweep, want 1", len(l.buckets))
	}
	if newClientLimiter(0, 10, time.Now) != nil {
		t.Fatal("a zero rate did not turn the limiter off")
	}
}
