package web

import (
	"testing"
	"time"

	"github.com/searxgate/searxgate/proxy"
)

// TestAPIKeyBuckets: an API key's client (proxy.KeyClient) is a bucket
// of its own: two keys are two clients, and neither is the address they
// come from; a bare address and its prefix are one client as before.
func TestAPIKeyBuckets(t *testing.T) {
	admit := NewClientLimiter(1, 1).Admit()
	now := time.Date(2026, 3, 20, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		client string
		ok     bool
	}{
		{proxy.KeyClient("aaaa"), true},
		{proxy.KeyClient("aaaa"), false},
		{proxy.KeyClient("bbbb"), true},
		{"192.0.2.7", true},
		{"192.0.2.7/32", false},
		{proxy.KeyClient("bbbb"), false},
	} {
		if ok, _ := admit(c.client, now); ok != c.ok {
			t.Errorf("%s: admitted %v, want %v", c.client, ok, c.ok)
		}
	}
}
