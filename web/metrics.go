package web

import (
	"bytes"
	"maps"
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

// webFamilies are the families this face writes itself: the process's
// own state, the pool's instances and what they were asked, the state
// shared with other replicas, the MCP tool calls. proxy.Families are the
// search path's.
var webFamilies = []proxy.Family{
	{Name: "searxgate_build_info", Type: "gauge", Help: "searxgate's version; always 1."},
	{Name: "searxgate_goroutines", Type: "gauge", Help: "Goroutines running now."},
	{Name: "searxgate_heap_bytes", Type: "gauge", Help: "Bytes of allocated heap objects."},
	{Name: "searxgate_open_fds", Type: "gauge", Help: "Open file descriptors (files and connections)."},
	{Name: "searxgate_replicas_shared", Type: "gauge", Help: "1 while this replica shares budgets and answers with the others (Redis answers), 0 while it keeps to its share alone."},
	{Name: "searxgate_replicas_seen", Type: "gauge", Help: "Replicas of this egress group seen in the last three heartbeats (6 s)."},
	{Name: "searxgate_replica_local_takes_total", Type: "counter", Help: "Searches this replica's own share of a budget decided, while Redis did not answer."},
	{Name: "searxgate_upstream_searches_total", Type: "counter", Help: "Upstream searches by instance and verdict (ok, soft, refused, failed, cancelled; excused: the query's, the client's or searxgate's doing, not the instance's)."},
	{Name: "searxgate_upstream_reasons_total", Type: "counter", Help: "Upstream searches that were not OK, by instance and reason."},
	{Name: "searxgate_instances", Type: "gauge", Help: "Instances in the pool."},
	{Name: "searxgate_instances_usable", Type: "gauge", Help: "Instances that could be asked now (enabled, circuit not open, within budget)."},
	{Name: "searxgate_instances_disabled", Type: "gauge", Help: "Instances the operator disabled."},
	{Name: "searxgate_circuits", Type: "gauge", Help: "Instances by circuit state."},
	{Name: "searxgate_circuits_open", Type: "gauge", Help: "Instances whose circuit is open."},
	{Name: "searxgate_instance_health", Type: "gauge", Help: "Health of each instance, 0 (unusable) to 100."},
	{Name: "searxgate_instance_latency_seconds", Type: "gauge", Help: "Latency EWMA of each instance (the prior while not measured)."},
	{Name: "searxgate_instance_failure_ratio", Type: "gauge", Help: "Failure-rate EWMA of each instance, 0 to 1."},
	{Name: "searxgate_instance_fullness_ratio", Type: "gauge", Help: "Fullness EWMA of each instance's answers, 0 (thin: engines suspended, few results) to 1 (full)."},
	{Name: "searxgate_mcp_tool_calls_total", Type: "counter", Help: "MCP tool calls, by tool and outcome (ok, invalid, limited, failed)."},
}

// families are every family /metrics describes, by name; any other (the
// library's process_* ones) is described by processFamily.
var families = func() map[string]proxy.Family {
	m := map[string]proxy.Family{}
	for _, f := range append(proxy.Families(), webFamilies...) {
		m[f.Name] = f
	}
	return m
}()

// processFamily describes a family of the library's process_* metrics,
// which come without HELP and TYPE: one ending in _total is a counter,
// any other a gauge.
func processFamily(name string) proxy.Family {
	typ := "gauge"
	if strings.HasSuffix(name, "_total") {
		typ = "counter"
	}
	return proxy.Family{Name: name, Type: typ, Help: "Process metric read from /proc (github.com/VictoriaMetrics/metrics)."}
}

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

// page is one /metrics answer in Prometheus' text format (version
// 0.0.4). The samples come from the metrics library: its sets'
// WritePrometheus and its Write* helpers write to the page as an
// io.Writer. The page puts each family's HELP and TYPE lines (from
// families) before its first sample, and drops the library's own comment
// lines: its metadata has no HELP texts and its switch is process-wide.
// Each family's samples must come in one run.
type page struct {
	b       []byte // the answer
	partial []byte // the start of a line not ended yet
	cur     string // the family described last
}

// Write takes samples, whole lines or not.
func (pg *page) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			pg.partial = append(pg.partial, p...)
			break
		}
		if len(pg.partial) > 0 {
			pg.partial = append(pg.partial, p[:i+1]...)
			pg.line(pg.partial)
			pg.partial = pg.partial[:0]
		} else {
			pg.line(p[:i+1])
		}
		p = p[i+1:]
	}
	return n, nil
}

// line adds one line ending in a newline: a sample, after its family's
// HELP and TYPE when it starts a family; comments and blank lines are
// dropped.
func (pg *page) line(l []byte) {
	end := bytes.IndexAny(l, "{ ")
	if l[0] == '#' || end <= 0 {
		return
	}
	name := l[:end]
	if string(name) != pg.cur {
		if f, ok := familyOf(name); ok {
			pg.family(f.Name)
		} else {
			pg.describe(processFamily(string(name)))
		}
	}
	pg.b = append(pg.b, l...)
}

