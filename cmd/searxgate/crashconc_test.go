package main

import (
	"fmt"
	"github.com/searxgate/searxgate/proxy"
	"io"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/searxgate/searxgate/sim"
)

// ownCrashFleet starts n own instances and a gateway with only them.
func ownCrashFleet(t *testing.T, n int, flags ...string) (*sim.Fleet, *gateway) {
	t.Helper()
	var ics []sim.InstanceConfig
	args := []string{"--client-rate", "0"}
	for i := range n {
		ics = append(ics, sim.InstanceConfig{ID: fmt.Sprintf("own-%d", i), Behaviour: sim.Fast, Latency: 20 * time.Millisecond, JSON: true})
	}
	f, _ := startFleet(t, 5, ics)
	for i := range n {
		args = append(args, "--instance", f.Instance(fmt.Sprintf("own-%d", i)).URL())
	}
	return f, startGateway(t, "none", "", append(args, flags...)...)
}

// TestConcurrentCrashQueriesOpenNoCircuit: 40 distinct queries that crash
// SearXNG, 8 at a time, on 3 own instances: a lone 5xx whose second
// opinion found no free slot is never its instance's, and no circuit
// opens.
func TestConcurrentCrashQueriesOpenNoCircuit(t *testing.T) {
	_, g := ownCrashFleet(t, 3)
	for i, s := range concurrently(g, 40, 8, sim.ServerErrorPrefix+" crash %d") {
		if s != 503 {
			t.Errorf("crash query %d: %d, want 503", i, s)
		}
	}
	waitQuiet(t, g)
	allClosed(t, g, "after 40 crash queries 8 at a time")
	if a := g.get(t, "/search?format=json&q=ordinary+after", nil); a.status != 200 {
		t.Fatalf("an ordinary search after them: %d %s", a.status, a.body)
	}
}

// TestConcurrentOffTopicQueriesOpenNoCircuit: the same for honest
// off-topic queries (each instance answers its own results).
func TestConcurrentOffTopicQueriesOpenNoCircuit(t *testing.T) {
	_, g := ownCrashFleet(t, 3)
	for i, s := range concurrently(g, 40, 8, sim.OffTopicQueryPrefix+" concurrent %d") {
		if s != 200 && s != 503 {
			t.Errorf("off-topic query %d: %d, want an answer or a refusal", i, s)
		}
	}
	waitQuiet(t, g)
	allClosed(t, g, "after 40 off-topic queries 8 at a time")
}

// concurrently sends n distinct JSON searches (format with %d), at most
// at a time, and returns their statuses.
func concurrently(g *gateway, n, at int, format string) []int {
	var wg sync.WaitGroup
	next := make(chan int)
	statuses := make([]int, n)
	for range at {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				a := g.getNoFail(fmt.Sprintf("/search?format=json&q=%s", url.QueryEscape(fmt.Sprintf(format, i))))
				statuses[i] = a
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return statuses
}

// getNoFail is g.get for other goroutines than the test's: the status,
// 0 when the request failed.
func (g *gateway) getNoFail(path string) int {
	resp, err := loopbackClient.Get("http://" + g.addr + path)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// TestExtrasStayWithinTheClientRate: one client whose every search fails
// on the instance asked, so that each one's retries are extras: its
// upstream searches stay within its --client-rate and --client-burst plus
// the stated extra share (proxy.DefaultExtraRatio of a minute's rate),
// retries included.
func TestExtrasStayWithinTheClientRate(t *testing.T) {
	var ics []sim.InstanceConfig
	for i := range 15 {
		ics = append(ics, sim.InstanceConfig{ID: fmt.Sprintf("broken-%d", i), Behaviour: sim.BrokenJSON, Latency: 5 * time.Millisecond, JSON: true})
	}
	f, dir := startFleet(t, 7, ics)
	g := startGateway(t, dir, "", "--client-rate", "30", "--client-burst", "3", "--max-attempts", "6")
	start := time.Now()
	for i := range 20 {
		if a := g.get(t, fmt.Sprintf("/search?format=json&q=extras+%d", i), nil); a.status == 200 {
			t.Fatalf("search %d answered by a broken fleet: %s", i, a.body)
		}
	}
	waitQuiet(t, g)
	elapsed := time.Since(start)
	bound := 3 + int(proxy.DefaultExtraRatio*30) + int(elapsed.Seconds()*30/60) + 1
	n := int(searches(f))
	t.Logf("%d upstream searches for 20 client searches in %s (bound %d)", n, elapsed, bound)
	if n > bound || n < 3 {
		t.Errorf("%d upstream searches in %s, want at least the burst of 3 and at most %d (burst 3, 0.2 × 30 borrowed, 30/min)", n, elapsed, bound)
	}
}
