package web

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy"
)

// Totals are the gateway's counters at the top of the status page.
type Totals struct {
	Searches  uint64            `json:"searches"`            // client searches answered or failed
	ByOutcome map[string]uint64 `json:"searches_by_outcome"` // upstream, cached, coalesced, stale, failed
	FromCache uint64            `json:"from_cache"`          // cached and stale
	Upstream  uint64            `json:"upstream_searches"`   // searches sent to instances
	Refusals  uint64            `json:"refusals"`            // refusals the pool counted
	Instances int               `json:"instances"`           // in the pool
	Usable    int               `json:"usable_now"`          // a search could go to them now (instance.Registry.Usable)
	Open      int               `json:"circuits_open"`
	// The slot queue and the per-client admission.
	QueueDepth    int64   `json:"queue_depth"`       // searches waiting for a slot now
	QueueWaitMS   float64 `json:"queue_wait_avg_ms"` // mean wait of the searches that got a slot
	QueueRefused  uint64  `json:"queue_refused"`     // refused: no slot within their deadline, or the queue full
	ShareRefused  uint64  `json:"share_refused"`     // refused: their client had used its share of the public budget
	ClientLimited uint64  `json:"client_limited"`    // refused: their client asked more than its own limit (--client-rate)
	Fanout        uint64  `json:"fanout_searches"`   // answered by merging several instances (fanout)
	// MCP tool calls (none without an MCP face), and by tool and outcome.
	ToolCalls       int64                       `json:"mcp_tool_calls"`
	ToolCallsByTool map[string]map[string]int64 `json:"mcp_tool_calls_by_tool,omitempty"`
}

// InstanceStatus is one instance on /status.json: the pool's stats, with
// what the proxy knows of it.
type InstanceStatus struct {
	pool.Stats
	Format         string            `json:"format"` // json or html, as searxgate asks it
	Version        string            `json:"version,omitempty"`
	Limiter        bool              `json:"limiter"`
	LinkToken      bool              `json:"link_token"`
	Usable         bool              `json:"usable_now"`
	WhyNot         proxy.Why         `json:"why_not,omitempty"` // its label: disabled, link_token, circuit_open, trial_out, in_flight, budget
	Advice         string            `json:"advice,omitempty"`  // what the operator could do for it
	BudgetUsed20s  int               `json:"budget_used_20s"`
	BudgetUsed10m  int               `json:"budget_used_10m"`
	OutcomesByKind map[string]uint64 `json:"outcomes_by_kind"`
	ByReason       map[string]uint64 `json:"outcomes_by_reason"`
	RecentMS       []float32         `json:"recent_ms"`
	RecentKinds    []string          `json:"recent_kinds"`
}

// StatusReport is /status.json.
type StatusReport struct {
	Name    string    `json:"instance_name"`
	Version string    `json:"version"`
	Now     time.Time `json:"now"`
	Started time.Time `json:"started"`
	// Problem says why searxgate cannot search at all now (Config.Problem);
	// "" when nothing is wrong.
	Problem string `json:"problem"`
	// Replicas is the state shared with other replicas (--redis); absent
	// when nothing is shared.
	Replicas  *proxy.SharedState `json:"replicas,omitempty"`
	Totals    Totals             `json:"totals"`
	Instances []InstanceStatus   `json:"instances"`
}

