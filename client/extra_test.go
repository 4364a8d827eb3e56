package client

import (
	"net/netip"
	"testing"
	"time"
)

// TestAdmitExtraBorrowsAStatedShare: extras take from the client's own
// bucket and may borrow share × a minute's rate ahead, no more; a client
// that takes every search and extra it can in a minute stays within its
// rate, burst and that share, and its next search waits for the debt.
func TestAdmitExtraBorrowsAStatedShare(t *testing.T) {
	l := NewLimiter(60, 5)
	admit, extra := l.Admit(), l.AdmitExtra(0.2)
	a, b := FromAddr(netip.MustParseAddr("192.0.2.1")), FromAddr(netip.MustParseAddr("192.0.2.2"))
	now := time.Unix(1_800_000_000, 0)
	firsts, extras := 0, 0
	for range 5 {
		if ok, _ := admit(a, now); ok {
			firsts++
		}
	}
	for extra(a, now) {
		extras++
	}
	if firsts != 5 || extras != 12 {
		t.Fatalf("at once: %d searches and %d extras, want the burst of 5 and 0.2 × 60 = 12 borrowed", firsts, extras)
	}
	if ok, wait := admit(a, now); ok || wait != 13*time.Second {
		t.Fatalf("a search after borrowing: %v, wait %s; want refused for 13 s, the debt and one token", ok, wait)
	}
	if ok, _ := admit(b, now); !ok {
		t.Fatal("another client was refused: the debt is one client's")
	}
	end := now.Add(time.Minute)
	for at := now; at.Before(end); at = at.Add(100 * time.Millisecond) {
		if ok, _ := admit(a, at); ok {
			firsts++
		}
		for extra(a, at) {
			extras++
		}
	}
	if total := firsts + extras; total > 60+5+12+1 {
		t.Errorf("%d searches and %d extras in a minute, want at most the rate 60, burst 5 and 12 borrowed (+1 for the edges)", firsts, extras)
	}
	// A sweep never forgives a debt: a client idle a burst's refill time
	// is still in debt.
	l.sweep(end.Add(6 * time.Second))
	if ok, _ := admit(a, end.Add(6*time.Second)); ok {
		t.Error("a sweep after 6 s forgave a debt of 12")
	}
	if NewLimiter(0, 1).AdmitExtra(0.2) != nil {
		t.Error("AdmitExtra without a limit is not nil")
	}
}
