package web

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/sim"
)

var (
	metricName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	labelName  = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
)

type promSample struct {
	name   string
	labels map[string]string
	value  float64
}

type promFamily struct {
	name, typ, help string
	samples         []promSample
}

// parseProm checks text against the Prometheus text format's rules line by
// line and returns its families.
func parseProm(t *testing.T, text string) map[string]*promFamily {
	t.Helper()
	fams := map[string]*promFamily{}
	var cur *promFamily
	seen := map[string]bool{}
	if !strings.HasSuffix(text, "\n") {
		t.Error("the exposition does not end with a newline")
	}
	for n, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		n++
		switch {
		case line == "":
			t.Errorf("line %d is empty", n)
		case strings.HasPrefix(line, "# HELP "):
			name, help, _ := strings.Cut(strings.TrimPrefix(line, "# HELP "), " ")
			if !metricName.MatchString(name) || help == "" {
				t.Errorf("line %d: bad HELP %q", n, line)
			}
			if fams[name] != nil {
				t.Errorf("line %d: family %s described twice", n, name)
			}
			cur = &promFamily{name: name, help: help}
			fams[name] = cur
		case strings.HasPrefix(line, "# TYPE "):
			f := strings.Fields(strings.TrimPrefix(line, "# TYPE "))
			if len(f) != 2 || cur == nil || f[0] != cur.name || cur.typ != "" {
				t.Errorf("line %d: TYPE %q does not follow its HELP", n, line)
				continue
			}
			switch f[1] {
			case "counter", "gauge", "histogram", "summary", "untyped":
			default:
				t.Errorf("line %d: unknown type %q", n, f[1])
			}
			cur.typ = f[1]
		case strings.HasPrefix(line, "#"):
			t.Errorf("line %d: a comment that is neither HELP nor TYPE: %q", n, line)
		default:
			s, key, err := parseSample(line)
			if err != nil {
				t.Errorf("line %d: %v: %q", n, err, line)
				continue
			}
			if seen[key] {
				t.Errorf("line %d: series %s repeated", n, key)
			}
			seen[key] = true
			if cur == nil || cur.typ == "" {
				t.Errorf("line %d: sample before its family's HELP and TYPE", n)
				continue
			}
			base := s.name
			if cur.typ == "histogram" {
				base = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(base, "_bucket"), "_sum"), "_count")
			}
			if base != cur.name {
				t.Errorf("line %d: sample %s outside its family (in %s)", n, s.name, cur.name)
			}
			cur.samples = append(cur.samples, s)
		}
	}
	for name, f := range fams {
		if !strings.HasPrefix(name, "searxgate_") && !strings.HasPrefix(name, "process_") {
			t.Errorf("family %s is neither searxgate's (searxgate_) nor the process' (process_)", name)
		}
		if f.typ == "counter" && !strings.HasSuffix(name, "_total") {
			t.Errorf("counter %s does not end in _total", name)
		}
		if f.typ == "histogram" {
			checkHistogram(t, f)
		}
	}
	return fams
}

// parseSample reads `name{l="v",...} value`, unescaping label values.
func parseSample(line string) (promSample, string, error) {
	s := promSample{labels: map[string]string{}}
	i := strings.IndexAny(line, "{ ")
	if i < 0 {
		return s, "", fmt.Errorf("no value")
	}
	s.name = line[:i]
	if !metricName.MatchString(s.name) {
		return s, "", fmt.Errorf("bad name %q", s.name)
	}
	rest := line[i:]
	key := s.name
	if rest[0] == '{' {
		rest = rest[1:]
		var keyParts []string
		for {
			if rest == "" {
				return s, "", fmt.Errorf("unterminated labels")
			}
			if rest[0] == '}' {
				rest = rest[1:]
				break
			}
			eq := strings.Index(rest, `="`)
			if eq < 0 {
				return s, "", fmt.Errorf("bad label")
			}
			ln := rest[:eq]
			if !labelName.MatchString(ln) || strings.HasPrefix(ln, "__") {
				return s, "", fmt.Errorf("bad label name %q", ln)
			}
			rest = rest[eq+2:]
			var v strings.Builder
			closed := false
			for !closed {
				if rest == "" {
					return s, "", fmt.Errorf("unterminated label value")
				}
				c := rest[0]
				rest = rest[1:]
				switch c {
				case '"':
					closed = true
				case '\n':
					return s, "", fmt.Errorf("raw newline in a label value")
				case '\\':
					if rest == "" {
						return s, "", fmt.Errorf("dangling escape")
					}
					switch rest[0] {
					case '\\':
						v.WriteByte('\\')
					case '"':
						v.WriteByte('"')
					case 'n':
						v.WriteByte('\n')
					default:
						return s, "", fmt.Errorf("bad escape \\%c", rest[0])
					}
					rest = rest[1:]
				default:
					v.WriteByte(c)
				}
			}
			if _, dup := s.labels[ln]; dup {
				return s, "", fmt.Errorf("label %s twice", ln)
			}
			s.labels[ln] = v.String()
			keyParts = append(keyParts, ln+"="+strconv.Quote(v.String()))
			if rest != "" && rest[0] == ',' {
				rest = rest[1:]
			}
		}
		key += "{" + strings.Join(keyParts, ",") + "}"
	}
	if rest == "" || rest[0] != ' ' {
		return s, "", fmt.Errorf("no space before the value")
	}
	f := strings.Fields(rest)
	if len(f) < 1 || len(f) > 2 {
		return s, "", fmt.Errorf("bad value part %q", rest)
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return s, "", fmt.Errorf("bad value %q", f[0])
	}
	s.value = v
	return s, key, nil
}

