package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/searxgate/searxgate/sim"
)

// countersSeen is what the three faces say of the instances' counters.
type countersSeen struct {
	pool     uint64 // /status.json: the pool's outcomes, cancelled included
	byKind   uint64 // /status.json: the outcomes searxgate counted by kind
	metrics  uint64 // /metrics: searxgate_upstream_searches_total summed
	page     uint64 // /status: the Searches column, cancelled included
	anyTrace bool   // /status.json: a reason or a recent latency left
}

var (
	upstreamLine = regexp.MustCompile(`(?m)^searxgate_upstream_searches_total\{[^}]*\} ([0-9]+)$`)
	pageCell     = regexp.MustCompile(`<td class="num">([0-9]+)(?:<br><small class="muted"[^>]*>\+([0-9]+) cancelled</small>)?</td>\s*<td class="num">[0-9]+</td>\s*<td>(?:json|html)`)
)

func seeCounters(t *testing.T, g *gateway) countersSeen {
	t.Helper()
	var c countersSeen
	var st struct {
		Instances []struct {
			Successes, Failures, Refusals, Softs, Cancelled, Excused uint64
			OutcomesByKind                                           map[string]uint64 `json:"outcomes_by_kind"`
			ByReason                                                 map[string]uint64 `json:"outcomes_by_reason"`
			RecentMS                                                 []float32         `json:"recent_ms"`
		} `json:"instances"`
	}
	if a := g.get(t, "/status.json", nil); a.status != 200 || json.Unmarshal(a.body, &st) != nil {
		t.Fatalf("/status.json: %d %s", a.status, a.body)
	}
	for _, in := range st.Instances {
		c.pool += in.Successes + in.Failures + in.Refusals + in.Softs + in.Cancelled + in.Excused
		for _, n := range in.OutcomesByKind {
			c.byKind += n
		}
		c.anyTrace = c.anyTrace || len(in.ByReason) > 0 || len(in.RecentMS) > 0
	}
	for _, m := range upstreamLine.FindAllStringSubmatch(string(g.get(t, "/metrics", nil).body), -1) {
		n, _ := strconv.ParseUint(m[1], 10, 64)
		c.metrics += n
	}
	page := string(g.get(t, "/status", nil).body)
	cells := pageCell.FindAllStringSubmatch(page, -1)
	if len(cells) != len(st.Instances) {
		t.Fatalf("/status shows %d Searches cells for %d instances", len(cells), len(st.Instances))
	}
	for _, m := range cells {
		n, _ := strconv.ParseUint(m[1], 10, 64)
		k, _ := strconv.ParseUint(m[2]+"0", 10, 64)
		c.page += n + k/10
	}
	return c
}

// TestPoolResetClearsEveryCounter: /status, /status.json and /metrics
// count the same upstream searches (the page shows the cancelled ones
// the budget counts); a pool reset clears every counter of them, and
// after it they agree again.
func TestPoolResetClearsEveryCounter(t *testing.T) {
	t.Parallel() // it waits on real time: see parallelWaits
	const token = "reset-token-0123456789"
	f, dir := startFleet(t, 41, []sim.InstanceConfig{
		{ID: "fast", Behaviour: sim.Fast, Latency: 5 * time.Millisecond, JSON: true},
		{ID: "refuser", Behaviour: sim.RateLimitSeconds, RateBurst: 2, Latency: -1, JSON: true},
		{ID: "slow", Behaviour: sim.Slow, Latency: 1500 * time.Millisecond, JSON: true},
	})
	g := startGateway(t, dir, "", "--admin-token", token, "--client-rate", "0")
	for i := range 12 {
		g.get(t, fmt.Sprintf("/search?format=json&q=counted+%d", i), nil)
	}
	waitQuiet(t, g)
	before := seeCounters(t, g)
	if before.pool == 0 || before.page != before.pool || before.metrics != before.byKind || before.byKind == 0 {
		t.Fatalf("before the reset the faces disagree: %+v (fleet saw %d searches)", before, searches(f))
	}
	a := g.do(t, "POST", "/api/pool/reset", nil, map[string]string{"Authorization": "Bearer " + token})
	if a.status != 200 {
		t.Fatalf("reset: %d %s", a.status, a.body)
	}
	if after := seeCounters(t, g); after != (countersSeen{}) {
		t.Fatalf("after the reset: %+v, want every counter 0", after)
	}
	for i := range 4 {
		g.get(t, fmt.Sprintf("/search?format=json&q=again+%d", i), nil)
	}
	waitQuiet(t, g)
	again := seeCounters(t, g)
	if again.pool == 0 || again.page != again.pool || again.metrics != again.byKind || again.pool > before.pool {
		t.Errorf("after the reset and 4 searches the faces disagree or count from before: %+v", again)
	}
	t.Logf("before %+v, after 4 more %+v", before, again)
}
