package proxy

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestThreeClientsShareTheWindow: on 3 public instances (10 searches in
// 20 s each), three greedy clients one after another each get part of
// the window at once (the attack this answers: A 20, B 10, C none), each
// refusal is the client's share with the real time it ends, and then the
// less served are let in first.
func TestThreeClientsShareTheWindow(t *testing.T) {
	e := newEnv(t, Config{Clock: timersOf(quietTimers)}, fastFleet(3)...)
	search := e.searchAs
	burst := func(client string, n int) (served int) {
		for i := range n {
			err := search(client, fmt.Sprintf("%s %d", client, i))
			if err == nil {
				served++
				continue
			}
			var na *NoAnswerError
			// The searches leave the window 20 s on, as they leave the
			// instances'; the seat is lent half a deadline (2 s) before.
			if !errors.As(err, &na) || na.Why != StopShare || na.RetryAfter != 18*time.Second {
				t.Fatalf("%s's search %d: %v; want refused for its share until 18 s", client, i, err)
			}
		}
		return served
	}
	// Alone, A gets all but the seat (a third: 20); beside it, B's seat
	// is a third shared by two (5), so B has 5 at once; C's 3, so C 2.
	a, b, c := burst("A", 25), burst("B", 10), burst("C", 5)
	if a != 20 || b != 5 || c != 2 {
		t.Fatalf("A, B, C served %d, %d, %d; want 20, 5, 2", a, b, c)
	}
	var total uint64
	for i := range 3 {
		if n := e.searches(i); n > 10 {
			t.Fatalf("instance %d got %d searches, over its 10 in 20 s", i, n)
		}
		total += e.searches(i)
	}
	if total != 27 {
		t.Fatalf("the instances got %d searches, want 27", total)
	}
	// At 13 s each asks again (and so is still active): refused at once
	// (a wait would outlast the deadline), until the time the rule lets
	// it in: C when the seat is lent (18 s); A and B, with less room than
	// the less served need to reach their level, when the burst leaves
	// the window (20 s).
	e.clock.Advance(13 * time.Second)
	for client, want := range map[string]time.Duration{"A": 7 * time.Second, "B": 7 * time.Second, "C": 5 * time.Second} {
		var na *NoAnswerError
		if err := search(client, client+" again"); !errors.As(err, &na) || na.Why != StopShare || na.RetryAfter != want {
			t.Fatalf("%s at 13 s: %v; want refused for its share for %v", client, err, want)
		}
	}
	// At 18 s the seat is lent, but A, over its share (9 among three),
	// takes nothing while B and C cannot reach theirs: not before every
	// search of the burst leaves the window, at 20 s. C goes on.
	e.clock.Advance(5 * time.Second)
	if ok, at := e.proxy.fair.Allowed("A", e.clock.Now()); ok || !at.Equal(e.clock.Now().Add(2*time.Second)) {
		t.Fatalf("A at 18 s: allowed %v until %v; want refused until 20 s (B and C below their share)", ok, at)
	}
	if err := search("C", "C late"); err != nil {
		t.Fatalf("C below its share at 18 s: %v", err)
	}
}

// TestAutocompleteSharesAWindowOfOne: of three public instances only one
// suggests (2 in 20 s): a greedy client gets one suggestion and another
// client still gets one; before, the share counted all three instances'
// windows (6), the greedy client took both and the other got [] ×3.
func TestAutocompleteSharesAWindowOfOne(t *testing.T) {
	e := newEnv(t, Config{}, fastFleet(3)...)
	e.proxy.setCaps(e.urls[0], func(c *Caps) { c.Autocomplete = "duckduckgo" })
	suggest := func(client, q string) bool {
		out, err := e.proxy.Autocomplete(WithClient(context.Background(), client), q, "en")
		return err == nil && len(out) > 0
	}
	count := func(client string, qs ...string) (n int) {
		for _, q := range qs {
			if suggest(client, q) {
				n++
			}
		}
		return n
	}
	if got := count("A", "aa", "ab", "ac"); got != 1 {
		t.Fatalf("the greedy client got %d of 3, want 1 (the seat kept)", got)
	}
	if got := count("B", "ba", "bb", "bc"); got != 1 {
		t.Fatalf("B got %d of 3 beside a greedy client, want 1", got)
	}
	if n := e.fleet.Instances()[0].Truth().Requests; n > 2 {
		t.Fatalf("the suggesting instance got %d autocompletions, over its 2 in 20 s", n)
	}
}

// searchAs searches q as client.
func (e *testEnv) searchAs(client, q string) error {
	_, err := e.proxy.Search(context.Background(), Request{Query: q, PageNo: 1, Format: FormatJSON, Client: client})
	return err
}

// TestAWaitingNewcomerIsServedFirst: with the window full and its seat
// lent to the client that holds it, a newcomer waits in the queue and
// gets the first slot that frees, before an older waiter of that client.
func TestAWaitingNewcomerIsServedFirst(t *testing.T) {
	e := newEnv(t, Config{Clock: timersOf(quietTimers)}, fastFleet(3)...)
	burst := func(at string, n int) {
		for i := range n {
			if err := e.searchAs("A", fmt.Sprintf("A %s %d", at, i)); err != nil {
				t.Fatalf("A's search %d at %s: %v", i, at, err)
			}
		}
	}
	burst("0 s", 10)
	e.clock.Advance(2 * time.Second)
	burst("2 s", 10)
	// At 20 s the first ten have left the share's window (the instances'
	// at 20.5 s), and the seat is lent (the next ten leave at 22 s); A
	// fills the instances until 20.5 s.
	e.clock.Advance(18 * time.Second)
	burst("20 s", 10)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a failsafe
	defer cancel()
	wait := func(client string, queued int) chan error {
		done := make(chan error, 1)
		go func() {
			_, err := e.proxy.Search(ctx, Request{Query: client + " waits", PageNo: 1, Format: FormatJSON, Client: client})
			done <- err
		}()
		for e.proxy.queue.Len() < queued {
			select {
			case err := <-done:
				t.Fatalf("%s's search did not wait: %v", client, err)
			case <-time.After(time.Millisecond):
			}
		}
		return done
	}
	a := wait("A", 1)
	b := wait("B", 2)
	e.clock.Advance(time.Second) // the first searches leave the instances' windows
	e.proxy.dispatch()
	// Ten slots freed; the older waiter, over its share, still waits.
	if n := e.proxy.queue.Len(); n != 1 {
		t.Fatalf("%d searches wait after the slots freed, want 1 (A's)", n)
	}
	select {
	case err := <-b:
		if err != nil {
			t.Fatalf("the newcomer: %v", err)
		}
	case err := <-a:
		t.Fatalf("the client holding the window was served first (%v)", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the newcomer was not served")
	}
	// At 23 s its burst of 2 s has left the window: it is served in its
	// turn.
	e.clock.Advance(2 * time.Second)
	e.proxy.dispatch()
	select {
	case err := <-a:
		if err != nil {
			t.Fatalf("the client once its burst left the window: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the client was not served once its burst left the window")
	}
}
