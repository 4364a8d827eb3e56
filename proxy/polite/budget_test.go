package polite

import (
	"testing"
	"time"
)

func TestPolitenessWindows(t *testing.T) {
	p := NewPoliteness(Window{Max: 3, Per: 20 * time.Second}, Window{Max: 5, Per: 10 * time.Minute})
	t0 := time.Unix(1_700_000_000, 0)
	const inst = "https://a.example/"
	for i := range 3 {
		if !p.Take(inst, t0.Add(time.Duration(i)*time.Second)) {
			t.Fatalf("search %d refused inside the budget", i+1)
		}
	}
	if p.Allowed(inst, t0.Add(3*time.Second)) || p.Take(inst, t0.Add(3*time.Second)) {
		t.Fatal("a 4th search within 20 s was allowed")
	}
	if !p.Allowed("https://b.example/", t0) {
		t.Fatal("another instance shares the budget")
	}
	// 20 s (and the margin) after the first search, one more is allowed.
	if p.Take(inst, t0.Add(20*time.Second)) {
		t.Fatal("a search inside the window's margin was allowed")
	}
	if !p.Take(inst, t0.Add(20*time.Second+Margin)) {
		t.Fatal("the 20 s window did not move on")
	}
	if !p.Take(inst, t0.Add(41*time.Second)) {
		t.Fatal("5th search refused although each window allows it")
	}
	// Five in 10 min: the sixth waits for the long window.
	if p.Take(inst, t0.Add(5*time.Minute)) {
		t.Fatal("a 6th search within 10 min was allowed")
	}
	if got := p.Used(inst, t0.Add(5*time.Minute), 10*time.Minute); got != 5 {
		t.Fatalf("Used = %d, want 5", got)
	}
	if !p.Take(inst, t0.Add(10*time.Minute+Margin)) {
		t.Fatal("the 10 min window did not move on")
	}
	p.Forget(inst)
	if got := p.Used(inst, t0.Add(10*time.Minute), time.Hour); got != 0 {
		t.Fatalf("Used after Forget = %d", got)
	}
}

func TestPolitenessUnlimited(t *testing.T) {
	p := NewPoliteness(Window{Max: 0, Per: time.Second})
	for range 100 {
		if !p.Take("x", time.Unix(0, 0)) {
			t.Fatal("a budget without windows refused")
		}
	}
}

// TestExtraGiveBack: an extra taken and never sent is given back, to the
// gateway and to its client.
func TestExtraGiveBack(t *testing.T) {
	b := NewExtraBudget(0.2, 2, time.Minute)
	t0 := time.Unix(1_700_000_000, 0)
	b.WithBase(t0)
	b.First("a", t0)
	if first, second := b.TakeExtra("a", t0, false), b.TakeExtra("a", t0, false); !first || !second {
		t.Fatal("floor extras refused")
	}
	if b.TakeExtra("a", t0, false) {
		t.Fatal("a 3rd extra beyond the floor was allowed: the test proves nothing")
	}
	b.GiveBack("a", t0)
	if _, e := b.Counts(t0); e != 1 {
		t.Fatalf("%d extras counted after one was given back, want 1", e)
	}
	if !b.TakeExtra("a", t0.Add(time.Second), false) {
		t.Fatal("the extra given back is not there to take again")
	}
}

