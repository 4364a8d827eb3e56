package egress

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
)

// last is the last address of p.
func last(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// TestSpecialPurposeRows: every row of the IANA special-purpose
// registries is refused, at its first and last address and as a literal
// URL; the three rows that carry an IPv4 address are judged by it.
func TestSpecialPurposeRows(t *testing.T) {
	carriers := map[string]bool{"64:ff9b::/96": true, "2002::/16": true, "::ffff:0:0/96": true}
	g := Guard{}
	for _, r := range append(append([]special{}, specialV4...), specialV6...) {
		if carriers[r.prefix.String()] {
			continue
		}
		for _, a := range []netip.Addr{r.prefix.Addr(), last(r.prefix)} {
			if PublicAddr(a) {
				t.Errorf("%s (%s, %s): %s is public", r.prefix, r.name, r.global, a)
			}
			host := a.String()
			if a.Is6() {
				host = "[" + host + "]"
			}
			if err := g.Check(context.Background(), "https://"+host+"/"); !errors.Is(err, ErrPrivateAddress) {
				t.Errorf("%s (%s): Check(%s) = %v", r.prefix, r.name, host, err)
			}
		}
	}
	for _, c := range []struct {
		addr   string
		public bool
	}{
		{"64:ff9b::a9fe:a9fe", false}, // NAT64 of 169.254.169.254
		{"64:ff9b::808:808", true},    // of 8.8.8.8
		{"64:ff9b:1::808:808", false}, // local-use NAT64: the network decides
		{"2002:a00:1::1", false},      // 6to4 of 10.0.0.1
		{"2002:808:808::1", true},     // of 8.8.8.8
		{"::ffff:10.0.0.1", false},    // an IPv4 address as resolvers give it
		{"::ffff:8.8.8.8", true},
		{"2001:1::1", false}, // globally reachable anycast, no web host
		{"2001:20::1", false},
		{"2001:200::1", true}, // past 2001::/23
		{"2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", false},
		{"2c00::1", true},
		{"4000::1", false}, // outside 2000::/3
		{"3ffe:ffff::1", true},
		{"3fff:fff::1", false},
		{"3fff:1000::1", true}, // past 3fff::/20
		{"5eff::1", false},     // outside 2000::/3 too
		{"192.0.0.9", false},   // PCP anycast
		{"192.88.99.2", false},
		{"192.88.100.1", true},
		{"8.8.8.8", true},
		{"224.0.0.251", false},
	} {
		if got := PublicAddr(netip.MustParseAddr(c.addr)); got != c.public {
			t.Errorf("PublicAddr(%s) = %v, want %v", c.addr, got, c.public)
		}
	}
}

// TestMappedLiteralRefused: a URL that spells a public IPv4 address as
// IPv4-mapped IPv6 is refused by the guard and by the dialer.
func TestMappedLiteralRefused(t *testing.T) {
	if err := (Guard{}).Check(context.Background(), "https://[::ffff:8.8.8.8]/"); !errors.Is(err, ErrPrivateAddress) {
		t.Errorf("Check: %v", err)
	}
	d := &Dialer{Connect: func(context.Context, string, string) (net.Conn, error) {
		t.Fatal("the dialer connected")
		return nil, errors.New("no")
	}}
	if _, err := d.DialContext(context.Background(), "tcp", "[::ffff:8.8.8.8]:443"); !errors.Is(err, ErrNotPublic) {
		t.Errorf("Dial: %v", err)
	}
}
