package web

import (
	"bytes"
	"math"
	"os"
	"runtime"
	rtmetrics "runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy"
)

// MaxInstanceLabels bounds the instances /metrics names: the first ones it
// sees (those of one scrape in URL order) keep their own label for the
// life of the process; every later one is summed under instance="other".
const MaxInstanceLabels = 200

// knownReasons are the reasons /metrics names; any other is "other".
var knownReasons = func() map[string]bool {
	m := map[string]bool{}
	for _, r := range detect.Reasons() {
		m[string(r)] = true
	}
	return m
}()

// heapMetric is runtime/metrics' name for the bytes of heap objects
// (runtime.MemStats.HeapAlloc), read without stopping the world.
const heapMetric = "/memory/classes/heap/objects:bytes"

// instanceLabels decides which instances /metrics names. A label, once
// given, is never taken back or changed, so every per-instance series,
// "other" included, only ever grows: an instance that is named stays
// named after it leaves the pool; one summed under "other" stays there
// (named instances are only ever added while there is room, so nothing
// is summed under "other" before the room is gone).
type instanceLabels struct {
	mu    sync.Mutex      // guards named, and a scrape's use of it
	max   int             // 0: MaxInstanceLabels
	named map[string]bool // instances with their own label; at most max
}

func (l *instanceLabels) limit() int {
	if l.max == 0 {
		return MaxInstanceLabels
	}
	return l.max
}

// full: every later instance is summed under "other". l.mu must be held.
func (l *instanceLabels) full() bool { return len(l.named) >= l.limit() }

// assign gives the unseen instances among urls their own label while there
// is room, in URL order. l.mu must be held.
func (l *instanceLabels) assign(urls []string) {
	if l.full() {
		return
	}
	if l.named == nil {
		l.named = map[string]bool{}
	}
	var fresh []string
	for _, u := range urls {
		if !l.named[u] {
			fresh = append(fresh, u)
		}
	}
	slices.Sort(fresh)
	for _, u := range slices.Compact(fresh) {
		if l.full() {
			return
		}
		l.named[u] = true
	}
}

// label is inst's label, its own while there is room. l.mu must be held.
func (l *instanceLabels) label(inst string) string {
	if !l.named[inst] {
		l.assign([]string{inst})
	}
	if l.named[inst] {
		return inst
	}
	return "other"
}

// expo writes Prometheus' text format (version 0.0.4) for searxgate's own
// families, with their HELP texts (VictoriaMetrics' metadata has none, and
// its switch is process-wide) and without fmt, one append per sample.
type expo struct{ b []byte }

func (e *expo) family(name, typ, help string) {
	e.b = append(e.b, "# HELP "...)
	e.b = append(e.b, name...)
	e.b = append(e.b, ' ')
	e.b = appendEscaped(e.b, help, false)
	e.b = append(e.b, "\n# TYPE "...)
	e.b = append(e.b, name...)
	e.b = append(e.b, ' ')
	e.b = append(e.b, typ...)
	e.b = append(e.b, '\n')
}

// series starts a sample: name{labels...} and the space before the value;
// labels alternate name, value.
func (e *expo) series(name string, labels ...string) {
	e.b = append(e.b, name...)
	if len(labels) > 0 {
		e.b = append(e.b, '{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.b = append(e.b, labels[i]...)
			e.b = append(e.b, `="`...)
			e.b = appendEscaped(e.b, strings.ToValidUTF8(labels[i+1], "\uFFFD"), true)
			e.b = append(e.b, '"')
		}
		e.b = append(e.b, '}')
	}
	e.b = append(e.b, ' ')
}

func (e *expo) gauge(v float64, name string, labels ...string) {
	e.series(name, labels...)
	e.b = appendFloat(e.b, v)
	e.b = append(e.b, '\n')
}

func (e *expo) count(v uint64, name string, labels ...string) {
	e.series(name, labels...)
	e.b = strconv.AppendUint(e.b, v, 10)
	e.b = append(e.b, '\n')
}

