package web

import (
	"bytes"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"searxgate/detect"
	"searxgate/pool"
	"searxgate/proxy"
)

// MaxInstanceLabels bounds the instances /metrics names: the first ones in
// URL order are named, the rest are summed under instance="other".
const MaxInstanceLabels = 200

// knownReasons are the reasons /metrics names; any other is "other".
var knownReasons = map[string]bool{}

func init() {
	for _, r := range detect.Reasons() {
		knownReasons[string(r)] = true
	}
}

// promWriter writes Prometheus' text format (version 0.0.4).
type promWriter struct{ b bytes.Buffer }

func (w *promWriter) family(name, typ, help string) {
	w.b.WriteString("# HELP " + name + " " + escapeHelp(help) + "\n")
	w.b.WriteString("# TYPE " + name + " " + typ + "\n")
}

// sample writes one sample; labels alternate name, value.
func (w *promWriter) sample(name string, v float64, labels ...string) {
	w.b.WriteString(name)
	if len(labels) > 0 {
		w.b.WriteByte('{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				w.b.WriteByte(',')
			}
			w.b.WriteString(labels[i] + `="` + escapeLabel(labels[i+1]) + `"`)
		}
		w.b.WriteByte('}')
	}
	w.b.WriteByte(' ')
	w.b.WriteString(formatFloat(v))
	w.b.WriteByte('\n')
}

func (w *promWriter) histogram(name, help string, h *proxy.Histogram) {
	w.family(name, "histogram", help)
	cum, sum := h.Snapshot()
	for i, c := range cum {
		le := "+Inf"
		if i < len(proxy.LatencyBuckets) {
			le = formatFloat(proxy.LatencyBuckets[i])
		}
		w.sample(name+"_bucket", float64(c), "le", le)
	}
	w.sample(name+"_sum", sum)
	w.sample(name+"_count", float64(cum[len(cum)-1]))
}

