package instance

import (
	"sync"
	"time"

	"github.com/searxgate/searxgate/pool"
)

// recentN is how many recent upstream latencies each instance keeps for the
// status page's sparkline.
const recentN = 32

// NumKinds is the number of outcome kinds counted: every pool.Kind, and
// Excused.
const NumKinds = int(pool.Cancelled) + 2

// Excused is the index, among the kinds counted, of the outcomes that
// were not their instance's own (pool.Owner): the query's, the client's
// or searxgate's. They are not the instance's refusals or failures.
const Excused = NumKinds - 1

// KindName names an index of the kinds counted: a pool.Kind's name, or
// "excused".
func KindName(i int) string {
	if i == Excused {
		return "excused"
	}
	return pool.Kind(i).String()
}

// kindIndex is o's index among the kinds counted.
func kindIndex(o pool.Outcome) int {
	if o.Owner != pool.OwnerInstance && o.Kind != pool.Cancelled {
		return Excused
	}
	return int(o.Kind)
}

// Metrics are the recent upstream outcomes of one instance, as /status
// shows them; they live in its record, and Forget drops them with it.
type Metrics struct {
	mu       sync.Mutex // guards everything below
	byKind   [NumKinds]uint64
	byReason map[string]uint64
	recent   [recentN]float32 // latencies in ms; ring
	kinds    [recentN]uint8   // kind of each recent attempt (kindIndex)
	next, n  int
}

// MetricsView is a copy of one instance's metrics.
type MetricsView struct {
	ByKind   map[string]uint64 // ok, soft, refused, failed, cancelled, excused
	ByReason map[string]uint64 // rate_limited, timeout, ...
	Recent   []float32         // oldest first, ms
	Kinds    []string          // outcome of each recent attempt, oldest first
}

// newMetrics returns an instance's empty recent outcomes.
func newMetrics() *Metrics {
	return &Metrics{byReason: map[string]uint64{}}
}

// count adds one upstream search of kind k (kindIndex), its reason ("" for
// none) and its latency d.
func (im *Metrics) count(k int, reason pool.Reason, d time.Duration) {
	im.mu.Lock()
	if k < NumKinds {
		im.byKind[k]++
	}
	if reason != "" {
		im.byReason[string(reason)]++
	}
	im.recent[im.next] = float32(d.Seconds() * 1000)
	im.kinds[im.next] = uint8(k)
	im.next = (im.next + 1) % recentN
	im.n = min(im.n+1, recentN)
	im.mu.Unlock()
}

// View copies im.
func (im *Metrics) View() MetricsView {
	im.mu.Lock()
	defer im.mu.Unlock()
	iv := MetricsView{ByKind: make(map[string]uint64, NumKinds), ByReason: make(map[string]uint64, len(im.byReason))}
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

// reset clears im.
func (im *Metrics) reset() {
	im.mu.Lock()
	defer im.mu.Unlock()
	im.byKind = [NumKinds]uint64{}
	clear(im.byReason)
	im.next, im.n = 0, 0
}