// instances is every instance as the search path sees it (proxy.Instances):
// this face computes nothing of its own, whether an instance is usable
// least of all. Without a proxy (tests of the page alone) there is none.
func (s *Server) instances(now time.Time) []InstanceStatus {
	var out []InstanceStatus
	if p := s.cfg.Proxy; p != nil {
		for _, in := range p.Instances().Instances(now) {
			is := InstanceStatus{Stats: in.Stats, Format: in.Format, Version: in.Caps.Version, Limiter: in.Caps.Limiter,
				LinkToken: in.Caps.LinkToken, Usable: in.UsableNow(), WhyNot: in.WhyNot, Advice: in.Advice,
				OutcomesByKind: orEmpty(in.Metrics.ByKind), ByReason: orEmpty(in.Metrics.ByReason),
				RecentMS: []float32{}, RecentKinds: []string{}}
			for _, w := range in.Budget {
				switch w.Per {
				case 20 * time.Second:
					is.BudgetUsed20s = w.Used
				case 10 * time.Minute:
					is.BudgetUsed10m = w.Used
				}
			}
			if in.Metrics.Recent != nil {
				is.RecentMS, is.RecentKinds = in.Metrics.Recent, in.Metrics.Kinds
			}
			out = append(out, is)
		}
	}
	return out
}

func orEmpty(m map[string]uint64) map[string]uint64 {
	if m == nil {
		return map[string]uint64{}
	}
	return m
}

// report gathers what /status and /status.json show, reading the clock once.
func (s *Server) report(now time.Time) StatusReport {
	r := StatusReport{Name: s.cfg.InstanceName, Version: s.cfg.Version, Now: now.UTC(), Started: s.started.UTC(),
		Instances: []InstanceStatus{}, Totals: Totals{ByOutcome: map[string]uint64{}}}
	r.Totals.ToolCalls, r.Totals.ToolCallsByTool = s.toolTotals()
	var m *proxy.Metrics
	if s.cfg.Proxy != nil {
		m = s.cfg.Proxy.Metrics()
		r.Totals.ByOutcome = m.Searches()
		for _, n := range r.Totals.ByOutcome {
			r.Totals.Searches += n
		}
		r.Totals.FromCache = r.Totals.ByOutcome["cached"] + r.Totals.ByOutcome["stale"]
		r.Totals.Upstream = m.UpstreamTotal()
		r.Totals.QueueDepth = m.QueueDepth()
		r.Totals.QueueRefused = m.QueueRefused()
		r.Totals.ShareRefused = m.ShareRefused()
		r.Totals.ClientLimited = m.ClientLimited()
		r.Totals.Fanout = m.FanoutSearches()
		if n := m.QueueWait().Count(); n > 0 {
			r.Totals.QueueWaitMS = m.QueueWait().Sum() * 1000 / float64(n)
		}
	}
	if s.cfg.Problem != nil {
		r.Problem = s.cfg.Problem()
	}
	if p := s.cfg.Proxy; p != nil {
		if st, ok := p.Replicas().State(); ok {
			r.Replicas = &st
		}
	}
	if s.cfg.Pool == nil {
		return r
	}
	for _, is := range s.instances(now) {
		r.Totals.Instances++
		r.Totals.Refusals += is.Refusals
		if is.Usable {
			r.Totals.Usable++
		}
		if is.Circuit == pool.Open {
			r.Totals.Open++
		}
		r.Instances = append(r.Instances, is)
	}
	return r
}

func (s *Server) statusJSON(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.Set("Cache-Control", "no-store")
	writeJSON(ctx, fasthttp.StatusOK, s.report(s.cfg.Clock.Now()))
}

// statusView is what status.html shows.
type statusView struct {
	Problem   string
	Replicas  *proxy.SharedState
	Failed    uint64 // client searches that got no answer
	QueueWait string
	Totals    Totals
	Version   string
	Uptime    string
	Now       string
	Rows      []statusRow
}

type statusRow struct {
	URL, Host      string
	HostParts      []string // Host cut after each dot and slash, where a line may break
	Circuit        string
	Health         int
	HealthClass    string
	Latency        string
	Measured       bool
	FailureRate    string
	Searches       uint64 // its outcomes, its own and excused, cancelled ones aside
	Cancelled      uint64 // searches sent then no longer needed (a hedge's loser, a format asked again), and leases given back
	Refusals       uint64
	Reasons        string
	Cooldown       string
	Format         string
	Tier           string
	Disabled       bool
	Usable         bool
	WhyNot         string // in words: why no search goes to it now
	Last, LastWhen string
	Budget20s      string
	Budget10m      string
	Version        string
	Advice         string // what the operator could do for it
	Spark          sparkline
	Bar            []barSegment
	BarTitle       string
	Quality        qualityCell // what its answers hold (quality.go)
}

