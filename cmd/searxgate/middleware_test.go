package main

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
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

func TestClientAddrBehindTrustedProxy(t *testing.T) {
	trusted, err := parsePrefixes([]string{"127.0.0.1", "10.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		peer, xff, want string
	}{
		{"192.0.2.7", "", "192.0.2.7"},                             // no proxy
		{"192.0.2.7", "198.51.100.1", "192.0.2.7"},                 // an untrusted peer's header is ignored
		{"127.0.0.1", "", "127.0.0.1"},                             // the proxy itself
		{"127.0.0.1", "198.51.100.1", "198.51.100.1"},              // the client, as the proxy saw it
		{"127.0.0.1", "203.0.113.5, 198.51.100.1", "198.51.100.1"}, // a forged first hop is not believed
		{"127.0.0.1", "198.51.100.1, 10.1.2.3", "198.51.100.1"},    // two trusted proxies
		{"127.0.0.1", "junk", "127.0.0.1"},                         // unreadable: the last trusted address
	}
	for _, c := range cases {
		var ctx fasthttp.RequestCtx
		var req fasthttp.Request
		if c.xff != "" {
			req.Header.Set("X-Forwarded-For", c.xff)
		}
		ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP(c.peer), Port: 1234}, nil)
		if got := clientAddr(&ctx, trusted).String(); got != c.want {
			t.Errorf("peer %s, X-Forwarded-For %q: %s, want %s", c.peer, c.xff, got, c.want)
		}
	}
	if _, err := parsePrefixes([]string{"not-an-ip"}); err == nil {
		t.Error("a bad --trust-proxy value was accepted")
	}
}
