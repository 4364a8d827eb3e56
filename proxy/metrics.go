package proxy

import (
	"io"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/searxgate/searxgate/pool"
)

// latencyBuckets are the upper bounds, in seconds, of the latency
// histograms (Prometheus style: each counts observations ≤ its bound; the
// library adds +Inf).
var latencyBuckets = [...]float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8}

// Histogram is a latency histogram with Prometheus' le buckets
// (latencyBuckets), kept by the metrics library in its Metrics' set, safe
// for concurrent use. It also counts its observations and their sum, for
// the status page's means: the library shows them only in /metrics.
type Histogram struct {
	h     *metrics.PrometheusHistogram
	n     atomic.Uint64
	sumNS atomic.Int64
}

// init registers h in set as the histogram name.
func (h *Histogram) init(set *metrics.Set, name string) {
	h.h = set.NewPrometheusHistogramExt(name, append([]float64(nil), latencyBuckets[:]...))
}

func (h *Histogram) observe(d time.Duration) {
	d = max(d, 0) // the library drops negative values; count them as 0
	h.h.Update(d.Seconds())
	h.n.Add(1)
	h.sumNS.Add(int64(d))
}

// Count is the number of observations.
func (h *Histogram) Count() uint64 { return h.n.Load() }

// Sum is the sum of the observations, in seconds.
func (h *Histogram) Sum() float64 { return float64(h.sumNS.Load()) / 1e9 }

// searchOutcomes are the ways a client search ends, as metrics count them.
var searchOutcomes = [...]string{"upstream", "cached", "coalesced", "stale", "failed", "limited", "cancelled"}

// SearchOutcomes returns the ways a client search ends (a copy).
func SearchOutcomes() []string { return append([]string(nil), searchOutcomes[:]...) }

// Metrics are searxgate's monotone counters, read by /metrics and /status.
// The counters, gauges and histograms live in a metrics library set of
// their own (one per Proxy, never the library's global one, so that
// several proxies in one process, as in tests, do not share them);
// Families describes what they write.
type Metrics struct {
	set    *metrics.Set // every family but the shared ones
	shared *metrics.Set // shared_refused and shared_joined: written only while replicas share

	searches      map[string]*metrics.Counter // by outcome; the keys are fixed at newMetrics, so no lock
	cacheHits     *metrics.Counter            // cached and stale searches
	searchLatency Histogram
	upLatency     Histogram
	upstreamTotal *metrics.Counter

	queueDepth   atomic.Int64     // searches waiting for a slot now; read by the queue_depth gauge
	queueWait    Histogram        // how long searches that got a slot waited for it
	queueRefused *metrics.Counter // searches refused because no slot could be had in time, or the queue was full
	shareRefused *metrics.Counter // searches refused because their client's share of the public budget was spent
	limited      *metrics.Counter // searches refused by Config.Admit
	fanout       *metrics.Counter // searches answered by merging several instances' answers
	// qualityHedges counts thin answers raced by an instance expected
	// full (quality.go).
	qualityHedges *metrics.Counter
	dropped       *metrics.Counter // results of upstream answers dropped by detect's bounds (MaxResults, MaxAnswerBytes)

	sharedRefused *metrics.Counter // leases given back because the shared budget said no
	sharedJoined  *metrics.Counter // searches answered by another replica's search of the same query
}

// Family is one metric family of /metrics: its name, its Prometheus type
// (counter, gauge or histogram) and its HELP text.
type Family struct{ Name, Type, Help string }

// families are what Metrics.WritePrometheus writes; the last two only
// while state is shared with other replicas.
var families = [...]Family{
	{"searxgate_searches_total", "counter", "Client searches, by how they were answered."},
	{"searxgate_cache_hits_total", "counter", "Client searches answered from the result cache (fresh or stale)."},
	{"searxgate_search_duration_seconds", "histogram", "Client search latency."},
	{"searxgate_upstream_requests_total", "counter", "Searches sent to instances."},
	{"searxgate_upstream_duration_seconds", "histogram", "Upstream search latency (cancelled hedges left out)."},
	{"searxgate_queue_depth", "gauge", "Searches waiting for a free instance slot now."},
	{"searxgate_queue_wait_seconds", "histogram", "How long searches that got a slot waited for it."},
	{"searxgate_queue_refused_total", "counter", "Searches refused because no slot could be had within their deadline, or the queue was full."},
	{"searxgate_share_refused_total", "counter", "Searches refused because their client had used its share of the public instances' budget."},
	{"searxgate_client_limited_total", "counter", "Searches refused because their client asked more than its share."},
	{"searxgate_fanout_searches_total", "counter", "Searches answered by merging several instances' answers (fanout)."},
	{"searxgate_quality_hedges_total", "counter", "Thin answers (engines suspended, few results) raced by one more instance expected full."},
	{"searxgate_results_dropped_total", "counter", "Results of upstream answers dropped by the bounds on one answer (results and bytes per answer)."},
	{"searxgate_shared_refused_total", "counter", "Leases given back because the budget shared with the other replicas was spent."},
	{"searxgate_shared_joined_total", "counter", "Searches answered by another replica's search of the same query."},
}