// whyWords say each proxy.Why to a person: the one table web words them
// in (a test holds it to proxy.Whys).
var whyWords = map[proxy.Why]string{
	proxy.WhyDisabled:    "not searched: disabled by the operator",
	proxy.WhyLinkToken:   "not searched: its link-token bot check would take searxgate for a bot",
	proxy.WhyCircuitOpen: "not searched now: cooling down after a refusal or failure",
	proxy.WhyTrialOut:    "not searched now: its one trial search is out",
	proxy.WhyInFlight:    "not searched now: as many searches in flight as it may have",
	proxy.WhyBudget:      "not searched now: its politeness budget is spent for now",
}

type sparkline struct {
	Points  string // polyline points, "" when there is nothing to draw
	Max     string // the highest latency drawn
	W, H    int
	Markers []sparkMarker // refusals and failures, drawn as dots
}

type sparkMarker struct {
	X, Y  string
	Class string
}

type barSegment struct {
	X, W  string
	Class string
	Title string
}

func (s *Server) statusPage(ctx *fasthttp.RequestCtx) {
	now := s.cfg.Clock.Now()
	r := s.report(now)
	v := &statusView{Totals: r.Totals, Version: s.cfg.Version, Uptime: ago(now.Sub(s.started)), Now: now.UTC().Format("2006-01-02 15:04:05 UTC"),
		Problem: clean(r.Problem, maxContent), QueueWait: formatMS(r.Totals.QueueWaitMS), Failed: r.Totals.ByOutcome["failed"],
		Replicas: r.Replicas}
	for i := range r.Instances {
		v.Rows = append(v.Rows, rowOf(&r.Instances[i], now))
	}
	ctx.Response.Header.Set("Cache-Control", "no-store")
	s.render(ctx, fasthttp.StatusOK, "status.html", pageData{Title: "Status", Stat: v})
}

func rowOf(is *InstanceStatus, now time.Time) statusRow {
	st := &is.Stats
	r := statusRow{URL: safeURL(st.URL), Host: clean(hostOf(st.URL), maxURLText), Circuit: st.Circuit.String(), Health: st.Health,
		Latency: formatMS(st.LatencyMS), Measured: st.Measured, FailureRate: strconv.FormatFloat(100*st.FailureRate, 'f', 0, 64) + "%",
		Searches: st.Successes + st.Failures + st.Refusals + st.Softs + st.Excused, Cancelled: st.Cancelled, Refusals: st.Refusals, Format: is.Format, Tier: st.Tier.String(),
		Disabled: st.Disabled, Usable: is.Usable, WhyNot: whyWords[is.WhyNot], Version: clean(is.Version, 40), Advice: is.Advice,
		Budget20s: strconv.Itoa(is.BudgetUsed20s) + " / 20 s", Budget10m: strconv.Itoa(is.BudgetUsed10m) + " / 10 min"}
	switch {
	case st.Health >= 70:
		r.HealthClass = "good"
	case st.Health >= 40:
		r.HealthClass = "fair"
	default:
		r.HealthClass = "poor"
	}
	if st.Disabled {
		r.Circuit = "disabled"
	}
	if !st.CooldownUntil.IsZero() && st.CooldownUntil.After(now) {
		r.Cooldown = ago(st.CooldownUntil.Sub(now))
	}
	r.Last = st.LastOutcome
	if st.LastReason != "" {
		r.Last += " (" + clean(string(st.LastReason), 40) + ")"
	}
	if !st.LastUsedAt.IsZero() {
		r.LastWhen = ago(now.Sub(st.LastUsedAt)) + " ago"
	}
	r.HostParts = breakAfter(r.Host, "./")
	r.Reasons = reasonList(is.ByReason)
	r.Spark = sparklineOf(is.RecentMS, is.RecentKinds, 120, 24)
	r.Bar, r.BarTitle = outcomeBar(is.OutcomesByKind, 120)
	r.Quality = qualityOf(st)
	return r
}

