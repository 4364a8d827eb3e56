package polite

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
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

// fleet is the public instances' own short window as a whole: at most
// room searches, as Politeness keeps them (the tests here stay within
// one window). A search goes when Fair allows it and there is room.
type fleet struct {
	f    *Fair
	room int
}

func (p *fleet) serve(client string, n int, now time.Time) int {
	got := 0
	for range n {
		if ok, _ := p.f.Allowed(client, now); ok && p.room > 0 {
			p.f.Take(client, now)
			p.room--
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

// TestFairShareThreeClientsEachGetAShare: on 3 instances (30 searches in
// 20 s), three greedy clients coming one after another each get part of
// the window at once (the attack: A 20, B 10, C none), and so
// does every later newcomer while the window has room.
func TestFairShareThreeClientsEachGetAShare(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	p := &fleet{f: NewFair(defaultWindows, func() int { return 3 }).WithBase(start), room: 30}
	a := p.serve("A", 40, start)
	b := p.serve("B", 40, start.Add(3*time.Second))
	c := p.serve("C", 40, start.Add(5*time.Second))
	// Alone, A keeps a seat of a third (10); beside it B's seat is a
	// third shared by two (5), so B has 5 at once; C's seat 3, so C 2.
	if a != 20 || b != 5 || c != 2 {
		t.Fatalf("A, B, C got %d, %d, %d; want 20, 5, 2", a, b, c)
	}
	for i := 0; p.room > 0; i++ {
		if got := p.serve(fmt.Sprintf("late-%d", i), 5, start.Add(6*time.Second)); got < 1 {
			t.Fatalf("newcomer %d got nothing with %d of the window free", i, p.room)
		}
	}
	// A, over its share, gets nothing while the others are below theirs.
	if ok, _ := p.f.Allowed("A", start.Add(7*time.Second)); ok {
		t.Fatal("A, over its share, was let in beside clients below theirs")
	}
}

// TestFairShareNeverOvertakesAnActiveClient: however many greedy clients
// come after it, a client that searched once keeps room to reach what
// each of them took (up to its share now; one of a tie goes first), and
// the window keeps a seat.
func TestFairShareNeverOvertakesAnActiveClient(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	p := &fleet{f: NewFair(defaultWindows, func() int { return 3 }).WithBase(start).WithLend(0), room: 30}
	if p.serve("light", 1, start) != 1 {
		t.Fatal("the first search was refused")
	}
	least := 30
	var share int
	for k := range 3 {
		got := p.serve(fmt.Sprintf("greedy-%d", k), 30, start.Add(time.Duration(k+1)*time.Second))
		least = min(least, got)
		var seat int
		seat, share = seatAndShare(30, k+2) // active: light and k+1 greedy ones
		// Of two at one level, one goes first: the light one may be left
		// one behind, never more.
		if want := max(min(share, got)-2, 0) + seat; got < 1 || p.room < want {
			t.Fatalf("greedy-%d got %d and left %d, want at least 1 taken and %d left (the light one's way to %d less one, and a seat of %d)",
				k, got, p.room, want, min(share, got), seat)
		}
	}
	// The light one goes up to the least served greedy ones' level (or
	// its share), as far as the room beyond the seat goes.
	seat, _ := seatAndShare(30, 5)
	want := min(min(share, least)-1, p.room-seat)
	if got := p.serve("light", 30, start.Add(10*time.Second)); got != want || want < 0 {
		t.Fatalf("the light client then got %d more, want %d (to the least served one's %d, share %d)", got, want, least, share)
	}
}

// TestFairShareGivesWhatOthersLeave: beside a light client, a heavy one
// gets its share and no more while the light one may still catch up, and
// the light one then reaches its share: a seat stays for a newcomer.
func TestFairShareGivesWhatOthersLeave(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	f := NewFair(defaultWindows, func() int { return 3 }).WithBase(start)
	f.Take("light", start)
	// Capacity 30, two active: the seat is 5, a share 12. The heavy one
	// takes its share, and one more: the room left is the light one's
	// way to 12 and the seat.
	if got := served(f, "heavy", 30, start.Add(time.Second)); got != 13 {
		t.Fatalf("the heavy client beside a light one got %d, want 13", got)
	}
	if got := served(f, "light", 20, start.Add(2*time.Second)); got != 11 {
		t.Fatalf("the light client then got %d of 20, want 11 (to its share of 12)", got)
	}
	if got := served(f, "newcomer", 20, start.Add(3*time.Second)); got < 1 {
		t.Fatal("the seat was not kept")
	}
}

// TestFairShareLendsTheSeatLate: a client alone gets all but the seat (a
// third), the seat when the window starts to free within lend; the
// refusal says exactly when.
func TestFairShareLendsTheSeatLate(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	f := NewFair(defaultWindows, func() int { return 1 }).WithBase(start).WithLend(2 * time.Second)
	p := &fleet{f: f, room: 10}
	if got := p.serve("solo", 10, start); got != 7 {
		t.Fatalf("alone, got %d of 10, want 7 (the seat kept)", got)
	}
	// Its searches leave at 20 s, as they do at the instances: lent at 18 s.
	ok, at := f.Allowed("solo", start.Add(10*time.Second))
	if ok || !at.Equal(start.Add(18*time.Second)) {
		t.Fatalf("at 10 s: allowed %v, free at %v; want refused until 18 s", ok, at.Sub(start))
	}
	if ok, _ := f.Allowed("solo", start.Add(18*time.Second-time.Millisecond)); ok {
		t.Fatal("lent before the time it said")
	}
	if got := p.serve("solo", 10, start.Add(18*time.Second)); got != 3 {
		t.Fatalf("the seat lent, got %d more, want 3", got)
	}
	// Lend is at most a quarter of the shortest window.
	if g := NewFair(defaultWindows, func() int { return 1 }).WithLend(time.Hour); g.lend != 5*time.Second {
		t.Fatalf("lend %v, want 5 s", g.lend)
	}
}

// TestFairShareOwesAWaitingNewcomer: a client that asked and waits for
// its first search is owed, as one that searched: with the seat lent, a
// client over its share takes nothing of what frees before it.
func TestFairShareOwesAWaitingNewcomer(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	f := NewFair(defaultWindows, func() int { return 1 }).WithBase(start).WithLend(2 * time.Second)
	p := &fleet{f: f, room: 10}
	p.serve("solo", 10, start)
	p.serve("solo", 10, start.Add(18*time.Second)) // the seat lent: 10 of 10
	if ok, _ := f.Allowed("solo", start.Add(19*time.Second)); !ok {
		t.Fatal("alone, with the seat lent, the client was refused")
	}
	if ok, _ := f.Allowed("waiting", start.Add(19*time.Second)); !ok {
		t.Fatal("a newcomer's first search was refused")
	}
	// The newcomer waits (no room); the other, over its share, is refused
	// until its first 7 leave at 20 s: then the newcomer's share (4) and
	// a seat (1) fit in what is free.
	ok, at := f.Allowed("solo", start.Add(19*time.Second))
	if ok || !at.Equal(start.Add(20*time.Second)) {
		t.Fatalf("the client over its share beside a waiting newcomer: allowed %v until %v; want refused until 20 s", ok, at.Sub(start))
	}
}

// TestFairShareOfATinyWindow: autocompletion's window on one instance (2
// in 20 s) still splits: a greedy client gets one, another client one.
func TestFairShareOfATinyWindow(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	p := &fleet{f: NewFair([]Window{{Max: 2, Per: 20 * time.Second}, {Max: 20, Per: 10 * time.Minute}}, func() int { return 1 }).WithBase(start), room: 2}
	if got := p.serve("A", 2, start); got != 1 {
		t.Fatalf("the greedy client got %d of 2, want 1", got)
	}
	if got := p.serve("B", 3, start.Add(time.Second)); got != 1 {
		t.Fatalf("B got %d of 3 beside a greedy client, want 1", got)
	}
}

// TestFairShareRefusalSaysTheEarliestTime: whenever a client is refused,
// it is let in at the time it was told and not a millisecond before, the
// others' use standing as it is.
func TestFairShareRefusalSaysTheEarliestTime(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	for _, lend := range []time.Duration{0, 2 * time.Second, 5 * time.Second} {
		f := NewFair(defaultWindows, func() int { return 3 }).WithBase(start).WithLend(lend)
		served(f, "A", 40, start)
		served(f, "B", 40, start.Add(3*time.Second))
		served(f, "C", 40, start.Add(5*time.Second))
		for _, c := range []string{"A", "B", "C"} {
			now := start.Add(6 * time.Second)
			ok, at := f.Allowed(c, now)
			if ok {
				continue
			}
			if before, _ := f.Allowed(c, at.Add(-time.Millisecond)); before {
				t.Errorf("lend %v: %s let in before the %v it was told", lend, c, at.Sub(start))
			}
			if then, _ := f.Allowed(c, at); !then {
				t.Errorf("lend %v: %s refused at the %v it was told", lend, c, at.Sub(start))
			}
		}
	}
}

// BenchmarkFairAllowedTake: one search's check and count among many
// active clients (the others' use is read again after each Take).
func BenchmarkFairAllowedTake(b *testing.B) {
	for _, clients := range []int{10, 1000} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			start := time.Unix(1_800_000_000, 0)
			f := NewFair(defaultWindows, func() int { return 1000 }).WithBase(start)
			names := make([]string, clients)
			for i := range names {
				names[i] = fmt.Sprintf("client-%d", i)
				f.Take(names[i], start)
			}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				now := start.Add(time.Duration(i) * time.Millisecond % (15 * time.Second))
				c := names[i%clients]
				if ok, _ := f.Allowed(c, now); ok {
					f.Take(c, now)
				}
			}
		})
	}
}

