package client

import (
	"net/netip"
	"testing"
	"time"
)

// BenchmarkAdmit is one admitted search's cost in the limiter: the key is
// taken as made, with a token always there (a rate no loop meets).
func BenchmarkAdmit(b *testing.B) {
	admit := NewLimiter(1<<30, 1<<30).Admit()
	keys := []string{FromAddr(netip.MustParseAddr("203.0.113.9")), FromAddr(netip.MustParseAddr("2001:db8:1:2::7")), FromAPIKey("0123456789abcdef")}
	now := time.Unix(1_800_000_000, 0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if ok, _ := admit(keys[i%len(keys)], now); !ok {
			b.Fatal("refused")
		}
	}
}
