package proxy

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy/instance"
)

// scrape is m's exposition, sample lines only, as name{labels} -> value.
func scrape(t *testing.T, m *Metrics, shared bool) map[string]string {
	t.Helper()
	var b bytes.Buffer
	m.WritePrometheus(&b, shared)
	out := map[string]string{}
	for line := range strings.Lines(b.String()) {
		if strings.HasPrefix(line, "#") {
			t.Errorf("a comment line from the set: %q", line)
			continue
		}
		k, v, ok := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		if !ok {
			t.Errorf("bad line %q", line)
		}
		out[k] = v
	}
	return out
}

// TestMetricsExposition: what the library writes for the search path's
// families: le buckets at latencyBuckets (cumulative, +Inf last), the
// outcomes, cache hits as cached and stale, the queue depth; the shared
// replicas' counters only while shared; and every family it writes is in
// Families.
func TestMetricsExposition(t *testing.T) {
	m := newMetrics()
	for _, d := range []time.Duration{3 * time.Millisecond, 30 * time.Millisecond, 9 * time.Second, -time.Second} {
		m.search("upstream", d)
	}
	m.search("cached", time.Millisecond)
	m.search("stale", time.Millisecond)
	m.search("no such outcome", time.Millisecond)
	m.queueDepth.Store(4)
	m.sharedJoined.Inc()
	got := scrape(t, m, false)
	// 7 latencies: 1 ms three times, 3 ms, the negative one as 0, 30 ms, 9 s.
	var les []string
	for _, le := range []string{"0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2", "4", "8", "+Inf"} {
		les = append(les, got[`searxgate_search_duration_seconds_bucket{le="`+le+`"}`])
	}
	if got, want := strings.Join(les, " "), "5 5 5 6 6 6 6 6 6 6 6 7"; got != want {
		t.Errorf("search latency buckets %s, want %s", got, want)
	}
	want := map[string]string{
		`searxgate_searches_total{outcome="upstream"}`:          "4",
		`searxgate_searches_total{outcome="cached"}`:            "1",
		`searxgate_searches_total{outcome="stale"}`:             "1",
		`searxgate_searches_total{outcome="failed"}`:            "0",
		`searxgate_cache_hits_total`:                            "2",
		`searxgate_search_duration_seconds_count`:               "7",
		`searxgate_queue_depth`:                                 "4",
		`searxgate_queue_wait_seconds_count`:                    "0",
		`searxgate_queue_wait_seconds_sum`:                      "0",
		`searxgate_upstream_duration_seconds_bucket{le="+Inf"}`: "0",
		`searxgate_fanout_searches_total`:                       "0",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if sum, _ := strconv.ParseFloat(got["searxgate_search_duration_seconds_sum"], 64); math.Abs(sum-9.036) > 1e-9 {
		t.Errorf("sum %v, want 9.036", sum)
	}
	if _, ok := got["searxgate_shared_joined_total"]; ok {
		t.Error("shared counters written while nothing is shared")
	}
	if n, s := m.SearchLatency().Count(), m.SearchLatency().Sum(); n != 7 || s != 9.036 {
		t.Errorf("count %d sum %v, want 7 and 9.036", n, s)
	}
	shared := scrape(t, m, true)
	if shared["searxgate_shared_joined_total"] != "1" || shared["searxgate_shared_refused_total"] != "0" {
		t.Errorf("shared counters: %v", shared)
	}
	described := map[string]string{}
	for _, f := range Families() {
		described[f.Name] = f.Type
	}
	written := map[string]bool{}
	for k := range shared {
		name, _, _ := strings.Cut(k, "{")
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(name, suffix); ok && described[base] == "histogram" {
				name = base
			}
		}
		if described[name] == "" {
			t.Errorf("%s is written but not in Families", name)
		}
		written[name] = true
	}
	for name := range described {
		if !written[name] {
			t.Errorf("%s is in Families but not written", name)
		}
	}
}

// TestMetricsOfTwoProxiesApart: each proxy counts in a set of its own.
func TestMetricsOfTwoProxiesApart(t *testing.T) {
	a, b := newMetrics(), newMetrics()
	a.search("upstream", time.Millisecond)
	a.queueRefused.Inc()
	if got := scrape(t, b, false); got[`searxgate_searches_total{outcome="upstream"}`] != "0" || got["searxgate_queue_refused_total"] != "0" {
		t.Errorf("the other proxy's counts: %v", got)
	}
	if a.Searches()["upstream"] != 1 || b.Searches()["upstream"] != 0 || a.QueueRefused() != 1 {
		t.Error("counts mixed")
	}
}

// TestRecordingAllocatesNothing: counting one search, one upstream
// attempt and one queue wait allocates nothing (they are on every
// search's path).
func TestRecordingAllocatesNothing(t *testing.T) {
	m := newMetrics()
	const inst = "https://a.example/"
	recs := instance.New(instance.Config{})
	rec := recs.Ensure(inst)
	refused := pool.Outcome{Kind: pool.Refused, Reason: "rate_limited"}
	for name, f := range map[string]func(){
		"search":   func() { m.search("upstream", 20*time.Millisecond) },
		"cached":   func() { m.search("cached", time.Millisecond) },
		"upstream": func() { m.upstream(refused, 300*time.Millisecond) },
		"instance": func() { recs.Count(rec, inst, refused, 300*time.Millisecond) },
		"queue":    func() { m.queueWait.observe(time.Millisecond); m.queueRefused.Inc(); m.queueDepth.Store(1) },
	} {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s: %v allocations", name, n)
		}
	}
}

func BenchmarkRecordSearch(b *testing.B) {
	m := newMetrics()
	b.ReportAllocs()
	for b.Loop() {
		m.search("upstream", 20*time.Millisecond)
	}
}