// TestFairShareLevelsFollowInPlace: the others' use, changed in place on
// each search and newcomer, is what reading every active client again
// gives, through a random run of asks and searches.
func TestFairShareLevelsFollowInPlace(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	f := NewFair(defaultWindows, func() int { return 2 }).WithBase(start)
	rng := rand.New(rand.NewPCG(1, 2))
	now := start
	for step := range 5000 {
		now = now.Add(time.Duration(rng.IntN(400)) * time.Millisecond)
		c := fmt.Sprintf("c%d", rng.IntN(12))
		if ok, _ := f.Allowed(c, now); ok && rng.IntN(3) > 0 {
			f.Take(c, now)
		}
		tt := int64(now.Sub(f.base))
		f.mu.Lock()
		f.levelsLocked(tt)
		for i := range f.windows {
			var want []int
			for _, u := range f.active {
				n, _ := f.used(u, i, tt)
				want = append(want, n)
			}
			slices.Sort(want)
			if !slices.Equal(f.levels[i].used, want) {
				f.mu.Unlock()
				t.Fatalf("step %d, window %d: levels %v, reading every client gives %v", step, i, f.levels[i].used, want)
			}
		}
		f.mu.Unlock()
	}
}

// TestTakeIfAllowedIsOneStep: a client's searches checked and counted at
// once, from many goroutines, get what they get one after another: no two
// pass the check on the same room (Allowed, then Take, let them).
func TestTakeIfAllowedIsOneStep(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	fresh := func() *Fair {
		f := NewFair(defaultWindows, func() int { return 3 }).WithBase(start)
		served(f, "other", 5, start) // another active client: a share, not the whole
		return f
	}
	want := 0
	for f := fresh(); f.TakeIfAllowed("greedy", start); {
		want++
	}
	if want == 0 || want >= 30 {
		t.Fatalf("one after another the greedy client got %d of 30", want)
	}
	f := fresh()
	var got atomic.Int32
	var wg sync.WaitGroup
	for range 4 * want {
		wg.Go(func() {
			if f.TakeIfAllowed("greedy", start) {
				got.Add(1)
			}
		})
	}
	wg.Wait()
	if int(got.Load()) != want {
		t.Errorf("at once the greedy client got %d, one after another %d", got.Load(), want)
	}
}

// TestUntakeGivesTheShareBack: a search counted and not sent gives its
// place back to its client.
func TestUntakeGivesTheShareBack(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	f := NewFair(defaultWindows, func() int { return 3 }).WithBase(start)
	served(f, "other", 5, start)
	n := 0
	for f.TakeIfAllowed("c", start) {
		n++
	}
	f.Untake("c", start)
	if !f.TakeIfAllowed("c", start) {
		t.Errorf("after %d searches and one given back, the client may not take it again", n)
	}
	if f.TakeIfAllowed("c", start) {
		t.Errorf("the client took one more than it gave back")
	}
}
