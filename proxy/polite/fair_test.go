package polite

import (
	"fmt"
	"testing"
	"time"
)

// defaultWindows is the public budget searxgate ships.
var defaultWindows = []Window{{Max: 10, Per: 20 * time.Second}, {Max: 100, Per: 10 * time.Minute}}

// served counts how many of n searches at now, one after another, client
// may take.
func served(f *Fair, client string, n int, now time.Time) int {
	got := 0
	for range n {
		if ok, _ := f.Allowed(client, now); ok {
			f.Take(client, now)
			got++
		}
	}
	return got
}

// TestFairShareCountsOnlyActiveClients: clients that stopped searching
// minutes ago share nothing with a client that comes later; the capacity
// they no longer use goes to whoever asks.
func TestFairShareCountsOnlyActiveClients(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	f := NewFair(defaultWindows, func() int { return 3 }).WithBase(start)
	now := start
	// Four clients, 15 searches each over the first minute.
	for i := range 60 {
		client := fmt.Sprintf("client-%d", i%4)
		if ok, _ := f.Allowed(client, now); !ok {
			t.Fatalf("search %d of %s refused within its share", i, client)
		}
		f.Take(client, now)
		now = now.Add(time.Second)
	}
	now = now.Add(2 * time.Minute)
	if got := served(f, "latecomer", 10, now); got < 9 {
		t.Fatalf("a lone client 2 minutes after the others stopped got %d of 10, want at least 9", got)
	}
}

// TestFairShareKeepsTheNewcomersReserve: a greedy client's burst leaves
// room for the next client, and the share among active clients still
// splits a window; alone, the reserve is released late in the window.
func TestFairShareKeepsTheNewcomersReserve(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	f := NewFair(defaultWindows, func() int { return 1 }).WithBase(start)
	// One instance: 10 per 20 s. Alone, all but a third (3).
	if got := served(f, "greedy", 10, start); got != 7 {
		t.Fatalf("the greedy client alone got %d of 10, want 7 (the reserve kept)", got)
	}
	if got := served(f, "newcomer", 5, start.Add(time.Second)); got < 4 {
		t.Fatalf("the newcomer got %d of 5 beside a greedy client, want at least 4", got)
	}
	solo := NewFair(defaultWindows, func() int { return 1 }).WithBase(start)
	served(solo, "greedy", 10, start)
	if ok, _ := solo.Allowed("greedy", start.Add(10*time.Second)); ok {
		t.Fatal("the reserve was released in the first half of the window")
	}
	if ok, _ := solo.Allowed("greedy", start.Add(16*time.Second)); !ok {
		t.Fatal("the reserve was not released late in the window")
	}
	// Now two are active: the greedy one is over its share.
	ok, free := f.Allowed("greedy", start.Add(2*time.Second))
	if ok || !free.After(start.Add(2*time.Second)) {
		t.Fatalf("the greedy client beside an active one: allowed %v, frees %v", ok, free)
	}
}

// TestFairShareGivesWhatOthersLeave: among active clients, one that asks
// more gets what the others leave of a window, all but the reserve.
func TestFairShareGivesWhatOthersLeave(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	f := NewFair(defaultWindows, func() int { return 3 }).WithBase(start)
	f.Take("light", start)
	// Capacity 30: half is 15; all but the reserve (10) and the light
	// client's one is 19.
	if got := served(f, "heavy", 30, start.Add(time.Second)); got != 19 {
		t.Fatalf("the heavy client beside a light one got %d, want 19", got)
	}
	// The light one may still take its half (the instances' own budget
	// says how much of it is there).
	if got := served(f, "light", 20, start.Add(2*time.Second)); got != 14 {
		t.Fatalf("the light client then got %d of 20, want 14 (half, less its one)", got)
	}
}

func TestFairShareFormula(t *testing.T) {
	for _, c := range []struct {
		c, n, others int
		longest      bool
		share        int
		alone        bool
	}{
		{c: 30, n: 1, share: 20, alone: true},
		{c: 30, n: 2, others: 20, share: 15},
		{c: 30, n: 2, others: 1, share: 19},
		{c: 30, n: 5, others: 4, share: 16},
		{c: 300, n: 1, longest: true, share: 150},
		{c: 300, n: 3, others: 200, longest: true, share: 75},
		{c: 300, n: 2, others: 10, longest: true, share: 140},
		{c: 1, n: 4, share: 1},
	} {
		share, alone := fairShare(c.c, c.n, c.others, c.longest)
		if share != c.share || alone != c.alone {
			t.Errorf("fairShare(%d, %d, %d, %v) = %d, %v; want %d, %v", c.c, c.n, c.others, c.longest, share, alone, c.share, c.alone)
		}
	}
}