func TestExtraBudget(t *testing.T) {
	b := NewExtraBudget(0.2, 2, time.Minute)
	t0 := time.Unix(1_700_000_000, 0)
	// With no traffic the floor allows two extras, not three.
	if first, second := b.TakeExtra("", t0, false), b.TakeExtra("", t0, false); !first || !second {
		t.Fatal("floor extras refused")
	}
	if b.TakeExtra("", t0, false) {
		t.Fatal("a 3rd extra beyond the floor was allowed")
	}
	// 20 first attempts allow 4 extras in all.
	for range 20 {
		b.First("", t0)
	}
	if first, second := b.TakeExtra("", t0, false), b.TakeExtra("", t0, false); !first || !second {
		t.Fatal("extras within 20 % refused")
	}
	if b.TakeExtra("", t0, false) {
		t.Fatal("extras beyond 20 % allowed")
	}
	if f, e := b.Counts(t0); f != 20 || e != 4 {
		t.Fatalf("Counts = %d, %d; want 20, 4", f, e)
	}
	// A window later everything has aged out.
	later := t0.Add(61 * time.Second)
	if f, e := b.Counts(later); f != 0 || e != 0 {
		t.Fatalf("Counts a window later = %d, %d; want 0, 0", f, e)
	}
	if !b.TakeExtra("", later, false) {
		t.Fatal("floor refused after the window moved on")
	}
	// Hedges get half the budget: one of the floor's two is used.
	if b.TakeExtra("", later, true) {
		t.Fatal("a hedge took the second half of the budget")
	}
	if !b.TakeExtra("", later, false) {
		t.Fatal("a retry was refused the budget's second half")
	}
}

func BenchmarkPolitenessTake(b *testing.B) {
	p := NewPoliteness(Window{Max: 10, Per: 20 * time.Second}, Window{Max: 100, Per: 10 * time.Minute})
	insts := make([]string, 1000)
	for i := range insts {
		insts[i] = "https://i" + string(rune('a'+i%26)) + ".example/" + string(rune(i))
	}
	t0 := time.Unix(1_700_000_000, 0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p.Take(insts[i%len(insts)], t0.Add(time.Duration(i)*time.Second))
	}
}

func TestPolitenessRingWraps(t *testing.T) {
	// A small ring that wraps many times keeps counting right.
	p := NewPoliteness(Window{Max: 3, Per: 10 * time.Second})
	t0 := time.Unix(1_700_000_000, 0)
	for i := range 30 {
		now := t0.Add(time.Duration(i) * 4 * time.Second)
		// One search every 4 s: never more than three in any 10 s.
		if !p.Take("x", now) {
			t.Fatalf("search %d at +%ds refused", i, i*4)
		}
	}
	if got := p.Used("x", t0.Add(29*4*time.Second), 10*time.Second); got != 3 {
		t.Fatalf("Used = %d, want 3", got)
	}
	if p.Take("x", t0.Add(29*4*time.Second+time.Second)) {
		t.Fatal("a 4th search within 10 s was allowed after wrapping")
	}
}

func TestPolitenessCapsWindow(t *testing.T) {
	p := NewPoliteness(Window{Max: 1 << 30, Per: time.Second})
	if p.classes[0].size != MaxWindow {
		t.Fatalf("ring size %d, want the cap %d", p.classes[0].size, MaxWindow)
	}
	p.Take("x", time.Unix(0, 0))
	if n := len(p.rings.Ring("x", false).times); n != 1 {
		t.Fatalf("a ring of one search holds %d times", n)
	}
}

func TestPolitenessOwnClass(t *testing.T) {
	t0 := time.Unix(1000, 0)
	p := NewPoliteness(Window{Max: 2, Per: 20 * time.Second})
	for i := range 50 {
		if !p.TakeAs("own", true, t0) {
			t.Fatalf("own search %d refused with no own budget", i)
		}
	}
	if !p.Allowed("own", t0) || !p.Take("own", t0) {
		t.Fatal("an own instance is held to the public budget")
	}
	p.TakeAs("pub", false, t0)
	p.TakeAs("pub", false, t0.Add(time.Second))
	if p.Allowed("pub", t0.Add(2*time.Second)) {
		t.Fatal("a public instance over its window is allowed")
	}
	if got, want := p.FreeAt("pub", t0.Add(2*time.Second)), t0.Add(20*time.Second+Margin); !got.Equal(want) {
		t.Fatalf("FreeAt = %v, want %v (the oldest search of the window + 20 s and the margin)", got.Sub(t0), want.Sub(t0))
	}
	if got := p.FreeAt("own", t0); !got.Equal(t0) {
		t.Fatalf("own FreeAt = %v, want now", got.Sub(t0))
	}

	q := NewPoliteness(Window{Max: 10, Per: 20 * time.Second}).WithOwn(Window{Max: 3, Per: 10 * time.Second})
	for i := range 3 {
		if !q.TakeAs("own", true, t0) {
			t.Fatalf("own search %d refused within its own budget of 3", i)
		}
	}
	if q.TakeAs("own", true, t0) || q.Take("own", t0) {
		t.Fatal("a 4th own search within 10 s was allowed")
	}
	// Becoming public starts afresh under the public budget.
	if !q.TakeAs("own", false, t0) {
		t.Fatal("a change of class kept the old class's history")
	}
}

