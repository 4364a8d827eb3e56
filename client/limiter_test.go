package client

import (
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

func TestClientLimiter(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	l := NewLimiter(60, 3)
	a := netip.MustParseAddr("192.0.2.1")
	b := netip.MustParseAddr("192.0.2.2")
	for i := range 3 {
		if ok, _ := l.Allow(FromAddr(a), now); !ok {
			t.Fatalf("request %d within the burst refused", i+1)
		}
	}
	ok, wait := l.Allow(FromAddr(a), now)
	if ok {
		t.Fatal("a request past the burst was allowed")
	}
	if wait <= 0 || wait > time.Second {
		t.Fatalf("wait %v, want up to 1 s at 60 a minute", wait)
	}
	if ok, _ := l.Allow(FromAddr(b), now); !ok {
		t.Fatal("another client shares the bucket")
	}
	now = now.Add(time.Second)
	if ok, _ := l.Allow(FromAddr(a), now); !ok {
		t.Fatal("a token was not added after a second")
	}
	if ok, _ := l.Allow(FromAddr(a), now); ok {
		t.Fatal("two tokens after one second at 60 a minute")
	}
	// Idle clients are swept once their bucket is full again.
	now = now.Add(time.Hour)
	l.Allow(FromAddr(b), now)
	if len(l.buckets) != 1 {
		t.Fatalf("%d buckets after a sweep, want 1", len(l.buckets))
	}
	if NewLimiter(0, 10) != nil {
		t.Fatal("a zero rate did not turn the limiter off")
	}
}

func TestClientAddrBehindTrustedProxy(t *testing.T) {
	trusted, err := ParsePrefixes([]string{"127.0.0.1", "10.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		peer, xff, want string
		more            []string // further X-Forwarded-For lines, after xff
	}{
		{peer: "192.0.2.7", xff: "", want: "192.0.2.7"},                             // no proxy
		{peer: "192.0.2.7", xff: "198.51.100.1", want: "192.0.2.7"},                 // an untrusted peer's header is ignored
		{peer: "127.0.0.1", xff: "", want: "127.0.0.1"},                             // the proxy itself
		{peer: "127.0.0.1", xff: "198.51.100.1", want: "198.51.100.1"},              // the client, as the proxy saw it
		{peer: "127.0.0.1", xff: "203.0.113.5, 198.51.100.1", want: "198.51.100.1"}, // a forged first hop is not believed
		{peer: "127.0.0.1", xff: "198.51.100.1, 10.1.2.3", want: "198.51.100.1"},    // two trusted proxies
		{peer: "127.0.0.1", xff: "junk", want: "127.0.0.1"},                         // unreadable: the last trusted address
		// A proxy that appends a line of its own: every line is read, in
		// order, so the client's own line cannot choose the address.
		{peer: "127.0.0.1", xff: "203.0.113.5", more: []string{"198.51.100.1"}, want: "198.51.100.1"},
		{peer: "127.0.0.1", xff: "10.0.0.9, 203.0.113.5", more: []string{"198.51.100.1"}, want: "198.51.100.1"},
		{peer: "127.0.0.1", xff: "198.51.100.1", more: []string{"10.1.2.3"}, want: "198.51.100.1"},
		{peer: "127.0.0.1", xff: "203.0.113.5, 198.51.100.1", more: []string{"10.1.2.3", "10.4.5.6"}, want: "198.51.100.1"},
		{peer: "127.0.0.1", xff: "2001:db8::7", more: []string{"10.1.2.3"}, want: "2001:db8::7"},
	}
	for _, c := range cases {
		var ctx fasthttp.RequestCtx
		var req fasthttp.Request
		if c.xff != "" {
			req.Header.Set("X-Forwarded-For", c.xff)
		}
		for _, line := range c.more {
			req.Header.Add("X-Forwarded-For", line)
		}
		ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP(c.peer), Port: 1234}, nil)
		if got := Addr(&ctx, trusted).String(); got != c.want {
			t.Errorf("peer %s, X-Forwarded-For %q then %q: %s, want %s", c.peer, c.xff, c.more, got, c.want)
		}
	}
	if _, err := ParsePrefixes([]string{"not-an-ip"}); err == nil {
		t.Error("a bad --trust-proxy value was accepted")
	}
}

// TestClientKeyIPv6Slash64: an IPv6 client is counted by its /64, so that
// a host holding a whole /64 gets one share, not thousands.
func TestClientKeyIPv6Slash64(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	l := NewLimiter(60, 3)
	allowed := 0
	for i := range 1000 {
		a := netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2, 0, 0, 0, 0, byte(i >> 8), byte(i), 0, 1})
		if ok, _ := l.Allow(FromAddr(a), now); ok {
			allowed++
		}
	}
	if allowed != 3 {
		t.Fatalf("1,000 addresses of one /64 were allowed %d searches, want the burst of 3", allowed)
	}
	if ok, _ := l.Allow(FromAddr(netip.MustParseAddr("2001:db8:1:3::1")), now); !ok {
		t.Fatal("the next /64 shares the bucket")
	}
	// IPv4 addresses, and IPv4 written as IPv6, are counted one by one.
	for _, s := range []string{"192.0.2.1", "192.0.2.2", "::ffff:192.0.2.3"} {
		for i := range 3 {
			if ok, _ := l.Allow(FromAddr(netip.MustParseAddr(s)), now); !ok {
				t.Fatalf("%s: search %d refused", s, i+1)
			}
		}
	}
	if ok, _ := l.Allow(FromAddr(netip.MustParseAddr("::ffff:192.0.2.1")), now); ok {
		t.Fatal("192.0.2.1 written as IPv6 got a bucket of its own")
	}

	for _, c := range []struct{ addr, key string }{
		{"2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"},
		{"192.0.2.7", "192.0.2.7/32"},
		{"::ffff:192.0.2.7", "192.0.2.7/32"},
	} {
		if k := FromAddr(netip.MustParseAddr(c.addr)); k != c.key {
			t.Errorf("%s: key %s, want %s", c.addr, k, c.key)
		}
	}
	if FromAddr(netip.Addr{}) != "" || FromAddr(netip.IPv4Unspecified()) != "" || FromAddr(netip.IPv6Unspecified()) != "" {
		t.Error("no address is not the shared zero key")
	}
}

