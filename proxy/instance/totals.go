package instance

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/searxgate/searxgate/pool"
)

// Totals are one instance's upstream searches since the process started.
type Totals struct {
	ByKind   [NumKinds]uint64 // indexed by pool.Kind, and Excused
	ByReason map[string]uint64
}

// instanceTotals is one instance's lifetime record behind Totals.
type instanceTotals struct {
	byKind   [NumKinds]atomic.Uint64
	mu       sync.Mutex        // guards byReason
	byReason map[string]uint64 // made on first use
}

// Count counts one upstream search of inst: in its record r's recent
// outcomes (r nil: none) and in its lifetime totals.
func (g *Registry) Count(r *Record, inst string, o pool.Outcome, d time.Duration) {
	tv, ok := g.totals.Load(inst)
	if !ok {
		tv, _ = g.totals.LoadOrStore(inst, new(instanceTotals))
	}
	totals := tv.(*instanceTotals)
	k := kindIndex(o)
	if k < NumKinds {
		totals.byKind[k].Add(1)
	}
	if k == Excused {
		o.Reason = "" // not a reason of the instance's
	}
	if o.Reason != "" {
		t := totals
		t.mu.Lock()
		if t.byReason == nil {
			t.byReason = map[string]uint64{}
		}
		t.byReason[string(o.Reason)]++
		t.mu.Unlock()
	}
	if r == nil {
		return
	}
	r.metrics.count(k, o.Reason, d)
}

// EachTotals calls f with every instance ever asked since the process
// started (or the last ResetCounters), in no order, and its totals.
// Forget does not drop them: an instance that leaves the pool and comes
// back counts on from where it was, so no count goes down but at a reset
// (what /metrics needs for rate()). t is reused between calls: f must not
// keep it or its map.
func (g *Registry) EachTotals(f func(inst string, t *Totals)) {
	t := Totals{ByReason: map[string]uint64{}}
	g.totals.Range(func(k, v any) bool {
		it := v.(*instanceTotals)
		for i := range t.ByKind {
			t.ByKind[i] = it.byKind[i].Load()
		}
		clear(t.ByReason)
		it.mu.Lock()
		for r, n := range it.byReason {
			t.ByReason[r] = n
		}
		it.mu.Unlock()
		f(k.(string), &t)
		return true
	})
}

// ResetCounters clears every instance's counters kept beside the pool's:
// its outcomes by kind and reason, its recent latencies, and its lifetime
// totals. The operator's pool reset calls it with pool.Reset, so that
// /status, /status.json and /metrics all start again from zero together;
// to /metrics that is a counter reset, as a restart is, which rate() and
// increase() take in stride. The politeness budgets (what was really
// sent) stay.
func (g *Registry) ResetCounters() {
	g.mu.RLock()
	for _, r := range g.m {
		if im := r.metrics; im != nil {
			im.reset()
		}
	}
	g.mu.RUnlock()
	g.totals.Clear()
}