// one writes a family of one unlabelled gauge.
func (e *expo) one(name, help string, v float64) {
	e.family(name, "gauge", help)
	e.gauge(v, name)
}

// histogram writes h with Prometheus' le buckets, proxy.LatencyBuckets()
// (5 ms to 8 s, then +Inf), so dashboards made for them keep working.
func (e *expo) histogram(name, help string, h *proxy.Histogram) {
	e.family(name, "histogram", help)
	cum, sum := h.Snapshot()
	for i, c := range cum {
		e.count(c, name+"_bucket", "le", leNames[i])
	}
	e.gauge(sum, name+"_sum")
	e.count(cum[len(cum)-1], name+"_count")
}

// leNames are the le labels of proxy.LatencyBuckets() and +Inf.
var leNames = func() []string {
	out := make([]string, 0, len(proxy.LatencyBuckets())+1)
	for _, b := range proxy.LatencyBuckets() {
		out = append(out, strconv.FormatFloat(b, 'g', -1, 64))
	}
	return append(out, "+Inf")
}()

// appendFloat writes v as Prometheus reads it (+Inf, -Inf, NaN spelled so).
func appendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, "NaN"...)
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// appendEscaped escapes a HELP text (\ and newline) or a label value
// (also ").
func appendEscaped(b []byte, s string, quote bool) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b = append(b, `\\`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '"' && quote:
			b = append(b, `\"`...)
		default:
			b = append(b, c)
		}
	}
	return b
}

// processMetrics appends VictoriaMetrics' process_* metrics (CPU,
// memory, I/O, pressure, start time; read from /proc, without stopping the
// world) with the HELP and TYPE lines it leaves out: a family ending in
// _total is a counter, any other a gauge. Its go_* metrics are left out on
// purpose: they call runtime.ReadMemStats, which stops the world.
func processMetrics(b []byte) []byte {
	var raw bytes.Buffer
	metrics.WriteProcMetrics(&raw)
	prev := ""
	for line := range strings.Lines(raw.String()) {
		if line == "\n" || strings.HasPrefix(line, "#") {
			continue
		}
		name, _, _ := strings.Cut(line, " ")
		name, _, _ = strings.Cut(name, "{")
		if name != prev {
			typ := "gauge"
			if strings.HasSuffix(name, "_total") {
				typ = "counter"
			}
			b = append(b, "# HELP "...)
			b = append(b, name...)
			b = append(b, " Process metric read from /proc (github.com/VictoriaMetrics/metrics).\n# TYPE "...)
			b = append(b, name...)
			b = append(b, ' ')
			b = append(b, typ...)
			b = append(b, '\n')
			prev = name
		}
		b = append(b, line...)
	}
	return b
}

// metrics serves /metrics.
func (s *Server) metrics(ctx *fasthttp.RequestCtx) {
	now := s.cfg.Clock.Now()
	// One read of the pool: through the search path's view when there is
	// one (it says which instances are usable), else the pool's own.
	var stats []pool.Stats
	usable := 0
	if p := s.cfg.Proxy; p != nil {
		ins := p.Instances(now)
		stats = make([]pool.Stats, len(ins))
		for i := range ins {
			stats[i] = ins[i].Stats
			if ins[i].UsableNow {
				usable++
			}
		}
	} else if s.cfg.Pool != nil {
		stats = s.cfg.Pool.Snapshot()
		for _, st := range stats {
			if !st.Disabled && st.Circuit != pool.Open {
				usable++
			}
		}
	}
	e := &expo{b: make([]byte, 0, 8<<10+len(stats)*320)} // about what 100 instances take
	writeRuntime(e, s.cfg.Version)

	urls := make([]string, len(stats))
	for i := range stats {
		urls[i] = stats[i].URL
	}
	l := &s.labels
	l.mu.Lock()
	defer l.mu.Unlock()
	l.assign(urls)

	if p := s.cfg.Proxy; p != nil {
		writeSearches(e, p)
		writeUpstreamTotals(e, p.Metrics(), l)
	}
	s.writeInstances(e, stats, usable, l)
	s.writeToolCalls(e)
	e.b = processMetrics(e.b)
	ctx.SetContentType("text/plain; version=0.0.4; charset=utf-8")
	ctx.Response.Header.Set("Cache-Control", "no-store")
	ctx.SetBody(e.b)
}

