package fair

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"
)

// waitFor spins until cond holds, failing after a minute (a watchdog, not
// a pace: the goroutines it waits for only have to be scheduled).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("never: %s", what)
		}
		runtime.Gosched()
	}
}

type grant struct {
	client  string
	release func()
}

// TestFloodDoesNotHoldBackAnother: A holds both slots and has 30 more
// waits queued; B's one wait, queued after them, gets the first slot
// that frees, and the next goes back to A.
func TestFloodDoesNotHoldBackAnother(t *testing.T) {
	q := NewQueue(2)
	ctx := context.Background()
	got := make(chan grant, 64)
	wait := func(client string) {
		rel, err := q.Wait(ctx, client)
		if err != nil {
			t.Error(err)
			return
		}
		got <- grant{client, rel}
	}
	a1, _ := q.Wait(ctx, "A")
	a2, _ := q.Wait(ctx, "A")
	for range 30 {
		go wait("A")
	}
	waitFor(t, "A's 30 waits queued", func() bool { own, _ := q.Waiting("A"); return own == 30 })
	go wait("B")
	waitFor(t, "B's wait queued", func() bool { own, _ := q.Waiting("B"); return own == 1 })
	a1()
	g := <-got
	if g.client != "B" {
		t.Fatalf("the freed slot went to %s, want B", g.client)
	}
	g.release()
	if g = <-got; g.client != "A" {
		t.Fatalf("B's slot went to %s, want A (B waits for nothing)", g.client)
	}
	g.release()
	a2()
	for range 29 {
		(<-got).release()
	}
	if own, all := q.Waiting("A"); own != 0 || all != 0 {
		t.Errorf("left waiting: A %d, all %d", own, all)
	}
}

// TestRoundRobin: three clients with waits queued behind a held slot are
// served one each in turn, not one client's queue first.
func TestRoundRobin(t *testing.T) {
	q := NewQueue(1)
	ctx := context.Background()
	hold, _ := q.Wait(ctx, "X")
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	for _, c := range []string{"A", "A", "A", "B", "B", "C"} {
		wg.Add(1)
		_, before := q.Waiting(c)
		go func() {
			defer wg.Done()
			rel, err := q.Wait(ctx, c)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, c)
			mu.Unlock()
			rel()
		}()
		waitFor(t, c+" queued", func() bool { _, all := q.Waiting(c); return all == before+1 })
	}
	hold()
	wg.Wait()
	want := "A B C A B A"
	if got := join(order); got != want {
		t.Errorf("served %s, want %s", got, want)
	}
}

func join(s []string) string {
	out := ""
	for i, c := range s {
		if i > 0 {
			out += " "
		}
		out += c
	}
	return out
}

// TestCancelledWaitLeaves: a wait whose context ends leaves the queue at
// once, and the slot goes to the next wait.
func TestCancelledWaitLeaves(t *testing.T) {
	q := NewQueue(1)
	hold, _ := q.Wait(context.Background(), "A")
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := q.Wait(ctx, "B")
		errc <- err
	}()
	waitFor(t, "B queued", func() bool { own, _ := q.Waiting("B"); return own == 1 })
	cancel()
	if err := <-errc; err != context.Canceled {
		t.Fatalf("the cancelled wait returned %v", err)
	}
	if _, all := q.Waiting("B"); all != 0 {
		t.Fatalf("%d waits left after the cancel", all)
	}
	hold()
	rel, err := q.Wait(context.Background(), "C")
	if err != nil {
		t.Fatal(err)
	}
	rel()
	if len(q.running) != 0 {
		t.Errorf("clients counted after all left: %v", q.running)
	}
}

// TestOrderForgets: past a few clients, those no longer active are
// forgotten; the active ones are kept.
func TestOrderForgets(t *testing.T) {
	var o Order
	for i := range 100 {
		o.Served(string(rune('a' + i)))
		o.Prune(func(c string) bool { return c == "a" })
	}
	if len(o.served) > remembered+1 || o.served["a"] == 0 {
		t.Errorf("%d remembered, a's turn %d", len(o.served), o.served["a"])
	}
}