// TestHold: an instance held until a time a shared budget said is not
// allowed before it, and FreeAt says so.
func TestHold(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	p := NewPoliteness(Window{Max: 10, Per: 20 * time.Second})
	p.base = t0
	p.Hold("a", t0.Add(5*time.Second), t0)
	p.Hold("a", t0.Add(2*time.Second), t0) // shorter: ignored
	if p.Allowed("a", t0.Add(4*time.Second)) || p.Take("a", t0.Add(4*time.Second)) {
		t.Fatal("allowed while held")
	}
	if got := p.FreeAt("a", t0); !got.Equal(t0.Add(5 * time.Second)) {
		t.Fatalf("FreeAt %v, want +5s", got.Sub(t0))
	}
	if !p.Allowed("a", t0.Add(5*time.Second)) || !p.Take("a", t0.Add(5*time.Second)) {
		t.Fatal("still held after the time said")
	}
	if !p.Allowed("b", t0) {
		t.Fatal("another instance held")
	}
	// No window at all (budget off): a hold still holds.
	off := NewPoliteness()
	off.base = t0
	off.Hold("a", t0.Add(time.Second), t0)
	if off.TakeAs("a", false, t0) {
		t.Fatal("taken while held with no window")
	}
}

// TestPolitenessOwnLimited: an own instance whose limiter is on is paced
// below SearXNG's windows (12 in 20 s), or by the operator's own budget
// where it is tighter.
func TestPolitenessOwnLimited(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	p := NewPoliteness(Window{Max: 10, Per: 20 * time.Second}).WithOwn()
	for i := range 5 {
		if !p.TakeClass("own", ClassOwn, t0.Add(time.Duration(i)*time.Millisecond)) {
			t.Fatalf("own search %d refused with no own budget", i)
		}
	}
	for i := range 12 {
		if !p.TakeClass("own", ClassOwnLimited, t0.Add(time.Duration(i)*time.Millisecond)) {
			t.Fatalf("search %d refused under the limiter's pace (12 in 20 s)", i+1)
		}
	}
	if p.TakeClass("own", ClassOwnLimited, t0.Add(time.Second)) {
		t.Fatal("a 13th search within 20 s reached an own instance whose limiter is on")
	}
	if got, want := p.FreeAt("own", t0.Add(time.Second)), t0.Add(20*time.Second+Margin); !got.Equal(want) {
		t.Fatalf("FreeAt %v, want %v", got.Sub(t0), want.Sub(t0))
	}

	tight := NewPoliteness().WithOwn(Window{Max: 5, Per: 20 * time.Second})
	for i := range 5 {
		if !tight.TakeClass("own", ClassOwnLimited, t0) {
			t.Fatalf("search %d refused inside the operator's budget", i+1)
		}
	}
	if tight.TakeClass("own", ClassOwnLimited, t0) {
		t.Fatal("the operator's tighter budget was not kept")
	}
	if got := tighter(LimiterBudget, []Window{{Max: 5, Per: 20 * time.Second}, {Max: 50, Per: time.Hour}}); len(got) != 3 || got[0].Max != 5 || got[1].Max != 120 || got[2].Max != 50 {
		t.Fatalf("tighter = %v", got)
	}
}