// Families describes every family Metrics.WritePrometheus may write (a
// copy).
func Families() []Family { return append([]Family(nil), families[:]...) }

// WritePrometheus writes the counters, gauges and histograms in
// Prometheus' text format, the shared replicas' families only when
// shared. It writes no HELP lines (Families has them) and no TYPE lines
// unless the library's process-wide metrics.ExposeMetadata is on, which
// searxgate leaves off.
func (m *Metrics) WritePrometheus(w io.Writer, shared bool) {
	m.set.WritePrometheus(w)
	if shared {
		m.shared.WritePrometheus(w)
	}
}

// FanoutSearches counts searches answered by merging several instances.
func (m *Metrics) FanoutSearches() uint64 { return m.fanout.Get() }

// QualityHedges counts thin answers raced by one more instance expected
// full.
func (m *Metrics) QualityHedges() uint64 { return m.qualityHedges.Get() }

// ResultsDropped counts the results of upstream answers dropped by the
// bounds on one answer (results.MaxResults, results.MaxAnswerBytes, ...).
func (m *Metrics) ResultsDropped() uint64 { return m.dropped.Get() }

// SharedRefused counts leases given back because the budget shared with
// other replicas had no room (0 without one).
func (m *Metrics) SharedRefused() uint64 { return m.sharedRefused.Get() }

// SharedJoined counts searches answered by another replica's search of
// the same query, found in the shared cache.
func (m *Metrics) SharedJoined() uint64 { return m.sharedJoined.Get() }

// QueueDepth is the number of searches waiting for a free slot now.
func (m *Metrics) QueueDepth() int64 { return m.queueDepth.Load() }

// QueueWait is the histogram of the time searches waited for a slot.
func (m *Metrics) QueueWait() *Histogram { return &m.queueWait }

// QueueRefused counts searches refused because no slot could be had within
// their deadline, or the queue was full.
func (m *Metrics) QueueRefused() uint64 { return m.queueRefused.Get() }

// ShareRefused counts searches refused because their client had used its
// share of the public instances' budget (and no own instance could
// serve it in time).
func (m *Metrics) ShareRefused() uint64 { return m.shareRefused.Get() }

// ClientLimited counts searches refused because their client asked more
// than its share (Config.Admit).
func (m *Metrics) ClientLimited() uint64 { return m.limited.Get() }

func newMetrics() *Metrics {
	set, shared := metrics.NewSet(), metrics.NewSet()
	m := &Metrics{set: set, shared: shared, searches: make(map[string]*metrics.Counter, len(searchOutcomes))}
	for _, o := range searchOutcomes {
		m.searches[o] = set.NewCounter(`searxgate_searches_total{outcome="` + o + `"}`)
	}
	m.cacheHits = set.NewCounter("searxgate_cache_hits_total")
	m.searchLatency.init(set, "searxgate_search_duration_seconds")
	m.upstreamTotal = set.NewCounter("searxgate_upstream_requests_total")
	m.upLatency.init(set, "searxgate_upstream_duration_seconds")
	set.NewGauge("searxgate_queue_depth", func() float64 { return float64(m.queueDepth.Load()) })
	m.queueWait.init(set, "searxgate_queue_wait_seconds")
	m.queueRefused = set.NewCounter("searxgate_queue_refused_total")
	m.shareRefused = set.NewCounter("searxgate_share_refused_total")
	m.limited = set.NewCounter("searxgate_client_limited_total")
	m.fanout = set.NewCounter("searxgate_fanout_searches_total")
	m.qualityHedges = set.NewCounter("searxgate_quality_hedges_total")
	m.dropped = set.NewCounter("searxgate_results_dropped_total")
	m.sharedRefused = shared.NewCounter("searxgate_shared_refused_total")
	m.sharedJoined = shared.NewCounter("searxgate_shared_joined_total")
	return m
}

// search counts one client search that ended with outcome after d. It
// allocates nothing: it is on every search's path.
func (m *Metrics) search(outcome string, d time.Duration) {
	if c, ok := m.searches[outcome]; ok {
		c.Inc()
	}
	if outcome == "cached" || outcome == "stale" {
		m.cacheHits.Inc()
	}
	m.searchLatency.observe(d)
}

// upstream counts one upstream search with outcome o, d long (each
// instance's own counts are its record's: instance.Registry.Count).
func (m *Metrics) upstream(o pool.Outcome, d time.Duration) {
	m.upstreamTotal.Inc()
	if o.Kind != pool.Cancelled {
		m.upLatency.observe(d)
	}
}

// Searches returns client searches by outcome.
func (m *Metrics) Searches() map[string]uint64 {
	out := make(map[string]uint64, len(searchOutcomes))
	for _, o := range searchOutcomes {
		if c, ok := m.searches[o]; ok {
			out[o] = c.Get()
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
func (m *Metrics) UpstreamTotal() uint64 { return m.upstreamTotal.Get() }
