package proxy

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
	m := newMetrics()
	const a, b = "https://a.example/", "https://b.example/"
	first, ofB := newInstanceMetrics(), newInstanceMetrics()
	m.upstream(first, a, pool.Outcome{Kind: pool.OK}, time.Millisecond)
	m.upstream(first, a, pool.Outcome{Kind: pool.Refused, Reason: "rate_limited"}, time.Millisecond)
	m.upstream(ofB, b, pool.Outcome{Kind: pool.Cancelled, Reason: "busy"}, time.Millisecond)
	again := newInstanceMetrics() // forgotten, then back: a new record
	m.upstream(again, a, pool.Outcome{Kind: pool.OK}, time.Millisecond)

	got := map[string]Totals{}
	m.EachTotals(func(inst string, tt *Totals) {
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
	if v := again.view(); v.ByKind["ok"] != 1 || len(v.Recent) != 1 {
		t.Errorf("the new record counts from its start: %+v", v)
	}
	if v := first.view(); v.ByKind["ok"] != 1 || v.ByKind["refused"] != 1 {
		t.Errorf("the old record: %+v", v)
	}
}

// TestTotalsConcurrent: counting in records made and dropped races with
// reading (go test -race).
func TestTotalsConcurrent(t *testing.T) {
	m := newMetrics()
	const inst = "https://a.example/"
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range 200 {
				im := newInstanceMetrics()
				if i%2 == 0 {
					im = nil
				}
				m.upstream(im, inst, pool.Outcome{Kind: pool.Failed, Reason: "timeout"}, time.Millisecond)
			}
		})
	}
	wg.Go(func() {
		for range 50 {
			m.EachTotals(func(string, *Totals) {})
		}
	})
	wg.Wait()
	var n uint64
	m.EachTotals(func(_ string, tt *Totals) { n = tt.ByKind[pool.Failed] })
	if n != 800 {
		t.Fatalf("%d failures counted, want 800", n)
	}
}
