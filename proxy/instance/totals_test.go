package instance

import (
	"sync"
	"testing"
	"time"

	"github.com/searxgate/searxgate/pool"
)

// TestTotalsSurviveForget: an instance that left the pool and comes back
// has a new record (its recent outcomes start afresh), but its Totals go
// on from where they were, so that /metrics never sees a count go down.
func TestTotalsSurviveForget(t *testing.T) {
	g := New(Config{})
	const a, b = "https://a.example/", "https://b.example/"
	first, ofB := g.Ensure(a), g.Ensure(b)
	g.Count(first, a, pool.Outcome{Kind: pool.OK}, time.Millisecond)
	g.Count(first, a, pool.Outcome{Kind: pool.Refused, Reason: "rate_limited"}, time.Millisecond)
	g.Count(ofB, b, pool.Outcome{Kind: pool.Cancelled, Reason: "busy"}, time.Millisecond)
	g.Forget(a)
	again := g.Ensure(a) // forgotten, then back: a new record
	if again == first {
		t.Fatal("the forgotten instance kept its record")
	}
	g.Count(again, a, pool.Outcome{Kind: pool.OK}, time.Millisecond)

	got := map[string]Totals{}
	g.EachTotals(func(inst string, tt *Totals) {
		c := Totals{ByKind: tt.ByKind, ByReason: map[string]uint64{}}
		for r, n := range tt.ByReason {
			c.ByReason[r] = n
		}
		got[inst] = c
	})
	if len(got) != 2 {
		t.Fatalf("totals of %d instances, want 2: %v", len(got), got)
	}
	if ta := got[a]; ta.ByKind[pool.OK] != 2 || ta.ByKind[pool.Refused] != 1 || ta.ByReason["rate_limited"] != 1 || len(ta.ByReason) != 1 {
		t.Errorf("a: %+v", ta)
	}
	if tb := got[b]; tb.ByKind[pool.Cancelled] != 1 || tb.ByReason["busy"] != 1 {
		t.Errorf("b: %+v", tb)
	}
	if v := again.Metrics().View(); v.ByKind["ok"] != 1 || len(v.Recent) != 1 {
		t.Errorf("the new record counts from its start: %+v", v)
	}
	if v := first.Metrics().View(); v.ByKind["ok"] != 1 || v.ByKind["refused"] != 1 {
		t.Errorf("the old record: %+v", v)
	}
	g.ResetCounters()
	n := 0
	g.EachTotals(func(string, *Totals) { n++ })
	if v := again.Metrics().View(); n != 0 || len(v.ByKind) != 0 || len(v.Recent) != 0 {
		t.Errorf("after a reset: totals of %d instances, the record's %+v", n, v)
	}
}

// TestTotalsConcurrent: counting in records made and dropped races with
// reading (go test -race).
func TestTotalsConcurrent(t *testing.T) {
	g := New(Config{})
	const inst = "https://a.example/"
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range 200 {
				r := g.Ensure(inst)
				if i%2 == 0 {
					r = nil
				} else if i%3 == 0 {
					g.Forget(inst)
				}
				g.Count(r, inst, pool.Outcome{Kind: pool.Failed, Reason: "timeout"}, time.Millisecond)
			}
		})
	}
	wg.Go(func() {
		for range 50 {
			g.EachTotals(func(string, *Totals) {})
		}
	})
	wg.Wait()
	var n uint64
	g.EachTotals(func(_ string, tt *Totals) { n = tt.ByKind[pool.Failed] })
	if n != 800 {
		t.Fatalf("%d failures counted, want 800", n)
	}
}