// TestRestamp: a search counted when it was planned moves to when it was
// sent, and the ring stays in order.
func TestRestamp(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	p := NewPoliteness(Window{Max: 3, Per: 20 * time.Second})
	for i := range 3 {
		p.Take("a", t0.Add(time.Duration(i)*time.Second))
	}
	// The first one was sent 5 s after it was planned.
	p.Restamp("a", t0, t0.Add(5*time.Second))
	if got, want := p.FreeAt("a", t0.Add(6*time.Second)), t0.Add(21*time.Second+Margin); !got.Equal(want) {
		t.Fatalf("FreeAt %v, want %v (the oldest is now the one planned at 1 s)", got.Sub(t0), want.Sub(t0))
	}
	p.Take("a", t0.Add(22*time.Second))
	if got, want := p.FreeAt("a", t0.Add(22*time.Second)), t0.Add(22*time.Second+Margin); !got.Equal(want) {
		t.Fatalf("FreeAt %v, want %v (the 3rd most recent is the one sent at 2 s)", got.Sub(t0), want.Sub(t0))
	}
}

// TestUntake: a search counted but never sent gives its place in the
// window back, and the ring stays in order.
func TestUntake(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	p := NewPoliteness(Window{Max: 3, Per: 20 * time.Second})
	for i := range 3 {
		p.Take("a", t0.Add(time.Duration(i)*time.Second))
	}
	if p.Allowed("a", t0.Add(3*time.Second)) {
		t.Fatal("the window should be full")
	}
	p.Untake("a", t0.Add(time.Second))
	if !p.Allowed("a", t0.Add(3*time.Second)) || p.Used("a", t0.Add(3*time.Second), 20*time.Second) != 2 {
		t.Fatalf("after Untake: allowed %v, used %d; want room for one, 2 used",
			p.Allowed("a", t0.Add(3*time.Second)), p.Used("a", t0.Add(3*time.Second), 20*time.Second))
	}
	p.Take("a", t0.Add(4*time.Second))
	// The oldest counted is now the one at 0 s: the window frees at 20 s.
	if got, want := p.FreeAt("a", t0.Add(5*time.Second)), t0.Add(20*time.Second+Margin); !got.Equal(want) {
		t.Fatalf("FreeAt %v, want %v", got.Sub(t0), want.Sub(t0))
	}
}

// TestExtraBudgetPerClient: a client whose every search needs a second
// opinion spends its own part of the extras, and leaves the rest to the
// others.
func TestExtraBudgetPerClient(t *testing.T) {
	b := NewExtraBudget(0.2, 20, time.Minute)
	t0 := time.Unix(1_700_000_000, 0)
	for range 60 {
		b.First("storm", t0)
	}
	for range 40 {
		b.First("calm", t0)
	}
	take := func(client string, n int) int {
		got := 0
		for range n {
			if b.TakeExtra(client, t0, false) {
				got++
			}
		}
		return got
	}
	// In all 20 (a fifth of 100); the storm's part is a fifth of its 60.
	if got := take("storm", 60); got != 12 {
		t.Fatalf("the storm took %d extras, want its part of 12", got)
	}
	if got := take("calm", 20); got != 8 {
		t.Fatalf("the calm client took %d extras, want the 8 left", got)
	}
	// A client that never searched gets nothing of it beyond the whole's
	// bound (spent now).
	if b.TakeExtra("stranger", t0, false) {
		t.Fatal("an extra beyond the whole budget")
	}
	// Hedges: half of a part.
	b2 := NewExtraBudget(0.2, 4, time.Minute)
	b2.First("a", t0)
	if h1, h2, h3 := b2.TakeExtra("a", t0, true), b2.TakeExtra("a", t0, true), b2.TakeExtra("a", t0, true); !h1 || !h2 || h3 {
		t.Fatal("a client alone: want two hedges of its part of 4, not three")
	}
}