func formatFloat(v float64) string {
	switch {
	case v != v:
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

var helpEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
var labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)

func escapeHelp(s string) string  { return helpEscaper.Replace(s) }
func escapeLabel(s string) string { return labelEscaper.Replace(strings.ToValidUTF8(s, "\uFFFD")) }

// instanceLabels maps each instance to its label: its URL for the first
// MaxInstanceLabels in URL order, "other" for the rest.
func instanceLabels(urls []string) map[string]string {
	sorted := slices.Clone(urls)
	slices.Sort(sorted)
	out := make(map[string]string, len(sorted))
	for i, u := range sorted {
		if i < MaxInstanceLabels {
			out[u] = u
		} else {
			out[u] = "other"
		}
	}
	return out
}

// metrics serves /metrics.
func (s *Server) metrics(ctx *fasthttp.RequestCtx) {
	now := s.cfg.Now()
	var w promWriter
	w.family("searxgate_build_info", "gauge", "searxgate's version; always 1.")
	w.sample("searxgate_build_info", 1, "version", s.cfg.Version)
	w.family("searxgate_goroutines", "gauge", "Goroutines running now.")
	w.sample("searxgate_goroutines", float64(runtime.NumGoroutine()))
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w.family("searxgate_heap_bytes", "gauge", "Bytes of allocated heap objects.")
	w.sample("searxgate_heap_bytes", float64(ms.HeapAlloc))
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		w.family("searxgate_open_fds", "gauge", "Open file descriptors (files and connections).")
		w.sample("searxgate_open_fds", float64(len(fds)))
	}

	var stats []pool.Stats
	if s.cfg.Pool != nil {
		stats = s.cfg.Pool.Snapshot()
	}
	urls := make([]string, len(stats))
	for i := range stats {
		urls[i] = stats[i].URL
	}
	labels := instanceLabels(urls)

	if p := s.cfg.Proxy; p != nil {
		m := p.Metrics()
		searches := m.Searches()
		w.family("searxgate_searches_total", "counter", "Client searches, by how they were answered.")
		for _, o := range proxy.SearchOutcomes {
			w.sample("searxgate_searches_total", float64(searches[o]), "outcome", o)
		}
		w.family("searxgate_cache_hits_total", "counter", "Client searches answered from the result cache (fresh or stale).")
		w.sample("searxgate_cache_hits_total", float64(searches["cached"]+searches["stale"]))
		w.histogram("searxgate_search_duration_seconds", "Client search latency.", m.SearchLatency())
		w.family("searxgate_upstream_requests_total", "counter", "Searches sent to instances.")
		w.sample("searxgate_upstream_requests_total", float64(m.UpstreamTotal()))
		w.histogram("searxgate_upstream_duration_seconds", "Upstream search latency (cancelled hedges left out).", m.UpstreamLatency())
		w.family("searxgate_queue_depth", "gauge", "Searches waiting for a free instance slot now.")
		w.sample("searxgate_queue_depth", float64(m.QueueDepth()))
		w.histogram("searxgate_queue_wait_seconds", "How long searches that got a slot waited for it.", m.QueueWait())
		w.family("searxgate_queue_refused_total", "counter", "Searches refused because no slot could be had within their deadline, or the queue was full.")
		w.sample("searxgate_queue_refused_total", float64(m.QueueRefused()))
		w.family("searxgate_client_limited_total", "counter", "Searches refused because their client asked more than its share.")
		w.sample("searxgate_client_limited_total", float64(m.ClientLimited()))
		w.family("searxgate_fanout_searches_total", "counter", "Searches answered by merging several instances' answers (fanout).")
		w.sample("searxgate_fanout_searches_total", float64(m.FanoutSearches()))

		type key struct{ inst, a string }
		byKind := map[key]uint64{}
		byReason := map[key]uint64{}
		for _, u := range urls {
			v := m.Instance(u)
			for k, n := range v.ByKind {
				byKind[key{labels[u], k}] += n
			}
			for r, n := range v.ByReason {
				if !knownReasons[r] {
					r = "other"
				}
				byReason[key{labels[u], r}] += n
			}
		}
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
		w.family("searxgate_upstream_searches_total", "counter", "Upstream searches by instance and verdict (ok, soft, refused, failed, cancelled).")
		for _, k := range sortKeys(byKind) {
			w.sample("searxgate_upstream_searches_total", float64(byKind[k]), "instance", k.inst, "verdict", k.a)
		}
		w.family("searxgate_upstream_reasons_total", "counter", "Upstream searches that were not OK, by instance and reason.")
		for _, k := range sortKeys(byReason) {
			w.sample("searxgate_upstream_reasons_total", float64(byReason[k]), "instance", k.inst, "reason", k.a)
		}
	}

	circuits := map[string]int{"closed": 0, "open": 0, "half_open": 0}
	usable, disabled := 0, 0
	for _, st := range stats {
		circuits[st.Circuit.String()]++
		if st.Disabled {
			disabled++
		} else if st.Circuit != pool.Open && (s.cfg.Proxy == nil || s.cfg.Proxy.Politeness().Allowed(st.URL, now)) {
			usable++
		}
	}
	w.family("searxgate_instances", "gauge", "Instances in the pool.")
	w.sample("searxgate_instances", float64(len(stats)))
	w.family("searxgate_instances_usable", "gauge", "Instances that could be asked now (enabled, circuit not open, within budget).")
	w.sample("searxgate_instances_usable", float64(usable))
	w.family("searxgate_instances_disabled", "gauge", "Instances the operator disabled.")
	w.sample("searxgate_instances_disabled", float64(disabled))
	w.family("searxgate_circuits", "gauge", "Instances by circuit state.")
	for _, c := range sortedKeys(circuits) {
		w.sample("searxgate_circuits", float64(circuits[c]), "state", c)
	}
	w.family("searxgate_circuits_open", "gauge", "Instances whose circuit is open.")
	w.sample("searxgate_circuits_open", float64(circuits["open"]))

	w.family("searxgate_instance_health", "gauge", "Health of each instance, 0 (unusable) to 100.")
	named := make([]pool.Stats, 0, len(stats))
	for _, st := range stats {
		if labels[st.URL] != "other" {
			named = append(named, st)
		}
	}
	slices.SortFunc(named, func(a, b pool.Stats) int { return strings.Compare(a.URL, b.URL) })
	for _, st := range named {
		w.sample("searxgate_instance_health", float64(st.Health), "instance", st.URL)
	}
	w.family("searxgate_instance_latency_seconds", "gauge", "Latency EWMA of each instance (the prior while not measured).")
	for _, st := range named {
		w.sample("searxgate_instance_latency_seconds", st.LatencyMS/1000, "instance", st.URL)
	}
	w.family("searxgate_instance_failure_ratio", "gauge", "Failure-rate EWMA of each instance, 0 to 1.")
	for _, st := range named {
		w.sample("searxgate_instance_failure_ratio", st.FailureRate, "instance", st.URL)
	}
	s.writeToolCalls(&w)
	ctx.SetContentType("text/plain; version=0.0.4; charset=utf-8")
	ctx.Response.Header.Set("Cache-Control", "no-store")
	ctx.SetBody(w.b.Bytes())
}
