package nettest

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"testing"

	"github.com/searxgate/searxgate/internal/deptest"
)

// TestImports: the standard library only, so every package's tests may
// use it.
func TestImports(t *testing.T) { deptest.Check(t, ".") }

// TestResolver: names in the table resolve to their addresses, others are
// "no such host", and every name asked is remembered.
func TestResolver(t *testing.T) {
	r := NewResolver(Names{"one.test": "192.0.2.1", "two.test": "192.0.2.2 2001:db8::2"})
	ctx := context.Background()
	got, err := r.LookupNetIP(ctx, "ip", "two.test")
	if err != nil || !slices.Equal(got, []netip.Addr{netip.MustParseAddr("192.0.2.2"), netip.MustParseAddr("2001:db8::2")}) {
		t.Errorf("two.test: %v, %v", got, err)
	}
	ips, err := r.LookupIPAddr(ctx, "one.test")
	if err != nil || len(ips) != 1 || !ips[0].IP.Equal(net.ParseIP("192.0.2.1")) {
		t.Errorf("one.test: %v, %v", ips, err)
	}
	var dns *net.DNSError
	if _, err := r.LookupNetIP(ctx, "ip", "other.test"); !errors.As(err, &dns) || !dns.IsNotFound || dns.Name != "other.test" {
		t.Errorf("other.test: %v, want no such host", err)
	}
	if _, err := new(Resolver).LookupIPAddr(ctx, "one.test"); !errors.As(err, &dns) || !dns.IsNotFound {
		t.Errorf("the zero Resolver resolved one.test: %v", err)
	}
	if a := r.Asked(); !slices.Equal(a, []string{"two.test", "one.test", "other.test"}) {
		t.Errorf("asked %q", a)
	}
}

// TestListen: a listener on loopback that accepts.
func TestListen(t *testing.T) {
	ln := Listen(t)
	if ap := netip.MustParseAddrPort(ln.Addr().String()); !ap.Addr().IsLoopback() || ap.Port() == 0 {
		t.Fatalf("listening on %s", ln.Addr())
	}
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
}
