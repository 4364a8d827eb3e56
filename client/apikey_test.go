package client

import (
	"net/netip"
	"testing"
	"time"
)

// TestAPIKeyBuckets: an API key's client (FromAPIKey) is a bucket of its
// own: two keys are two clients, and neither is the address they come
// from; an IPv4 address and the same address written as IPv6 are one
// client as before.
func TestAPIKeyBuckets(t *testing.T) {
	admit := NewLimiter(1, 1).Admit()
	now := time.Date(2026, 3, 20, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		client string
		ok     bool
	}{
		{FromAPIKey("aaaa"), true},
		{FromAPIKey("aaaa"), false},
		{FromAPIKey("bbbb"), true},
		{FromAddr(netip.MustParseAddr("192.0.2.7")), true},
		{FromAddr(netip.MustParseAddr("::ffff:192.0.2.7")), false},
		{FromAPIKey("bbbb"), false},
	} {
		if ok, _ := admit(c.client, now); ok != c.ok {
			t.Errorf("%s: admitted %v, want %v", c.client, ok, c.ok)
		}
	}
	if !IsAPIKey(FromAPIKey("aaaa")) || IsAPIKey(FromAddr(netip.MustParseAddr("192.0.2.7"))) {
		t.Error("IsAPIKey does not tell an API key's client from an address's")
	}
}
