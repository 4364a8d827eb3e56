package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/searxgate/searxgate/sim"
)

// TestGreedyClientLeavesOthersTheirShare: behind a trusted proxy, a client
// that sends as many searches as it can at once cannot take the share of
// the client that comes a moment later (3 public instances, 10 searches
// each in 20 s, the default client limit).
func TestGreedyClientLeavesOthersTheirShare(t *testing.T) {
	f, g := healthyFleet(t, 3, sim.Config{}, "--trust-proxy", "127.0.0.1", "--client-rate", "120", "--client-burst", "60")
	as := func(client string, qs []string) []answer {
		out := make([]answer, len(qs))
		var wg sync.WaitGroup
		for i, q := range qs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out[i] = g.get(t, "/search?format=json&q="+url.QueryEscape(q), map[string]string{"X-Forwarded-For": client})
			}()
		}
		wg.Wait()
		return out
	}
	queries := func(prefix string, n int) []string {
		var qs []string
		for i := range n {
			qs = append(qs, fmt.Sprintf("%s %d", prefix, i))
		}
		return qs
	}
	okCount := func(as []answer) (n int) {
		for _, a := range as {
			if a.status == 200 {
				n++
			}
		}
		return n
	}
	greedy := as("203.0.113.7", queries("greedy", 45))
	b := as("198.51.100.9", queries("newcomer", 5))
	if got := okCount(b); got < 4 {
		t.Errorf("the second client got %d of 5 after a greedy one (who got %d of 45), want at least 4", got, okCount(greedy))
	}
	for id, tr := range f.Truth() {
		if tr.Searches > 10 {
			t.Errorf("%s saw %d searches in under 20 s, budget 10", id, tr.Searches)
		}
	}
	for i, a := range greedy {
		if a.status != 200 && (a.status != 503 || a.header.Get("Retry-After") == "") {
			t.Errorf("greedy search %d: %d (Retry-After %q): %s", i, a.status, a.header.Get("Retry-After"), strings.TrimSpace(string(a.body)))
		}
	}
}

// TestGreedyKeyLeavesAnotherKeyItsShare is
// TestGreedyClientLeavesOthersTheirShare through the Tavily door: each
// API key is one client, so a key that sends as many searches as it can
// at once cannot take the share of a key that comes a moment later, and
// the instances' budgets hold (3 public instances, 10 searches each in
// 20 s). A refusal says when to come back.
func TestGreedyKeyLeavesAnotherKeyItsShare(t *testing.T) {
	const greedyKey, modestKey = "greedy-key-0123456789abcdef", "modest-key-0123456789abcdef"
	f, g := healthyFleet(t, 3, sim.Config{}, "--client-rate", "120", "--client-burst", "60", "--api-key", greedyKey, "--api-key", modestKey)
	as := func(key, prefix string, n int) []answer {
		out := make([]answer, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				body := fmt.Sprintf(`{"query": "%s %d", "max_results": 5}`, prefix, i)
				out[i] = g.do(t, "POST", "/tavily/search", strings.NewReader(body),
					map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"})
			})
		}
		wg.Wait()
		return out
	}
	greedy := as(greedyKey, "greedy", 45)
	modest := as(modestKey, "newcomer", 5)
	ok := func(as []answer) (n int) {
		for _, a := range as {
			if a.status == 200 {
				n++
			}
		}
		return n
	}
	t.Logf("the greedy key got %d of 45, the second %d of 5", ok(greedy), ok(modest))
	if got := ok(modest); got < 4 {
		t.Errorf("the second key got %d of 5 after a greedy one (which got %d of 45), want at least 4", got, ok(greedy))
	}
	for id, tr := range f.Truth() {
		if tr.Searches > 10 {
			t.Errorf("%s saw %d searches in under 20 s, budget 10", id, tr.Searches)
		}
	}
	for i, a := range greedy {
		if a.status != 200 && ((a.status != 429 && a.status != 503) || a.header.Get("Retry-After") == "" || !json.Valid(a.body)) {
			t.Errorf("greedy search %d: %d (Retry-After %q): %s", i, a.status, a.header.Get("Retry-After"), strings.TrimSpace(string(a.body)))
		}
	}
}

// TestOwnInstancesOnlyAreNotSlowed: a client alone on a gateway with only
// the operator's own instances is not held to the client limit, which
// guards the public instances' budgets.
func TestOwnInstancesOnlyAreNotSlowed(t *testing.T) {
	_, g := ownFleet(t, sim.InstanceConfig{Behaviour: sim.Fast, Latency: time.Millisecond, JSON: true}, "--client-rate", "120", "--client-burst", "60")
	for i := range 80 {
		q := fmt.Sprintf("sequential %d", i)
		if a := g.get(t, "/search?format=json&q="+url.QueryEscape(q), nil); a.status != 200 {
			t.Fatalf("search %d of 80 on own instances only: %d %s", i, a.status, a.body)
		}
	}
}

// TestFanoutIsPaidFor: each upstream search of a fan-out is charged to
// the client's limit: 20 parallel fanout=3 searches under a limit of 10
// make at most 10 upstream searches, the others answered by fewer
// instances or refused with the client's own 429.
func TestFanoutIsPaidFor(t *testing.T) {
	f, g := healthyFleet(t, 6, sim.Config{}, "--client-rate", "1", "--client-burst", "10", "--max-fanout", "3")
	var wg sync.WaitGroup
	answers := make([]answer, 20)
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = g.get(t, fmt.Sprintf("/search?format=json&fanout=3&q=paid+for+%d", i), nil)
		}()
	}
	wg.Wait()
	if n := searches(f); n > 10 {
		t.Errorf("%d upstream searches for a client limited to 10", n)
	}
	for i, a := range answers {
		if a.status != 200 && a.status != 429 {
			t.Errorf("search %d: %d %s", i, a.status, a.body)
		}
	}
}