// familyOf finds the family a sample's name belongs to: its own, or the
// histogram it is a _bucket, _sum or _count of.
func familyOf(name []byte) (proxy.Family, bool) {
	if f, ok := families[string(name)]; ok {
		return f, true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := bytes.CutSuffix(name, []byte(suffix)); ok {
			if f, ok := families[string(base)]; ok && f.Type == "histogram" {
				return f, true
			}
		}
	}
	return proxy.Family{}, false
}

// family starts the family name (one of families), with no sample yet:
// its HELP and TYPE lines are written even when no sample follows.
func (pg *page) family(name string) {
	if name != pg.cur {
		pg.describe(families[name])
	}
}

func (pg *page) describe(f proxy.Family) {
	pg.b = append(pg.b, "# HELP "...)
	pg.b = append(pg.b, f.Name...)
	pg.b = append(pg.b, ' ')
	pg.b = appendEscaped(pg.b, f.Help, false)
	pg.b = append(pg.b, "\n# TYPE "...)
	pg.b = append(pg.b, f.Name...)
	pg.b = append(pg.b, ' ')
	pg.b = append(pg.b, f.Type...)
	pg.b = append(pg.b, '\n')
	pg.cur = f.Name
}

// appendSeries appends one sample's name: name{labels...}, the labels
// alternating name and value, each value made valid UTF-8 and escaped.
func appendSeries(b []byte, name string, labels []string) []byte {
	b = append(b, name...)
	if len(labels) == 0 {
		return b
	}
	b = append(b, '{')
	for i := 0; i+1 < len(labels); i += 2 {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, labels[i]...)
		b = append(b, `="`...)
		b = appendEscaped(b, strings.ToValidUTF8(labels[i+1], "\uFFFD"), true)
		b = append(b, '"')
	}
	return append(b, '}')
}

// gauge, gaugeUint and count write one sample computed at scrape time, as
// the library's WriteGaugeFloat64, WriteGaugeUint64 and WriteCounterUint64
// write it ("%s %g" and "%s %d"), without their fmt call: a scrape of 100
// instances writes some 300 of them.
func (pg *page) gauge(v float64, name string, labels ...string) {
	pg.own(name)
	pg.b = append(strconv.AppendFloat(append(appendSeries(pg.b, name, labels), ' '), v, 'g', -1, 64), '\n')
}

func (pg *page) gaugeUint(v uint64, name string, labels ...string) {
	pg.own(name)
	pg.b = append(strconv.AppendUint(append(appendSeries(pg.b, name, labels), ' '), v, 10), '\n')
}

// own starts the family of a sample searxgate writes itself (its name is
// the family's: no histogram part), unless it is the current one.
func (pg *page) own(name string) {
	if name == pg.cur {
		return
	}
	if f, ok := families[name]; ok {
		pg.describe(f)
	} else {
		pg.describe(processFamily(name))
	}
}

func (pg *page) count(v uint64, name string, labels ...string) { pg.gaugeUint(v, name, labels...) }

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

// newRuntimeGauges registers the process's own gauges in a set of the
// Server's, read at each scrape: goroutines, heap (runtime/metrics, which
// does not stop the world) and, where /proc has them, open descriptors.
func newRuntimeGauges() *metrics.Set {
	set := metrics.NewSet()
	set.NewGauge("searxgate_goroutines", func() float64 { return float64(runtime.NumGoroutine()) })
	set.NewGauge("searxgate_heap_bytes", func() float64 {
		heap := []rtmetrics.Sample{{Name: heapMetric}}
		rtmetrics.Read(heap)
		if heap[0].Value.Kind() != rtmetrics.KindUint64 {
			return math.NaN()
		}
		return float64(heap[0].Value.Uint64())
	})
	if _, err := os.ReadDir("/proc/self/fd"); err == nil {
		set.NewGauge("searxgate_open_fds", func() float64 {
			fds, err := os.ReadDir("/proc/self/fd")
			if err != nil {
				return math.NaN() // out of descriptors, for one
			}
			return float64(len(fds))
		})
	}
	return set
}

