package pool

import (
	"context"
	"testing"
	"time"
)

// TestOpenUntil: a circuit another searxgate opened is opened here until
// the time it said, with an event; a shorter or past one changes nothing.
func TestOpenUntil(t *testing.T) {
	f := newFixture(t, Config{})
	f.Add(a, Public)
	f.Add(b, Public)
	f.ev.take()
	now := f.clock.Now()

	if f.OpenUntil("https://unknown.example/", now.Add(time.Minute), "rate_limited") {
		t.Fatal("opened an unknown instance")
	}
	if f.OpenUntil(a, now, "rate_limited") || f.OpenUntil(a, now.Add(-time.Second), "rate_limited") {
		t.Fatal("opened until a time not in the future")
	}
	// A lease out before the opening is stale: its OK does not close it.
	ls, err := f.Checkout(context.Background(), 1, func(u string) bool { return u != a })
	if err != nil {
		t.Fatal(err)
	}
	if !f.OpenUntil(a, now.Add(90*time.Second), "rate_limited") {
		t.Fatal("OpenUntil reported no change")
	}
	evs := f.ev.take()
	if len(evs) != 1 || evs[0].To != Open || evs[0].From != Closed || evs[0].Cooldown != 90*time.Second ||
		evs[0].Source != SourceShared || evs[0].Reason != ReasonShared+"rate_limited" {
		t.Fatalf("events %+v", evs)
	}
	f.Record(ls[0], Outcome{Kind: OK}, 10*time.Millisecond)
	if st := f.Stats(a); st.Circuit != Open || !st.CooldownUntil.Equal(now.Add(90*time.Second)) {
		t.Fatalf("after a stale OK: %+v", st)
	}
	if f.OpenUntil(a, now.Add(30*time.Second), "rate_limited") {
		t.Fatal("a shorter opening changed the circuit")
	}
	if got := f.ev.take(); len(got) != 0 {
		t.Fatalf("events %+v", got)
	}
	// Not checked out while open; half-open at the time said.
	if ls, _ := f.Checkout(context.Background(), 2, nil); len(ls) != 1 || ls[0].Instance() != b {
		t.Fatalf("checked out %v", ls)
	} else {
		f.Record(ls[0], Outcome{Kind: Cancelled}, 0)
	}
	f.clock.Advance(90 * time.Second)
	if st := f.Stats(a); st.Circuit != HalfOpen {
		t.Fatalf("after the cooldown: %v", st.Circuit)
	}
	// Capped at MaxCooldown.
	if !f.OpenUntil(b, f.clock.Now().Add(1000*time.Hour), "blocked") {
		t.Fatal("no change")
	}
	if st := f.Stats(b); !st.CooldownUntil.Equal(f.clock.Now().Add(f.Config().MaxCooldown)) {
		t.Fatalf("cooldown until %v, want capped at %v", st.CooldownUntil, f.Config().MaxCooldown)
	}
}