// TestSlowInstanceDoesNotHoldFanout: with two fast instances and one that
// answers in 1.6 s, a fanout=3 answer goes out a short grace after the
// first answer, merged from those that came; the slow one is not blamed.
func TestSlowInstanceDoesNotHoldFanout(t *testing.T) {
	cfg := sim.Config{Instances: []sim.InstanceConfig{{ID: "slow", Behaviour: sim.Fast, Latency: 1600 * time.Millisecond, JSON: true}}}
	_, g := healthyFleet(t, 2, cfg)
	for i := range 3 {
		start := time.Now()
		a := g.get(t, fmt.Sprintf("/search?format=json&fanout=3&q=wide+and+quick+%d", i), nil)
		took := time.Since(start)
		if a.status != 200 || took > time.Second {
			t.Errorf("fan-out search %d: %d after %v (fanout %q), want the merge within the grace", i, a.status, took, a.header.Get("X-Searxgate-Fanout"))
		}
	}
	waitQuiet(t, g)
	allClosed(t, g, "after fan-outs with a slow instance")
}

// TestThreeClientsShareTheWindow: behind a trusted proxy, three client
// addresses that each send a burst, one after another, on 3 public
// instances (30 searches in 20 s) each get part of the window (before,
// two took it all: A 20, B 10, C 5 × 503); every refusal is a 503 with a
// Retry-After from the time the client's share frees (within the
// window's 20 s and its bucket).
func TestThreeClientsShareTheWindow(t *testing.T) {
	f, g := healthyFleet(t, 3, sim.Config{}, "--trust-proxy", "127.0.0.1", "--client-rate", "120", "--client-burst", "60")
	burst := func(client string, n int) (ok int) {
		out := make([]answer, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				q := url.QueryEscape(fmt.Sprintf("%s burst %d", client, i))
				out[i] = g.get(t, "/search?format=json&q="+q, map[string]string{"X-Forwarded-For": client})
			})
		}
		wg.Wait()
		for i, a := range out {
			if a.status == 200 {
				ok++
				continue
			}
			ra, err := strconv.Atoi(a.header.Get("Retry-After"))
			if a.status != 503 || err != nil || ra < 1 || ra > 22 || !json.Valid(a.body) {
				t.Errorf("%s's search %d: %d, Retry-After %q: %s; want 200, or 503 in JSON with the share's end", client, i, a.status, a.header.Get("Retry-After"), a.body)
			}
		}
		return ok
	}
	a := burst("203.0.113.7", 25)
	b := burst("198.51.100.9", 10)
	c := burst("192.0.2.33", 5)
	t.Logf("A, B, C answered %d, %d, %d", a, b, c)
	// By the rule: A 20 (all but a seat of a third), B 5 (a seat of 5
	// kept for a third client), C 2 (a seat of 3 kept). Concurrent
	// searches of one client may pass its check together: A may get a
	// little more, and B a little less.
	if a > 22 || b < 3 || c < 2 || a+b+c > 30 {
		t.Errorf("A, B, C answered %d, %d, %d; want about 20, 5, 2 (A at most 22, B at least 3, C at least 2)", a, b, c)
	}
	for id, tr := range f.Truth() {
		if tr.Searches > 10 {
			t.Errorf("%s saw %d searches in under 20 s, budget 10", id, tr.Searches)
		}
	}
}

// TestAutocompleteLeavesAnotherClientSuggestions: of three public
// instances one suggests (2 in 20 s); a greedy client's suggestions leave
// another client one (before: B got [] ×3 after A's two).
func TestAutocompleteLeavesAnotherClientSuggestions(t *testing.T) {
	cfg := sim.Config{Instances: []sim.InstanceConfig{{ID: "suggests", Behaviour: sim.Fast, Latency: 20 * time.Millisecond, JSON: true, Autocomplete: "duckduckgo"}}}
	_, g := healthyFleet(t, 2, cfg, "--trust-proxy", "127.0.0.1")
	// The instances' terms are read at start: /config then names the
	// backend.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(string(g.get(t, "/config", nil).body), `"autocomplete":"duckduckgo"`); {
		if time.Now().After(deadline) {
			t.Fatal("the suggesting instance's terms were not read within 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	suggested := func(client string, qs ...string) (n int) {
		for _, q := range qs {
			a := g.get(t, "/autocompleter?q="+q, map[string]string{"X-Forwarded-For": client})
			var v []json.RawMessage
			var list []string
			if a.status != 200 || json.Unmarshal(a.body, &v) != nil || len(v) != 2 || json.Unmarshal(v[1], &list) != nil {
				t.Fatalf("%s /autocompleter?q=%s: %d %s", client, q, a.status, a.body)
			}
			if len(list) > 0 {
				n++
			}
		}
		return n
	}
	if got := suggested("203.0.113.7", "aa", "ab", "ac"); got != 1 {
		t.Errorf("the greedy client got suggestions %d times of 3, want 1 (a seat kept)", got)
	}
	if got := suggested("198.51.100.9", "ba", "bb", "bc"); got < 1 {
		t.Errorf("the second client got no suggestion beside a greedy one")
	}
}