// writeRuntime writes the build and the process's own state.
func writeRuntime(e *expo, version string) {
	e.family("searxgate_build_info", "gauge", "searxgate's version; always 1.")
	e.gauge(1, "searxgate_build_info", "version", version)
	e.one("searxgate_goroutines", "Goroutines running now.", float64(runtime.NumGoroutine()))
	heap := []rtmetrics.Sample{{Name: heapMetric}}
	rtmetrics.Read(heap)
	if heap[0].Value.Kind() == rtmetrics.KindUint64 {
		e.one("searxgate_heap_bytes", "Bytes of allocated heap objects.", float64(heap[0].Value.Uint64()))
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		e.one("searxgate_open_fds", "Open file descriptors (files and connections).", float64(len(fds)))
	}
}

// writeSearches writes what the proxy counted of client searches, its
// queue, and the state shared with the other replicas.
func writeSearches(e *expo, p *proxy.Proxy) {
	m := p.Metrics()
	searches := m.Searches()
	e.family("searxgate_searches_total", "counter", "Client searches, by how they were answered.")
	for _, o := range proxy.SearchOutcomes() {
		e.count(searches[o], "searxgate_searches_total", "outcome", o)
	}
	e.family("searxgate_cache_hits_total", "counter", "Client searches answered from the result cache (fresh or stale).")
	e.count(searches["cached"]+searches["stale"], "searxgate_cache_hits_total")
	e.histogram("searxgate_search_duration_seconds", "Client search latency.", m.SearchLatency())
	e.family("searxgate_upstream_requests_total", "counter", "Searches sent to instances.")
	e.count(m.UpstreamTotal(), "searxgate_upstream_requests_total")
	e.histogram("searxgate_upstream_duration_seconds", "Upstream search latency (cancelled hedges left out).", m.UpstreamLatency())
	e.one("searxgate_queue_depth", "Searches waiting for a free instance slot now.", float64(m.QueueDepth()))
	e.histogram("searxgate_queue_wait_seconds", "How long searches that got a slot waited for it.", m.QueueWait())
	e.family("searxgate_queue_refused_total", "counter", "Searches refused because no slot could be had within their deadline, or the queue was full.")
	e.count(m.QueueRefused(), "searxgate_queue_refused_total")
	e.family("searxgate_client_limited_total", "counter", "Searches refused because their client asked more than its share.")
	e.count(m.ClientLimited(), "searxgate_client_limited_total")
	e.family("searxgate_fanout_searches_total", "counter", "Searches answered by merging several instances' answers (fanout).")
	e.count(m.FanoutSearches(), "searxgate_fanout_searches_total")
	if st, ok := p.SharedState(); ok {
		shared := 0.0
		if st.Shared {
			shared = 1
		}
		e.one("searxgate_replicas_shared", "1 while this replica shares budgets and answers with the others (Redis answers), 0 while it keeps to its share alone.", shared)
		e.one("searxgate_replicas_seen", "Replicas of this egress group seen in the last three heartbeats (6 s).", float64(st.Replicas))
		e.family("searxgate_replica_local_takes_total", "counter", "Searches this replica's own share of a budget decided, while Redis did not answer.")
		e.count(st.LocalTakes, "searxgate_replica_local_takes_total")
		e.family("searxgate_shared_refused_total", "counter", "Leases given back because the budget shared with the other replicas was spent.")
		e.count(m.SharedRefused(), "searxgate_shared_refused_total")
		e.family("searxgate_shared_joined_total", "counter", "Searches answered by another replica's search of the same query.")
		e.count(m.SharedJoined(), "searxgate_shared_joined_total")
	}
}