// TestAdmit: the limiter as proxy.Config.Admit takes the client key made
// from a request (FromRequest) and the time it is given; off, it is nil.
func TestAdmit(t *testing.T) {
	if NewLimiter(0, 1).Admit() != nil {
		t.Fatal("no limit, yet an Admit")
	}
	start := time.Unix(1_700_000_000, 0)
	l := NewLimiter(60, 2)
	admit := l.Admit()

	trusted, _ := ParsePrefixes([]string{"127.0.0.1"})
	client := func(peer string, xff ...string) string {
		var ctx fasthttp.RequestCtx
		var req fasthttp.Request
		for _, x := range xff {
			req.Header.Add("X-Forwarded-For", x)
		}
		ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP(peer), Port: 1234}, nil)
		return FromRequest(&ctx, trusted)
	}
	var noAddr fasthttp.RequestCtx
	if k := FromRequest(&noAddr, trusted); k != "" {
		t.Errorf("a request without an address is client %q, want \"\"", k)
	}
	a := client("2001:db8:5:6::1")
	b := client("127.0.0.1", "203.0.113.9", "2001:db8:5:6::ffff") // the same /64, behind the proxy
	if a != b || a != "2001:db8:5:6::/64" {
		t.Fatalf("clients %q and %q, want both 2001:db8:5:6::/64", a, b)
	}
	steps := []struct {
		client string
		at     time.Duration
		ok     bool
	}{
		{a, 0, true}, {b, 0, true}, {a, 0, false}, // the burst of 2 is the /64's
		{client("192.0.2.1"), 0, true}, // another client
		{a, time.Second, true},         // a token a second at 60 a minute
		{a, time.Second, false},
	}
	for i, s := range steps {
		ok, wait := admit(s.client, start.Add(s.at))
		if ok != s.ok || (!ok && (wait <= 0 || wait > time.Second)) {
			t.Fatalf("step %d (%s at +%v): ok %v wait %v, want ok %v", i, s.client, s.at, ok, wait, s.ok)
		}
	}
	if n := l.admits.Load(); n != int64(len(steps)) {
		t.Errorf("%d admits counted, want %d", n, len(steps))
	}
}

// FuzzClientAddr: whatever X-Forwarded-For lines say, the client is the
// peer or one of the hops, and never a trusted proxy unless every hop is.
func FuzzClientAddr(f *testing.F) {
	f.Add("203.0.113.5, 198.51.100.1", "10.1.2.3")
	f.Add("junk", "")
	f.Add(",,", "2001:db8::1")
	trusted, _ := ParsePrefixes([]string{"127.0.0.1", "10.0.0.0/8"})
	f.Fuzz(func(t *testing.T, line1, line2 string) {
		var ctx fasthttp.RequestCtx
		var req fasthttp.Request
		req.Header.Add("X-Forwarded-For", line1)
		req.Header.Add("X-Forwarded-For", line2)
		ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 1234}, nil)
		got := Addr(&ctx, trusted)
		if got == netip.MustParseAddr("127.0.0.1") {
			return
		}
		found := false
		for _, h := range strings.Split(line1+","+line2, ",") {
			if a, err := netip.ParseAddr(strings.TrimSpace(h)); err == nil && a.Unmap() == got {
				found = true
			}
		}
		if !found {
			t.Fatalf("client %s is neither the peer nor a hop of %q, %q", got, line1, line2)
		}
		_ = FromAddr(got)
	})
}

// TestLimiterFollowsCapacity: the rate and burst of every client are
// bounded by what the public pool serves a minute; without a public
// instance (0) the configured limit stands.
func TestLimiterFollowsCapacity(t *testing.T) {
	capacity := 90.0 // 3 public instances, 10 per 20 s each
	l := NewLimiter(120, 60).WithCapacity(func() (float64, float64) { return capacity, capacity / 3 })
	now := time.Date(2026, 3, 20, 12, 0, 0, 0, time.UTC)
	key := FromAddr(netip.MustParseAddr("203.0.113.1"))
	n := 0
	for {
		ok, _ := l.Allow(key, now)
		if !ok {
			break
		}
		n++
	}
	if n != 30 {
		t.Fatalf("a burst of %d, want 30 (a third of the pool's 90 a minute)", n)
	}
	if ok, wait := l.Allow(key, now); ok || wait.Round(time.Millisecond) != 667*time.Millisecond {
		t.Fatalf("the next search waits %v, want 1/1.5 s (90 a minute)", wait)
	}
	capacity = 0 // own instances only: the configured limit
	other := FromAddr(netip.MustParseAddr("198.51.100.1"))
	n = 0
	for {
		if ok, _ := l.Allow(other, now); !ok {
			break
		}
		n++
	}
	if n != 60 {
		t.Fatalf("a burst of %d without public instances, want the configured 60", n)
	}
}
