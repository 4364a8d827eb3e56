package proxy

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/searxgate/searxgate/pool"
)

// latencyBuckets are the upper bounds, in seconds, of the latency
// histograms (Prometheus style: each counts observations ≤ its bound).
var latencyBuckets = [...]float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8}

// LatencyBuckets returns the buckets' upper bounds (a copy).
func LatencyBuckets() []float64 { return append([]float64(nil), latencyBuckets[:]...) }

// Histogram is a fixed-bucket latency histogram, safe for concurrent use.
type Histogram struct {
	counts [len(latencyBuckets) + 1]atomic.Uint64 // the last is +Inf
	sumNS  atomic.Int64
}

func (h *Histogram) observe(d time.Duration) {
	s := d.Seconds()
	i := 0
	for i < len(latencyBuckets) && s > latencyBuckets[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sumNS.Add(int64(d))
}

// Snapshot returns cumulative counts per bucket (the last is +Inf, i.e. the
// total count) and the sum in seconds.
func (h *Histogram) Snapshot() (cumulative []uint64, sum float64) {
	cumulative = make([]uint64, len(h.counts))
	var c uint64
	for i := range h.counts {
		c += h.counts[i].Load()
		cumulative[i] = c
	}
	return cumulative, float64(h.sumNS.Load()) / 1e9
}

// searchOutcomes are the ways a client search ends, as metrics count them.
var searchOutcomes = [...]string{"upstream", "cached", "coalesced", "stale", "failed", "limited"}

// SearchOutcomes returns the ways a client search ends (a copy).
func SearchOutcomes() []string { return append([]string(nil), searchOutcomes[:]...) }

// recentN is how many recent upstream latencies each instance keeps for the
// status page's sparkline.
const recentN = 32

// InstanceMetrics are the recent upstream outcomes of one instance, as
// /status shows them; they live in its record, and Forget drops them with
// it (its lifetime totals stay in Metrics).
type InstanceMetrics struct {
	mu       sync.Mutex // guards everything below
	byKind   [NumKinds]uint64
	byReason map[string]uint64
	recent   [recentN]float32 // latencies in ms; ring
	kinds    [recentN]uint8   // kind of each recent attempt (kindIndex)
	next, n  int
}

// InstanceView is a copy of one instance's metrics.
type InstanceView struct {
	ByKind   map[string]uint64 // ok, soft, refused, failed, cancelled, excused
	ByReason map[string]uint64 // rate_limited, timeout, ...
	Recent   []float32         // oldest first, ms
	Kinds    []string          // outcome of each recent attempt, oldest first
}

// NumKinds is the number of outcome kinds Totals counts: every pool.Kind,
// and Excused.
const NumKinds = int(pool.Cancelled) + 2

// Excused is the index, in Totals.ByKind, of the outcomes that were not
// their instance's own (pool.Owner): the query's, the client's or
// searxgate's. They are not the instance's refusals or failures.
const Excused = NumKinds - 1

// KindName names an index of Totals.ByKind: a pool.Kind's name, or
// "excused".
func KindName(i int) string {
	if i == Excused {
		return "excused"
	}
	return pool.Kind(i).String()
}

// kindIndex is o's index in Totals.ByKind.
func kindIndex(o pool.Outcome) int {
	if o.Owner != pool.OwnerInstance && o.Kind != pool.Cancelled {
		return Excused
	}
	return int(o.Kind)
}

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

// Metrics are searxgate's monotone counters, read by /metrics and /status.
type Metrics struct {
	searches      map[string]*atomic.Uint64 // by outcome; the keys are fixed at newMetrics, so no lock
	searchLatency Histogram
	upLatency     Histogram
	upstreamTotal atomic.Uint64
	totals        sync.Map // instance -> *instanceTotals; never dropped, so every count only grows

	queueDepth   atomic.Int64  // searches waiting for a slot now
	queueWait    Histogram     // how long searches that got a slot waited for it
	queueRefused atomic.Uint64 // searches refused because no slot could be had in time, or the queue was full
	limited      atomic.Uint64 // searches refused by Config.Admit
	fanout       atomic.Uint64 // searches answered by merging several instances' answers

	sharedRefused atomic.Uint64 // leases given back because the shared budget said no
	sharedJoined  atomic.Uint64 // searches answered by another replica's search of the same query
}

// FanoutSearches counts searches answered by merging several instances.
func (m *Metrics) FanoutSearches() uint64 { return m.fanout.Load() }

// SharedRefused counts leases given back because the budget shared with
// other replicas had no room (0 without one).
func (m *Metrics) SharedRefused() uint64 { return m.sharedRefused.Load() }

// SharedJoined counts searches answered by another replica's search of
// the same query, found in the shared cache.
func (m *Metrics) SharedJoined() uint64 { return m.sharedJoined.Load() }

// QueueDepth is the number of searches waiting for a free slot now.
func (m *Metrics) QueueDepth() int64 { return m.queueDepth.Load() }

// QueueWait is the histogram of the time searches waited for a slot.
func (m *Metrics) QueueWait() *Histogram { return &m.queueWait }

// QueueRefused counts searches refused because no slot could be had within
// their deadline, or the queue was full.
func (m *Metrics) QueueRefused() uint64 { return m.queueRefused.Load() }

// ClientLimited counts searches refused because their client asked more
// than its share (Config.Admit).
func (m *Metrics) ClientLimited() uint64 { return m.limited.Load() }

func newMetrics() *Metrics {
	m := &Metrics{searches: make(map[string]*atomic.Uint64, len(searchOutcomes))}
	for _, o := range searchOutcomes {
		m.searches[o] = new(atomic.Uint64)
	}
	return m
}

func (m *Metrics) search(outcome string, d time.Duration) {
	if c, ok := m.searches[outcome]; ok {
		c.Add(1)
	}
	m.searchLatency.observe(d)
}

// newInstanceMetrics returns an instance's empty recent outcomes.
func newInstanceMetrics() *InstanceMetrics {
	return &InstanceMetrics{byReason: map[string]uint64{}}
}

// upstream counts one upstream search of inst, in its record's metrics im
// and in its lifetime totals.
func (m *Metrics) upstream(im *InstanceMetrics, inst string, o pool.Outcome, d time.Duration) {
	m.upstreamTotal.Add(1)
	if o.Kind != pool.Cancelled {
		m.upLatency.observe(d)
	}
	tv, ok := m.totals.Load(inst)
	if !ok {
		tv, _ = m.totals.LoadOrStore(inst, new(instanceTotals))
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
		t.byReason[o.Reason]++
		t.mu.Unlock()
	}
	if im == nil {
		return
	}
	im.mu.Lock()
	if k < NumKinds {
		im.byKind[k]++
	}
	if o.Reason != "" {
		im.byReason[o.Reason]++
	}
	im.recent[im.next] = float32(d.Seconds() * 1000)
	im.kinds[im.next] = uint8(k)
	im.next = (im.next + 1) % recentN
	im.n = min(im.n+1, recentN)
	im.mu.Unlock()
}

// Searches returns client searches by outcome.
func (m *Metrics) Searches() map[string]uint64 {
	out := make(map[string]uint64, len(searchOutcomes))
	for _, o := range searchOutcomes {
		if c, ok := m.searches[o]; ok {
			out[o] = c.Load()
		}
	}
	return out
}

// SearchLatency is the histogram of client search latency.
func (m *Metrics) SearchLatency() *Histogram { return &m.searchLatency }

// UpstreamLatency is the histogram of upstream search latency (cancelled
// hedge losers left out).
func (m *Metrics) UpstreamLatency() *Histogram { return &m.upLatency }

// UpstreamTotal is the number of upstream searches sent.
func (m *Metrics) UpstreamTotal() uint64 { return m.upstreamTotal.Load() }

// view copies im.
func (im *InstanceMetrics) view() InstanceView {
	im.mu.Lock()
	defer im.mu.Unlock()
	iv := InstanceView{ByKind: make(map[string]uint64, NumKinds), ByReason: make(map[string]uint64, len(im.byReason))}
	for k, c := range im.byKind {
		if c > 0 {
			iv.ByKind[KindName(k)] = c
		}
	}
	for k, c := range im.byReason {
		iv.ByReason[k] = c
	}
	for k := im.n; k > 0; k-- {
		i := (im.next - k + recentN) % recentN
		iv.Recent = append(iv.Recent, im.recent[i])
		iv.Kinds = append(iv.Kinds, KindName(int(im.kinds[i])))
	}
	return iv
}

// EachTotals calls f with every instance ever asked since the process
// started, in no order, and its totals. Forget does not drop them: an
// instance that leaves the pool and comes back counts on from where it
// was, so no count ever goes down (what /metrics needs for rate()). t is
// reused between calls: f must not keep it or its map.
func (m *Metrics) EachTotals(f func(inst string, t *Totals)) {
	t := Totals{ByReason: map[string]uint64{}}
	m.totals.Range(func(k, v any) bool {
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