// metrics serves /metrics: the search path's counters and histograms and
// the process's gauges from their sets, what is read at scrape time (the
// pool's instances, through the search path's view, which says which are
// usable) through the library's helpers, then the library's process_*
// metrics (read from /proc, without stopping the world; its go_* ones are
// left out on purpose: they call runtime.ReadMemStats, which does).
func (s *Server) metrics(ctx *fasthttp.RequestCtx) {
	now := s.cfg.Clock.Now()
	var ins []proxy.Instance
	if p := s.cfg.Proxy; p != nil {
		ins = p.Instances().Instances(now)
	}
	pg := &page{b: make([]byte, 0, 8<<10+len(ins)*320)} // about what 100 instances take
	pg.family("searxgate_build_info")
	pg.gauge(1, "searxgate_build_info", "version", s.cfg.Version)
	s.gauges.WritePrometheus(pg)

	urls := make([]string, len(ins))
	for i := range ins {
		urls[i] = ins[i].URL
	}
	l := &s.labels
	l.mu.Lock()
	defer l.mu.Unlock()
	l.assign(urls)

	if p := s.cfg.Proxy; p != nil {
		st, shared := p.Replicas().State()
		p.Metrics().WritePrometheus(pg, shared)
		if shared {
			writeReplicas(pg, st)
		}
		writeUpstreamTotals(pg, p.Instances().EachTotals, l)
	}
	writeInstances(pg, ins, l)
	s.writeToolCalls(pg)
	metrics.WriteProcMetrics(pg)
	ctx.SetContentType("text/plain; version=0.0.4; charset=utf-8")
	ctx.Response.Header.Set("Cache-Control", "no-store")
	ctx.SetBody(pg.b)
}

// writeReplicas writes the state shared with the other replicas.
func writeReplicas(pg *page, st proxy.SharedState) {
	shared := 0.0
	if st.Shared {
		shared = 1
	}
	pg.gauge(shared, "searxgate_replicas_shared")
	pg.gauge(float64(st.Replicas), "searxgate_replicas_seen")
	pg.count(st.LocalTakes, "searxgate_replica_local_takes_total")
}

// writeUpstreamTotals writes the lifetime totals of the upstream searches,
// by instance label: an instance asked but no longer in the pool is
// labelled here too. l.mu is held.
func writeUpstreamTotals(pg *page, each func(func(inst string, t *proxy.Totals)), l *instanceLabels) {
	if !l.full() {
		var asked []string
		each(func(inst string, _ *proxy.Totals) {
			if !l.named[inst] {
				asked = append(asked, inst)
			}
		})
		l.assign(asked)
	}
	type key struct{ inst, a string }
	byKind := map[key]uint64{}
	byReason := map[key]uint64{}
	each(func(inst string, t *proxy.Totals) {
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
		return slices.SortedFunc(maps.Keys(m), func(a, b key) int {
			if c := strings.Compare(a.inst, b.inst); c != 0 {
				return c
			}
			return strings.Compare(a.a, b.a)
		})
	}
	pg.family("searxgate_upstream_searches_total")
	for _, k := range sortKeys(byKind) {
		pg.count(byKind[k], "searxgate_upstream_searches_total", "instance", k.inst, "verdict", k.a)
	}
	pg.family("searxgate_upstream_reasons_total")
	for _, k := range sortKeys(byReason) {
		pg.count(byReason[k], "searxgate_upstream_reasons_total", "instance", k.inst, "reason", k.a)
	}
}

// writeInstances writes the pool's instances as the search path sees
// them: how many can be asked now, their circuits, and the health, latency
// and failure rate of each named one. l.mu is held.
func writeInstances(pg *page, ins []proxy.Instance, l *instanceLabels) {
	circuits := map[string]uint64{"closed": 0, "open": 0, "half_open": 0}
	var disabled, usable uint64
	for i := range ins {
		circuits[ins[i].Circuit.String()]++
		if ins[i].Disabled {
			disabled++
		}
		if ins[i].UsableNow() {
			usable++
		}
	}
	pg.gaugeUint(uint64(len(ins)), "searxgate_instances")
	pg.gaugeUint(usable, "searxgate_instances_usable")
	pg.gaugeUint(disabled, "searxgate_instances_disabled")
	for _, c := range sortedKeys(circuits) {
		pg.gaugeUint(circuits[c], "searxgate_circuits", "state", c)
	}
	pg.gaugeUint(circuits["open"], "searxgate_circuits_open")

	named := make([]*proxy.Instance, 0, len(ins))
	for i := range ins {
		if l.named[ins[i].URL] {
			named = append(named, &ins[i])
		}
	}
	slices.SortFunc(named, func(a, b *proxy.Instance) int { return strings.Compare(a.URL, b.URL) })
	pg.family("searxgate_instance_health")
	for _, in := range named {
		pg.gaugeUint(uint64(max(in.Health, 0)), "searxgate_instance_health", "instance", in.URL)
	}
	pg.family("searxgate_instance_latency_seconds")
	for _, in := range named {
		pg.gauge(in.LatencyMS/1000, "searxgate_instance_latency_seconds", "instance", in.URL)
	}
	pg.family("searxgate_instance_failure_ratio")
	for _, in := range named {
		pg.gauge(in.FailureRate, "searxgate_instance_failure_ratio", "instance", in.URL)
	}
	pg.family("searxgate_instance_fullness_ratio")
	for _, in := range named {
		pg.gauge(in.Quality.Fullness, "searxgate_instance_fullness_ratio", "instance", in.URL)
	}
}