// checkHistogram: buckets in ascending le, cumulative, +Inf last and equal
// to _count, and a _sum.
func checkHistogram(t *testing.T, f *promFamily) {
	t.Helper()
	prevLE, prevCount := math.Inf(-1), -1.0
	var inf, count float64 = -1, -2
	hasSum := false
	for _, s := range f.samples {
		switch s.name {
		case f.name + "_bucket":
			le, err := strconv.ParseFloat(s.labels["le"], 64)
			if err != nil {
				t.Errorf("%s: bucket le %q", f.name, s.labels["le"])
				continue
			}
			if le <= prevLE {
				t.Errorf("%s: buckets not in ascending order at le=%v", f.name, le)
			}
			if s.value < prevCount {
				t.Errorf("%s: bucket le=%v holds %v, less than the one before (%v): not cumulative", f.name, le, s.value, prevCount)
			}
			prevLE, prevCount = le, s.value
			if math.IsInf(le, 1) {
				inf = s.value
			}
		case f.name + "_sum":
			hasSum = true
		case f.name + "_count":
			count = s.value
		}
	}
	if !math.IsInf(prevLE, 1) {
		t.Errorf("%s: the last bucket is not +Inf", f.name)
	}
	if inf != count {
		t.Errorf("%s: +Inf bucket %v != _count %v", f.name, inf, count)
	}
	if !hasSum {
		t.Errorf("%s: no _sum", f.name)
	}
}

func value(f *promFamily, labels ...string) (float64, bool) {
	for _, s := range f.samples {
		ok := true
		for i := 0; i+1 < len(labels); i += 2 {
			if s.labels[labels[i]] != labels[i+1] {
				ok = false
			}
		}
		if ok {
			return s.value, true
		}
	}
	return 0, false
}