// breakAfter cuts s after each of the bytes in seps: the places a long
// host name may break on a narrow table.
func breakAfter(s, seps string) []string {
	var parts []string
	for len(s) > 0 {
		i := strings.IndexAny(s, seps)
		if i < 0 || i == len(s)-1 {
			break
		}
		parts, s = append(parts, s[:i+1]), s[i+1:]
	}
	return append(parts, s)
}

// reasonList writes counts by reason, most frequent first.
func reasonList(m map[string]uint64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if m[a] != m[b] {
			if m[a] > m[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, clean(k, 40)+" "+strconv.FormatUint(m[k], 10))
	}
	return strings.Join(parts, ", ")
}

// sparklineOf draws recent latencies (oldest first) as polyline points in
// a w×h box, the slowest at the top; refusals and failures get a dot.
func sparklineOf(ms []float32, kinds []string, w, h int) sparkline {
	sp := sparkline{W: w, H: h}
	if len(ms) == 0 {
		return sp
	}
	hi := float32(1)
	for _, x := range ms {
		if x > hi && !math.IsInf(float64(x), 0) {
			hi = x
		}
	}
	step := 0.0
	if len(ms) > 1 {
		step = float64(w-2) / float64(len(ms)-1)
	}
	var b strings.Builder
	for i, x := range ms {
		if x < 0 || x != x || math.IsInf(float64(x), 0) {
			x = hi
		}
		px := 1 + step*float64(i)
		py := 1 + float64(h-2)*(1-float64(x/hi))
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.1f,%.1f", px, py)
		if i < len(kinds) && kinds[i] != "ok" && kinds[i] != "cancelled" && kinds[i] != "excused" {
			sp.Markers = append(sp.Markers, sparkMarker{X: fmt.Sprintf("%.1f", px), Y: fmt.Sprintf("%.1f", py), Class: kindClass(kinds[i])})
		}
	}
	if len(ms) == 1 {
		fmt.Fprintf(&b, " %.1f,%.1f", float64(w-1), 1+float64(h-2)*(1-float64(ms[0]/hi)))
	}
	sp.Points = b.String()
	sp.Max = formatMS(float64(hi))
	return sp
}

func kindClass(k string) string {
	switch k {
	case "ok", "soft", "refused", "failed", "cancelled", "excused":
		return k
	}
	return "failed"
}

// outcomeBar splits a w-wide bar by outcome kind.
func outcomeBar(byKind map[string]uint64, w int) ([]barSegment, string) {
	var total uint64
	for _, n := range byKind {
		total += n
	}
	if total == 0 {
		return nil, "no searches yet"
	}
	var segs []barSegment
	var title []string
	x := 0.0
	for _, k := range []string{"ok", "soft", "refused", "failed", "cancelled", "excused"} {
		n := byKind[k]
		if n == 0 {
			continue
		}
		width := float64(w) * float64(n) / float64(total)
		t := fmt.Sprintf("%s %d", k, n)
		segs = append(segs, barSegment{X: fmt.Sprintf("%.2f", x), W: fmt.Sprintf("%.2f", width), Class: k, Title: t})
		title = append(title, t)
		x += width
	}
	return segs, strings.Join(title, ", ")
}

// ago writes a duration as people read it: "12 s", "5 min", "3 h", "2 d".
func ago(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + " s"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + " min"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d.Hours())) + " h"
	}
	return strconv.Itoa(int(d.Hours()/24)) + " d"
}

// marshalStats is GET /api/instances: the pool's stats as they are.
func marshalStats(list []pool.Stats) ([]byte, error) {
	if list == nil {
		list = []pool.Stats{}
	}
	return json.Marshal(list)
}