// writeUpstreamTotals writes the lifetime totals of the upstream searches,
// by instance label: an instance asked but no longer in the pool is
// labelled here too. l.mu is held.
func writeUpstreamTotals(e *expo, m *proxy.Metrics, l *instanceLabels) {
	if !l.full() {
		var asked []string
		m.EachTotals(func(inst string, _ *proxy.Totals) {
			if !l.named[inst] {
				asked = append(asked, inst)
			}
		})
		l.assign(asked)
	}
	type key struct{ inst, a string }
	byKind := map[key]uint64{}
	byReason := map[key]uint64{}
	m.EachTotals(func(inst string, t *proxy.Totals) {
		lab := l.label(inst)
		for k, n := range t.ByKind {
			if n > 0 {
				byKind[key{lab, proxy.KindName(k)}] += n
			}
		}
		for r, n := range t.ByReason {
			if !knownReasons[r] {
				r = "other"
			}
			byReason[key{lab, r}] += n
		}
	})
	sortKeys := func(m map[key]uint64) []key {
		ks := make([]key, 0, len(m))
		for k := range m {
			ks = append(ks, k)
		}
		slices.SortFunc(ks, func(a, b key) int {
			if c := strings.Compare(a.inst, b.inst); c != 0 {
				return c
			}
			return strings.Compare(a.a, b.a)
		})
		return ks
	}
	e.family("searxgate_upstream_searches_total", "counter", "Upstream searches by instance and verdict (ok, soft, refused, failed, cancelled; excused: the query's, the client's or searxgate's doing, not the instance's).")
	for _, k := range sortKeys(byKind) {
		e.count(byKind[k], "searxgate_upstream_searches_total", "instance", k.inst, "verdict", k.a)
	}
	e.family("searxgate_upstream_reasons_total", "counter", "Upstream searches that were not OK, by instance and reason.")
	for _, k := range sortKeys(byReason) {
		e.count(byReason[k], "searxgate_upstream_reasons_total", "instance", k.inst, "reason", k.a)
	}
}

// writeInstances writes the pool's instances: how many can be asked now,
// their circuits, and the health, latency and failure rate of each named
// one; usable is how many the search path could ask now. l.mu is held.
func (s *Server) writeInstances(e *expo, stats []pool.Stats, usable int, l *instanceLabels) {
	circuits := map[string]int{"closed": 0, "open": 0, "half_open": 0}
	disabled := 0
	for _, st := range stats {
		circuits[st.Circuit.String()]++
		if st.Disabled {
			disabled++
		}
	}
	e.one("searxgate_instances", "Instances in the pool.", float64(len(stats)))
	e.one("searxgate_instances_usable", "Instances that could be asked now (enabled, circuit not open, within budget).", float64(usable))
	e.one("searxgate_instances_disabled", "Instances the operator disabled.", float64(disabled))
	e.family("searxgate_circuits", "gauge", "Instances by circuit state.")
	for _, c := range sortedKeys(circuits) {
		e.gauge(float64(circuits[c]), "searxgate_circuits", "state", c)
	}
	e.one("searxgate_circuits_open", "Instances whose circuit is open.", float64(circuits["open"]))

	named := make([]*pool.Stats, 0, len(stats))
	for i := range stats {
		if l.named[stats[i].URL] {
			named = append(named, &stats[i])
		}
	}
	slices.SortFunc(named, func(a, b *pool.Stats) int { return strings.Compare(a.URL, b.URL) })
	e.family("searxgate_instance_health", "gauge", "Health of each instance, 0 (unusable) to 100.")
	for _, st := range named {
		e.gauge(float64(st.Health), "searxgate_instance_health", "instance", st.URL)
	}
	e.family("searxgate_instance_latency_seconds", "gauge", "Latency EWMA of each instance (the prior while not measured).")
	for _, st := range named {
		e.gauge(st.LatencyMS/1000, "searxgate_instance_latency_seconds", "instance", st.URL)
	}
	e.family("searxgate_instance_failure_ratio", "gauge", "Failure-rate EWMA of each instance, 0 to 1.")
	for _, st := range named {
		e.gauge(st.FailureRate, "searxgate_instance_failure_ratio", "instance", st.URL)
	}
}
