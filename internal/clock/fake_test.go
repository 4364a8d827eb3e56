package clock

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/searxgate/searxgate/internal/deptest"
)

func TestImports(t *testing.T) { deptest.Check(t, ".") }

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// received is what c holds now, without waiting.
func received(c <-chan time.Time) (time.Time, bool) {
	select {
	case v := <-c:
		return v, true
	default:
		return time.Time{}, false
	}
}

func TestFakeNow(t *testing.T) {
	var zero Fake
	if !zero.Now().IsZero() {
		t.Fatalf("zero Fake reads %v", zero.Now())
	}
	f := NewFake(t0)
	f.Advance(time.Minute)
	if got := f.Now(); !got.Equal(t0.Add(time.Minute)) {
		t.Fatalf("after Advance: %v", got)
	}
	f.Advance(-time.Hour) // ignored
	f.Set(t0)
	if got := f.Now(); !got.Equal(t0) {
		t.Fatalf("after Set: %v", got)
	}
}

func TestFakeTimer(t *testing.T) {
	f := NewFake(t0)
	c, stop := f.NewTimer(time.Second)
	f.Advance(999 * time.Millisecond)
	if _, ok := received(c); ok {
		t.Fatal("fired early")
	}
	f.Advance(time.Millisecond)
	if v, ok := received(c); !ok || !v.Equal(t0.Add(time.Second)) {
		t.Fatalf("at its time: %v %v", v, ok)
	}
	f.Advance(time.Hour)
	if _, ok := received(c); ok {
		t.Fatal("fired twice")
	}
	if stop() {
		t.Fatal("stop of a fired timer reported true")
	}

	c, stop = f.NewTimer(time.Second)
	if !stop() {
		t.Fatal("stop of a waiting timer reported false")
	}
	if stop() {
		t.Fatal("second stop reported true")
	}
	f.Advance(time.Hour)
	if _, ok := received(c); ok {
		t.Fatal("a stopped timer fired")
	}
	if p := f.Pending(); len(p) != 0 {
		t.Fatalf("pending after stop: %v", p)
	}

	c, _ = f.NewTimer(0)
	if _, ok := received(c); !ok {
		t.Fatal("a timer of 0 did not fire at once")
	}
}

func TestFakeTicker(t *testing.T) {
	f := NewFake(t0)
	c, stop := f.NewTicker(10 * time.Second)
	for i := 1; i <= 3; i++ {
		f.Advance(10 * time.Second)
		if v, ok := received(c); !ok || !v.Equal(t0.Add(time.Duration(i)*10*time.Second)) {
			t.Fatalf("tick %d: %v %v", i, v, ok)
		}
	}
	// A long jump: one tick (the reader was slow; the rest are dropped),
	// and the next one stays on the beat.
	f.Advance(35 * time.Second)
	if _, ok := received(c); !ok {
		t.Fatal("no tick after a long jump")
	}
	if _, ok := received(c); ok {
		t.Fatal("more than one tick buffered")
	}
	if p := f.Pending(); !slices.Equal(p, []time.Duration{5 * time.Second}) {
		t.Fatalf("next tick in %v, want 5s", p)
	}
	// Unread ticks are dropped, not queued.
	f.Advance(10 * time.Second)
	f.Advance(10 * time.Second)
	if _, ok := received(c); !ok {
		t.Fatal("no tick")
	}
	if _, ok := received(c); ok {
		t.Fatal("a dropped tick was queued")
	}
	stop()
	f.Advance(time.Hour)
	if _, ok := received(c); ok {
		t.Fatal("a stopped ticker ticked")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("NewTicker(0) did not panic")
		}
	}()
	f.NewTicker(0)
}

func TestFakeOrder(t *testing.T) {
	f := NewFake(t0)
	late, _ := f.NewTimer(3 * time.Second)
	tick, _ := f.NewTicker(time.Second)
	early, _ := f.NewTimer(2 * time.Second)
	if p := f.Pending(); !slices.Equal(p, []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}) {
		t.Fatalf("pending %v", p)
	}
	f.Advance(2 * time.Second)
	if _, ok := received(early); !ok {
		t.Fatal("early did not fire")
	}
	if _, ok := received(late); ok {
		t.Fatal("late fired early")
	}
	if _, ok := received(tick); !ok {
		t.Fatal("no tick")
	}
}

// TestFakeBlockUntil: a loop in another goroutine waits on a timer; the
// test learns it is waiting, fires it, and learns it waits again.
func TestFakeBlockUntil(t *testing.T) {
	f := NewFake(t0)
	var mu sync.Mutex
	var laps int
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 3 {
			c, _ := f.NewTimer(time.Minute)
			<-c
			mu.Lock()
			laps++
			mu.Unlock()
		}
	}()
	for i := range 3 {
		if p := f.BlockUntil(1); !slices.Equal(p, []time.Duration{time.Minute}) {
			t.Fatalf("lap %d: pending %v", i, p)
		}
		f.Advance(time.Minute)
	}
	<-done
	if laps != 3 {
		t.Fatalf("%d laps", laps)
	}
}

func TestFakeRace(t *testing.T) {
	f := NewFake(t0)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				c, stop := f.NewTimer(time.Millisecond)
				f.Advance(time.Millisecond)
				<-c
				stop()
				_ = f.Now()
			}
		})
	}
	wg.Wait()
}

func TestReal(t *testing.T) {
	var c Clock = Real{}
	if Or(nil) != c {
		t.Fatal("Or(nil) is not Real")
	}
	if c.Now().IsZero() {
		t.Fatal("Real reads the zero time")
	}
	tc, stop := c.NewTimer(0)
	<-tc
	stop()
	k, stopK := c.NewTicker(time.Millisecond)
	<-k
	stopK()
}
