package polite

import (
	"slices"
	"testing"
	"time"
)

func waiters(q *Queue[string], clientOf ...string) []*Waiter[string] {
	var ws []*Waiter[string]
	for i, c := range clientOf {
		w := &Waiter[string]{Value: c + string(rune('1'+i)), Client: c}
		if _, ok := q.Join(w); !ok {
			return ws
		}
		ws = append(ws, w)
	}
	return ws
}

// TestQueueTakesTurnsByClient: the oldest waiter of each client is served
// first, then the others in order of arrival (a waiter not served in the
// first pass is asked again in the second); the served leave the queue.
func TestQueueTakesTurnsByClient(t *testing.T) {
	q := NewQueue[string](10)
	waiters(q, "a", "a", "b", "a", "c")
	var order []string
	n := q.Serve(func(w *Waiter[string]) Turn {
		order = append(order, w.Value)
		if w.Value == "a1" || w.Value == "b3" {
			return Wait
		}
		return Done
	})
	if want := []string{"a1", "b3", "c5", "a1", "a2", "b3", "a4"}; !slices.Equal(order, want) {
		t.Fatalf("served in the order %v, want %v", order, want)
	}
	if n != 2 || q.Len() != 2 {
		t.Fatalf("%d left (Len %d), want a1 and b3", n, q.Len())
	}
	order = nil
	q.Serve(func(w *Waiter[string]) Turn { order = append(order, w.Value); return Wait })
	if want := []string{"a1", "b3", "a1", "b3"}; !slices.Equal(order, want) {
		t.Fatalf("then %v, want %v: the two kept their places", order, want)
	}
}

// TestQueueOneWaiterOnePass: a lone waiter is asked once a dispatch.
func TestQueueOneWaiterOnePass(t *testing.T) {
	q := NewQueue[string](10)
	waiters(q, "a")
	calls := 0
	q.Serve(func(*Waiter[string]) Turn { calls++; return Wait })
	if calls != 1 {
		t.Fatalf("asked %d times, want once", calls)
	}
}

func TestQueueFull(t *testing.T) {
	q := NewQueue[string](2)
	if ws := waiters(q, "a", "b", "c"); len(ws) != 2 {
		t.Fatalf("%d joined a queue of 2", len(ws))
	}
	if n, ok := q.Join(&Waiter[string]{}); ok || n != 2 {
		t.Fatalf("joined a full queue: %d, %v", n, ok)
	}
}

// TestQueueAside: a waiter set aside keeps its place and is served by no
// pass until it is settled; settled without a slot it waits again where it
// was; one that left while aside is gone, and Settle says so.
func TestQueueAside(t *testing.T) {
	q := NewQueue[string](10)
	ws := waiters(q, "a", "b", "c")
	q.Serve(func(w *Waiter[string]) Turn {
		if w.Value == "a1" || w.Value == "c3" {
			return Aside
		}
		return Wait
	})
	var order []string
	q.Serve(func(w *Waiter[string]) Turn { order = append(order, w.Value); return Wait })
	if !slices.Equal(order, []string{"b2", "b2"}) {
		t.Fatalf("served %v while two were aside, want b2 alone (in both passes)", order)
	}
	if n := q.Settle(ws[0], func(left bool) bool {
		if left {
			t.Error("a1 did not leave")
		}
		return false // the ask said no: it waits again
	}); n != 3 {
		t.Fatalf("%d waiting after a refused ask, want 3", n)
	}
	if n := q.Leave(ws[2]); n != 2 {
		t.Fatalf("%d waiting after c3 left, want 2", n)
	}
	var sawLeft bool
	if n := q.Settle(ws[2], func(left bool) bool { sawLeft = left; return true }); n != 2 || !sawLeft {
		t.Fatalf("settling the one that left: left %v, %d waiting; want true, 2", sawLeft, n)
	}
	order = nil
	q.Serve(func(w *Waiter[string]) Turn { order = append(order, w.Value); return Done })
	if !slices.Equal(order, []string{"a1", "b2"}) || q.Len() != 0 {
		t.Fatalf("served %v, %d left; want a1 in its place, then b2", order, q.Len())
	}
}

// TestSlotOffer: the slot is the instance expected to answer first, never
// before now; the wake-up is the earliest time something frees, and a busy
// instance free now wakes nobody (its lease coming back does).
func TestSlotOffer(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	var s Slot
	if s.Found() {
		t.Fatal("an empty slot found something")
	}
	s.Offer(now.Add(-time.Minute), now, 3*time.Second, true) // busy, free now: done at +3s
	if !s.Found() || !s.At.Equal(now) || !s.Done.Equal(now.Add(3*time.Second)) || !s.Wake.IsZero() {
		t.Fatalf("busy instance: %+v", s)
	}
	s.Offer(now.Add(2*time.Second), now, 500*time.Millisecond, false) // a window frees at +2s: done at +2.5s
	if !s.At.Equal(now.Add(2*time.Second)) || !s.Done.Equal(now.Add(2500*time.Millisecond)) || !s.Wake.Equal(now.Add(2*time.Second)) {
		t.Fatalf("a sooner answer: %+v", s)
	}
	s.Offer(now.Add(time.Second), now, 5*time.Second, false) // frees sooner, answers later
	if !s.Done.Equal(now.Add(2500*time.Millisecond)) || !s.Wake.Equal(now.Add(time.Second)) {
		t.Fatalf("a later answer changed the slot, or the sooner wake-up was missed: %+v", s)
	}
	if got := RetryAfter(now.Add(200*time.Millisecond), now); got != MinRetryAfter {
		t.Fatalf("RetryAfter under a second: %v", got)
	}
	if got := RetryAfter(now.Add(20*time.Second), now); got != 20*time.Second {
		t.Fatalf("RetryAfter %v, want 20s", got)
	}
}

// TestQueueLeavesANewcomerAPlace: one client flooding the queue stops
// short of filling it, and past half full at an even share; another's
// first search, and each newcomer's, still finds a place.
func TestQueueLeavesANewcomerAPlace(t *testing.T) {
	q := NewQueue[string](12)
	greedy := make([]string, 12)
	for i := range greedy {
		greedy[i] = "greedy"
	}
	// Alone, it leaves a seat of 12/3 = 4 for a newcomer.
	if ws := waiters(q, greedy...); len(ws) != 8 {
		t.Fatalf("the greedy client took %d places of 12, want 8", len(ws))
	}
	if _, ok := q.Join(&Waiter[string]{Client: "modest"}); !ok {
		t.Fatal("the modest client's first search found no place beside the greedy one")
	}
	// Two waiting: past half full, the greedy client is over its share of 6.
	if _, ok := q.Join(&Waiter[string]{Client: "greedy"}); ok {
		t.Error("the greedy client took a place past its share")
	}
	if _, ok := q.Join(&Waiter[string]{Client: "modest"}); !ok {
		t.Error("the modest client's second search found no place within its share")
	}
	for _, c := range []string{"b", "c"} {
		if _, ok := q.Join(&Waiter[string]{Client: c}); !ok {
			t.Errorf("newcomer %s found no place (%d waiting)", c, q.Len())
		}
	}
	if n, ok := q.Join(&Waiter[string]{Client: "d"}); ok || n != 12 {
		t.Errorf("newcomer d: %d, %v; want the queue full (12) and refused", n, ok)
	}
}