func TestMetricsAfterRealSearches(t *testing.T) {
	lf := startLive(t, []sim.InstanceConfig{
		{ID: "good", Behaviour: sim.Fast, JSON: true, Latency: 5 * time.Millisecond},
		{ID: "refuser", Behaviour: sim.RateLimitBare, RateBurst: 1, Latency: -1, JSON: true},
	})
	// A hostile instance URL: the label must be escaped.
	const weird = "https://we\"ird\\name\n.example/"
	lf.pool.Add(weird, pool.Public)
	lf.pool.Disable(weird)
	_, c := serve(t, Config{Proxy: lf.proxy, Pool: lf.pool, Version: "v\"1"})
	const searches = 6
	for i := range searches {
		r := c.get(fmt.Sprintf("/search?q=metrics+%d&format=json", i))
		if r.status != 200 {
			t.Fatalf("search %d: %d %s", i, r.status, r.body)
		}
	}
	if r := c.get("/search?q=metrics+0&format=json"); r.header[HeaderCache] != "hit" {
		t.Fatalf("the repeated search was not a cache hit: %v", r.header)
	}
	r := c.get("/metrics")
	if r.status != 200 || r.header["Content-Type"] != "text/plain; version=0.0.4; charset=utf-8" {
		t.Fatalf("%d %q", r.status, r.header["Content-Type"])
	}
	fams := parseProm(t, r.body)
	for _, name := range []string{"searxgate_searches_total", "searxgate_search_duration_seconds", "searxgate_upstream_duration_seconds",
		"searxgate_upstream_searches_total", "searxgate_cache_hits_total", "searxgate_circuits_open", "searxgate_instance_health",
		"searxgate_instances_usable", "searxgate_build_info",
		"searxgate_queue_depth", "searxgate_queue_wait_seconds", "searxgate_queue_refused_total", "searxgate_client_limited_total"} {
		if fams[name] == nil {
			t.Errorf("no family %s", name)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	var total float64
	for _, s := range fams["searxgate_searches_total"].samples {
		total += s.value
	}
	if total != searches+1 {
		t.Errorf("searches_total sums to %v, want %d", total, searches+1)
	}
	if v, _ := value(fams["searxgate_cache_hits_total"]); v != 1 {
		t.Errorf("cache hits %v, want 1", v)
	}
	if v, _ := value(fams["searxgate_search_duration_seconds"]); v == 0 {
		t.Error("the search histogram is empty")
	}
	good := lf.fleet.Instance("good").URL()
	if v, ok := value(fams["searxgate_upstream_searches_total"], "instance", good, "verdict", "ok"); !ok || v < 1 {
		t.Errorf("upstream ok searches of %s: %v %v", good, v, ok)
	}
	var upstream float64
	for _, s := range fams["searxgate_upstream_searches_total"].samples {
		upstream += s.value
	}
	if want := float64(lf.proxy.Metrics().UpstreamTotal()); upstream != want {
		t.Errorf("upstream searches by instance sum to %v, the proxy counted %v", upstream, want)
	}
	if v, ok := value(fams["searxgate_instance_health"], "instance", weird); !ok || v != 0 {
		t.Errorf("the disabled, oddly named instance: health %v, found %v", v, ok)
	}
	if _, ok := value(fams["searxgate_build_info"], "version", `v"1`); !ok {
		t.Error("build_info's version label does not round-trip")
	}
	m := lf.proxy.Metrics()
	for name, want := range map[string]float64{
		"searxgate_queue_depth":           float64(m.QueueDepth()),
		"searxgate_queue_refused_total":   float64(m.QueueRefused()),
		"searxgate_client_limited_total":  float64(m.ClientLimited()),
		"searxgate_fanout_searches_total": float64(m.FanoutSearches()),
	} {
		if v, ok := value(fams[name]); !ok || v != want {
			t.Errorf("%s = %v (found %v), the proxy says %v", name, v, ok, want)
		}
	}
	for name, typ := range map[string]string{"searxgate_queue_depth": "gauge", "searxgate_queue_wait_seconds": "histogram",
		"searxgate_queue_refused_total": "counter", "searxgate_client_limited_total": "counter"} {
		if fams[name].typ != typ {
			t.Errorf("%s is a %s, want a %s", name, fams[name].typ, typ)
		}
	}
	if v, _ := value(fams["searxgate_instances"]); v != 3 {
		t.Errorf("instances %v, want 3", v)
	}
}

func TestInstanceLabelsAreBounded(t *testing.T) {
	urls := make([]string, MaxInstanceLabels+50)
	for i := range urls {
		urls[i] = fmt.Sprintf("https://i%04d.example/", i)
	}
	var l instanceLabels
	// Seen in reverse URL order over two scrapes: each scrape names its
	// newcomers in URL order, and the first seen keep their labels.
	l.assign(urls[100:])
	l.assign(urls)
	distinct := map[string]bool{}
	for _, u := range urls {
		distinct[l.label(u)] = true
	}
	if len(distinct) != MaxInstanceLabels+1 || !distinct["other"] {
		t.Fatalf("%d distinct labels, want %d named and other", len(distinct), MaxInstanceLabels)
	}
	// The second scrape's 100 newcomers fill the last 50 places in URL
	// order; the other 50 are summed, though they sort before most named.
	for u, want := range map[string]string{urls[100]: urls[100], urls[len(urls)-1]: urls[len(urls)-1], urls[0]: urls[0], urls[49]: urls[49], urls[50]: "other", urls[99]: "other"} {
		if got := l.label(u); got != want {
			t.Errorf("label(%s) = %q, want %q", u, got, want)
		}
	}

	p, px := publicPool(t, urls...)
	_, c := serve(t, Config{Proxy: px, Pool: p})
	fams := parseProm(t, c.get("/metrics").body)
	if n := len(fams["searxgate_instance_health"].samples); n != MaxInstanceLabels {
		t.Errorf("%d health series for %d instances, want at most %d", n, len(urls), MaxInstanceLabels)
	}
}

// seriesKey names one sample: its name and its labels, sorted.
func seriesKey(s promSample) string {
	ls := make([]string, 0, len(s.labels))
	for k, v := range s.labels {
		ls = append(ls, k+"="+strconv.Quote(v))
	}
	slices.Sort(ls)
	return s.name + "{" + strings.Join(ls, ",") + "}"
}

// TestMetricsCountersNeverDecrease scrapes /metrics while instances join,
// leave (and are forgotten by the proxy), come back, are disabled and
// re-ranked, with room for three labels: no counter (histograms included)
// may go down or vanish between scrapes, in particular instance="other".
// With labels given by rank or URL order, a newcomer sorting first pushed
// a named instance into "other" and a removal pulled one out, and "other"
// went down.
func TestMetricsCountersNeverDecrease(t *testing.T) {
	cfgs := make([]sim.InstanceConfig, 6)
	for i := range cfgs {
		cfgs[i] = sim.InstanceConfig{ID: fmt.Sprintf("i%d", i), Behaviour: sim.Fast, JSON: true, Latency: time.Millisecond}
	}
	lf := startLive(t, cfgs)
	urls := lf.fleet.URLs()
	slices.Sort(urls)
	// The first three in URL order join later, so that each sorts before
	// every instance already named.
	for _, u := range urls[:3] {
		lf.pool.Remove(u)
	}
	s, c := serve(t, Config{Proxy: lf.proxy, Pool: lf.pool})
	s.labels.max = 3

	prev := map[string]float64{}
	search := 0
	scrape := func(step string) map[string]*promFamily {
		t.Helper()
		for range 3 {
			search++
			if r := c.get(fmt.Sprintf("/search?q=monotone+%d&format=json", search)); r.status != 200 {
				t.Fatalf("%s: search %d: %d %s", step, search, r.status, r.body)
			}
		}
		fams := parseProm(t, c.get("/metrics").body)
		cur := map[string]float64{}
		for _, f := range fams {
			if f.typ != "counter" && f.typ != "histogram" {
				continue
			}
			for _, sm := range f.samples {
				cur[seriesKey(sm)] = sm.value
			}
		}
		for k, v := range prev {
			if w, ok := cur[k]; !ok {
				t.Errorf("%s: counter %s vanished (was %v)", step, k, v)
			} else if w < v {
				t.Errorf("%s: counter %s went down from %v to %v", step, k, v, w)
			}
		}
		prev = cur
		return fams
	}
	remove := func(u string) {
		lf.pool.Remove(u)
		lf.proxy.Forget(u)
	}

	scrape("start")
	lf.pool.Add(urls[0], pool.Public) // sorts first; no room left: "other"
	lf.pool.Disable(urls[3])
	lf.pool.Disable(urls[4]) // searches go to urls[0] and urls[5]
	scrape("a newcomer sorting first")
	remove(urls[5]) // named, leaves: its series stay, nothing moves out of "other"
	lf.pool.Add(urls[1], pool.Public)
	scrape("a named instance removed, another newcomer")
	lf.pool.Enable(urls[3])
	lf.pool.Enable(urls[4])
	remove(urls[0]) // in "other", leaves: "other" keeps its searches
	lf.pool.Add(urls[2], pool.Public)
	scrape("an instance summed under other removed")
	lf.pool.Add(urls[5], pool.Public) // comes back, counts on under its own label
	lf.pool.Add(urls[0], pool.Public)
	lf.pool.Disable(urls[3])
	lf.pool.Disable(urls[4])
	fams := scrape("instances back, ranks changed")

	if t.Failed() {
		t.FailNow()
	}
	named := map[string]bool{}
	var other float64
	for _, sm := range fams["searxgate_upstream_searches_total"].samples {
		if inst := sm.labels["instance"]; inst == "other" {
			other += sm.value
		} else {
			named[inst] = true
		}
	}
	for u := range named {
		if !slices.Contains(urls[3:], u) {
			t.Errorf("%s is named, but was not among the first three seen %v", u, urls[3:])
		}
	}
	if other == 0 {
		t.Error("nothing was counted under instance=\"other\": the test did not exercise it")
	}
	var upstream float64
	for _, sm := range fams["searxgate_upstream_searches_total"].samples {
		upstream += sm.value
	}
	if want := float64(lf.proxy.Metrics().UpstreamTotal()); upstream != want {
		t.Errorf("upstream searches by instance sum to %v, the proxy counted %v (removed instances included)", upstream, want)
	}
	for _, sm := range fams["searxgate_instance_health"].samples {
		if !named[sm.labels["instance"]] && !slices.Contains(urls[3:], sm.labels["instance"]) {
			t.Errorf("health of %s, which has no label of its own", sm.labels["instance"])
		}
	}
}

// TestMetricsPassPromtool runs Prometheus' own checker on a scrape with
// traffic, a hostile instance name and process metrics. It skips when
// promtool is missing, except in CI (CI=true), where .ci/run installs it.
func TestMetricsPassPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool is missing (Debian: apt-get install prometheus)")
		}
		t.Skip("promtool is missing (Debian: apt-get install prometheus)")
	}
	lf := startLive(t, []sim.InstanceConfig{
		{ID: "good", Behaviour: sim.Fast, JSON: true, Latency: time.Millisecond},
		{ID: "refuser", Behaviour: sim.RateLimitBare, RateBurst: 1, Latency: -1, JSON: true},
	})
	lf.pool.Add("https://we\"ird\\name\n.example/", pool.Public)
	_, c := serve(t, Config{Proxy: lf.proxy, Pool: lf.pool, Version: "v\"1"})
	for i := range 4 {
		c.get(fmt.Sprintf("/search?q=promtool+%d&format=json", i))
	}
	body := c.get("/metrics").body
	parseProm(t, body)
	if !strings.Contains(body, "\nprocess_cpu_seconds_total ") && runtime.GOOS == "linux" {
		t.Error("no process metrics")
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestMetricsKeepTheirNames: every family searxgate exposed before
// /metrics moved to VictoriaMetrics' process metrics is still there, with
// its type, and the latency histograms keep their le buckets, so that
// dashboards and alerts made for them keep working.
func TestMetricsKeepTheirNames(t *testing.T) {
	p, px := publicPool(t, "https://a.example/")
	_, c := serve(t, Config{Proxy: px, Pool: p})
	fams := parseProm(t, c.get("/metrics").body)
	want := map[string]string{
		"searxgate_build_info":                "gauge",
		"searxgate_cache_hits_total":          "counter",
		"searxgate_circuits":                  "gauge",
		"searxgate_circuits_open":             "gauge",
		"searxgate_client_limited_total":      "counter",
		"searxgate_fanout_searches_total":     "counter",
		"searxgate_goroutines":                "gauge",
		"searxgate_heap_bytes":                "gauge",
		"searxgate_instance_failure_ratio":    "gauge",
		"searxgate_instance_health":           "gauge",
		"searxgate_instance_fullness_ratio":   "gauge",
		"searxgate_quality_hedges_total":      "counter",
		"searxgate_instance_latency_seconds":  "gauge",
		"searxgate_instances":                 "gauge",
		"searxgate_instances_disabled":        "gauge",
		"searxgate_instances_usable":          "gauge",
		"searxgate_open_fds":                  "gauge",
		"searxgate_queue_depth":               "gauge",
		"searxgate_queue_refused_total":       "counter",
		"searxgate_share_refused_total":       "counter",
		"searxgate_queue_wait_seconds":        "histogram",
		"searxgate_results_dropped_total":     "counter",
		"searxgate_search_duration_seconds":   "histogram",
		"searxgate_searches_total":            "counter",
		"searxgate_upstream_duration_seconds": "histogram",
		"searxgate_upstream_reasons_total":    "counter",
		"searxgate_upstream_requests_total":   "counter",
		"searxgate_upstream_searches_total":   "counter",
	}
	if runtime.GOOS != "linux" {
		delete(want, "searxgate_open_fds")
	}
	for name, typ := range want {
		if f := fams[name]; f == nil || f.typ != typ {
			t.Errorf("family %s: %+v, want a %s", name, f, typ)
		}
	}
	for name := range fams {
		if _, ok := want[name]; !ok && !strings.HasPrefix(name, "process_") {
			t.Errorf("new family %s: say why in docs/self-hosting.md (Watch and steer it)", name)
		}
	}
	var les []string
	for _, s := range fams["searxgate_search_duration_seconds"].samples {
		if le, ok := s.labels["le"]; ok {
			les = append(les, le)
		}
	}
	if got := strings.Join(les, " "); got != "0.005 0.01 0.025 0.05 0.1 0.25 0.5 1 2 4 8 +Inf" {
		t.Errorf("le buckets %s", got)
	}
	if v, ok := value(fams["searxgate_heap_bytes"]); !ok || v <= 0 {
		t.Errorf("heap bytes %v", v)
	}
}

// BenchmarkProcessMetrics is the share of a scrape that reads /proc for
// the process_* metrics (BenchmarkMetrics100Instances includes it).
func BenchmarkProcessMetrics(b *testing.B) {
	b.ReportAllocs()
	var pg page
	for b.Loop() {
		pg.b, pg.cur = pg.b[:0], ""
		metrics.WriteProcMetrics(&pg)
	}
}

var updateFamilies = flag.Bool("update-families", false, "rewrite testdata/metrics_families.txt from this scrape")

// familiesFile is every family searxgate's /metrics exposes (process_*
// left out: /proc decides those), with its type, label names, bucket
// bounds and HELP text, as dashboards and alerts rely on them.
const familiesFile = "testdata/metrics_families.txt"

// describeFamilies writes one line per searxgate_ family of fams, sorted:
// name, type, its samples' label names, its le bounds, its HELP text.
func describeFamilies(fams map[string]*promFamily) string {
	var lines []string
	for name, f := range fams {
		if strings.HasPrefix(name, "process_") {
			continue
		}
		labels := map[string]bool{}
		var les []string
		for _, s := range f.samples {
			for l := range s.labels {
				labels[l] = true
			}
			if le, ok := s.labels["le"]; ok {
				les = append(les, le)
			}
		}
		ls := slices.Sorted(maps.Keys(labels))
		lines = append(lines, strings.Join([]string{name, f.typ, orDash(strings.Join(ls, ",")), orDash(strings.Join(les, ",")), f.help}, "\t"))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n") + "\n"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// TestMetricsFamiliesUnchanged scrapes a gateway that exposes every family
// it has (traffic with refusals, state shared with other replicas, MCP
// tool calls) and compares its families, types, label names, buckets and
// HELP texts with testdata/metrics_families.txt: none may change
// unnoticed. Rewrite the file with -update-families, and say why in
// docs/self-hosting.md when it changes.
func TestMetricsFamiliesUnchanged(t *testing.T) {
	shared := proxy.Shared{Status: func() proxy.SharedState { return proxy.SharedState{Shared: true, Replicas: 2, LocalTakes: 3} }}
	live := startLiveWith(t, []sim.InstanceConfig{
		{ID: "good", Behaviour: sim.Fast, JSON: true, Latency: -1},
		{ID: "refuser", Behaviour: sim.RateLimitBare, RateBurst: 1, Latency: -1, JSON: true},
	}, proxy.Config{Shared: shared})
	f, p, px := live.fleet, live.pool, live.proxy
	calls := []ToolCalls{{"searxng_web_search", "ok", 3}}
	_, c := serve(t, Config{Proxy: px, Pool: p, Version: "test", ToolCalls: func() []ToolCalls { return calls }})
	// The refuser alone first, so that its refusal is counted by reason.
	good := f.Instance("good").URL()
	p.Disable(good)
	for i := range 3 {
		c.get(fmt.Sprintf("/search?q=families+%d&format=json", i))
	}
	p.Enable(good)
	c.get("/search?q=families&format=json")
	got := describeFamilies(parseProm(t, c.get("/metrics").body))
	if *updateFamilies {
		if err := os.WriteFile(familiesFile, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(familiesFile)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("/metrics' families changed (-update-families rewrites %s):\n got:\n%s\nwant:\n%s", familiesFile, got, want)
	}
}

// TestPageDescribesTheLibrarysSamples: the page puts HELP and TYPE before
// each family the library writes, whether its lines come whole or a byte
// at a time, and drops the library's own metadata (its switch is
// process-wide; here it is on for the test's length).
func TestPageDescribesTheLibrarysSamples(t *testing.T) {
	metrics.ExposeMetadata(true)
	t.Cleanup(func() { metrics.ExposeMetadata(false) })
	set := metrics.NewSet()
	set.NewCounter(`searxgate_searches_total{outcome="cached"}`).Add(2)
	set.NewPrometheusHistogramExt("searxgate_queue_wait_seconds", []float64{0.005, 1}).Update(0.5)
	set.NewCounter("process_made_up_total").Inc()
	write := func(pg *page) {
		pg.family("searxgate_instance_health") // no sample: described all the same
		pg.gaugeUint(1, "searxgate_build_info", "version", "a\"b\\c\nd\xff")
		set.WritePrometheus(pg)
	}
	var whole page
	write(&whole)
	// The same samples, as the library writes them (its metadata on),
	// fed a byte at a time.
	var lib bytes.Buffer
	metrics.WriteGaugeUint64(&lib, `searxgate_build_info{version="a\"b\\c\nd`+"\uFFFD"+`"}`, 1)
	set.WritePrometheus(&lib)
	if !strings.Contains(lib.String(), "# TYPE") {
		t.Fatal("the library wrote no metadata: the test does not exercise dropping it")
	}
	var bytewise page
	bytewise.family("searxgate_instance_health")
	for _, c := range lib.Bytes() {
		if _, err := bytewise.Write([]byte{c}); err != nil {
			t.Fatal(err)
		}
	}
	if string(whole.b) != string(bytewise.b) {
		t.Errorf("whole lines and bytes differ:\n%s\n---\n%s", whole.b, bytewise.b)
	}
	fams := parseProm(t, string(whole.b))
	if f := fams["searxgate_instance_health"]; f == nil || f.typ != "gauge" || len(f.samples) != 0 {
		t.Errorf("the empty family: %+v", f)
	}
	if v, ok := value(fams["searxgate_build_info"], "version", "a\"b\\c\nd\uFFFD"); !ok || v != 1 {
		t.Errorf("the escaped label: %v %v\n%s", v, ok, whole.b)
	}
	if f := fams["searxgate_queue_wait_seconds"]; f == nil || f.typ != "histogram" || len(f.samples) != 5 {
		t.Errorf("the histogram: %+v", f)
	}
	if f := fams["searxgate_searches_total"]; f == nil || f.help != "Client searches, by how they were answered." {
		t.Errorf("the counter's HELP: %+v", f)
	}
	if f := fams["process_made_up_total"]; f == nil || f.typ != "counter" {
		t.Errorf("an undescribed process family: %+v", f)
	}
}

// TestSamplesAsTheLibraryWritesThem: the samples /metrics writes at scrape
// time read as the library's WriteGaugeFloat64, WriteGaugeUint64 and
// WriteCounterUint64 write them.
func TestSamplesAsTheLibraryWritesThem(t *testing.T) {
	name := `searxgate_instance_latency_seconds{instance="https://a.example/\"x\"\\"}`
	for _, v := range []float64{0, 1, 1.5, -0.25, 1e21, 1e-7, 123456789.125, math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1)} {
		pg := &page{}
		pg.gauge(v, "searxgate_instance_latency_seconds", "instance", `https://a.example/"x"\`)
		var lib bytes.Buffer
		metrics.WriteGaugeFloat64(&lib, name, v)
		if got := sampleLines(pg.b); got != lib.String() {
			t.Errorf("gauge %v: %q, the library writes %q", v, got, lib.String())
		}
	}
	for _, v := range []uint64{0, 7, math.MaxUint64} {
		pg := &page{}
		pg.gaugeUint(v, "searxgate_instances")
		pg.count(v, "searxgate_upstream_searches_total", "instance", "other", "verdict", "ok")
		var lib bytes.Buffer
		metrics.WriteGaugeUint64(&lib, "searxgate_instances", v)
		metrics.WriteCounterUint64(&lib, `searxgate_upstream_searches_total{instance="other",verdict="ok"}`, v)
		if samples := sampleLines(pg.b); samples != lib.String() {
			t.Errorf("%d: %q, the library writes %q", v, samples, lib.String())
		}
	}
}

// sampleLines is b without its comment lines.
func sampleLines(b []byte) string {
	var out strings.Builder
	for line := range strings.Lines(string(b)) {
		if !strings.HasPrefix(line, "#") {
			out.WriteString(line)
		}
	}
	return out.String()
}
