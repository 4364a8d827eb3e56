package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/searxgate/searxgate/internal/clock"
	"github.com/searxgate/searxgate/sim"
)

// stormSearch is one search of TestEngineErrorStormLeavesOthersAnswered
// and what its client got.
type stormSearch struct {
	client, q string
	status    int
	attempts  string // X-Searxgate-Attempts
	body      []byte
	err       error
}

// stormClients are the two clients of the storm tests, as the trusted
// proxy names them.
const (
	stormA = "203.0.113.7"
	calmB  = "198.51.100.9"
)

// stormResult is what a storm run saw.
type stormResult struct {
	searches []*stormSearch
	perRound []map[string]uint64 // upstream searches by instance, by round
	seen     map[string]uint64   // upstream searches by instance, in all
	g        *gateway
}

// engineErrorStorm runs the storm on 3 public instances, searxgate given
// flags besides its defaults: client A sends 60 queries whose engines
// fail on every instance (each asks for a second opinion: two upstream
// searches) while client B sends 40 of its own, interleaved over 80 s in
// 40 rounds 2 s apart. Every fourth of B's finds nothing, honestly: an
// answer that gets a second opinion from another instance too.
//
// The clock is the test's. It stands still while a round of searches is
// answered, then moves on 2 s. Rounds fall on odd seconds: a politeness
// window frees half a second after one (its margin), a fair-share bucket
// on an even second, so with a deadline of 400 ms no search ever waits
// for time that does not pass: a slot is free in its round or refused.
func engineErrorStorm(t *testing.T, flags ...string) stormResult {
	t.Helper()
	const (
		rounds = 40
		step   = 2 * time.Second
	)
	clk := clock.NewFake(time.Now())
	fc := sim.Config{Seed: 31, Now: clk.Now}
	for i := range 3 {
		fc.Instances = append(fc.Instances, sim.InstanceConfig{ID: fmt.Sprintf("ok-%d", i), Behaviour: sim.Fast, Latency: 5 * time.Millisecond, JSON: true})
	}
	fleet, dir := startFleetConfig(t, fc)
	args := append([]string{"--listen", "127.0.0.1:0", "--data", t.TempDir(), "--allow-private", "--directory", dir,
		"--trust-proxy", "127.0.0.1", "--client-rate", "120", "--client-burst", "60", "--deadline", "400ms"}, flags...)
	g := startGatewayOn(t, clk, args...)

	search := func(s *stormSearch) {
		req, err := http.NewRequest(http.MethodGet, "http://"+g.addr+"/search?format=json&q="+url.QueryEscape(s.q), nil)
		if err != nil {
			s.err = err
			return
		}
		req.Header.Set("X-Forwarded-For", s.client)
		resp, err := loopbackClient.Do(req)
		if err != nil {
			s.err = err
			return
		}
		defer resp.Body.Close()
		s.body, s.err = io.ReadAll(resp.Body)
		s.status, s.attempts = resp.StatusCode, resp.Header.Get("X-Searxgate-Attempts")
	}

	res := stormResult{seen: map[string]uint64{}, g: g}
	na := 0
	clk.Advance(time.Second)
	for r := range rounds {
		// Round r: one or two of A's searches and B's r-th, sent at once.
		batch := []*stormSearch{{client: stormA, q: fmt.Sprintf("%s storm %d", sim.EngineErrorPrefix, na)}}
		na++
		qb := fmt.Sprintf("calm words %d", r)
		if r%4 == 3 {
			qb = fmt.Sprintf("%s calm %d", sim.NoResultsPrefix, r)
		}
		batch = append(batch, &stormSearch{client: calmB, q: qb})
		if r%2 == 1 {
			batch = append(batch, &stormSearch{client: stormA, q: fmt.Sprintf("%s storm %d", sim.EngineErrorPrefix, na)})
			na++
		}
		var wg sync.WaitGroup
		for _, s := range batch {
			wg.Add(1)
			go func() { defer wg.Done(); search(s) }()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			// A guard, not a measure: a search waits for the clock,
			// which stands still within a round.
			t.Fatalf("round %d: searches unanswered after 30 s (%d waiting; timers in %v): one waits for time to pass",
				r, g.app.proxy.Metrics().QueueDepth(), clk.Pending())
		}
		res.searches = append(res.searches, batch...)
		got := map[string]uint64{}
		for _, in := range fleet.Instances() {
			n := in.Truth().Searches
			got[in.ID()] = n - res.seen[in.ID()]
			res.seen[in.ID()] = n
		}
		res.perRound = append(res.perRound, got)
		clk.Advance(step)
	}
	if na != 60 {
		t.Fatalf("A sent %d searches, want 60", na)
	}
	for _, s := range res.searches {
		if s.err != nil {
			t.Fatalf("%s %q: %v", s.client, s.q, s.err)
		}
	}
	return res
}

// withinBudget fails the test when an instance got more than max20
// searches in any 10 rounds (they lie within 20 s) or more than max10m in
// all (80 s, within one 10-minute window): fleet truth.
func (r stormResult) withinBudget(t *testing.T, max20, max10m uint64) {
	t.Helper()
	for id, total := range r.seen {
		for k := range r.perRound {
			var n uint64
			for _, round := range r.perRound[k:min(k+10, len(r.perRound))] {
				n += round[id]
			}
			if n > max20 {
				t.Errorf("%s got %d searches in the 20 s from round %d, budget %d", id, n, k, max20)
			}
		}
		if total > max10m {
			t.Errorf("%s got %d searches in 80 s, budget %d in 10 min", id, total, max10m)
		}
	}
}

// stormBody is the part of a JSON answer or refusal the storm tests read.
type stormBody struct {
	Error        string     `json:"error"`
	Results      []any      `json:"results"`
	Unresponsive [][]string `json:"unresponsive_engines"`
}

// tally checks every answer of the storm for what it must be and counts
// them: B's answered (on topic, or honestly nothing found), B's
// nothing-found ones and how many of those had a second opinion, A's
// answered (with its engines' errors) and A's refusals by their words.
func (r stormResult) tally(t *testing.T) (okB, emptyB, confirmedB, okA int, refusedA map[string]int) {
	t.Helper()
	refusedA = map[string]int{}
	for _, s := range r.searches {
		var body stormBody
		if err := json.Unmarshal(s.body, &body); err != nil {
			t.Fatalf("%s %q: %d, not JSON: %v: %s", s.client, s.q, s.status, err, s.body)
		}
		switch {
		case s.client == calmB && s.status != 200:
			t.Logf("B's %q: %d %s", s.q, s.status, body.Error)
			if strings.Contains(body.Error, "retries and second opinions") {
				t.Errorf("B's %q was refused for the extra budget, which A's storm spent: %d %s", s.q, s.status, body.Error)
			}
		case s.client == calmB && strings.HasPrefix(s.q, sim.NoResultsPrefix):
			if len(body.Results) != 0 || len(body.Unresponsive) != 0 {
				t.Errorf("B's %q: want nothing found, honestly: %s", s.q, s.body)
				continue
			}
			okB++
			emptyB++
			if s.attempts == "2" {
				confirmedB++
			}
		case s.client == calmB:
			if !onTopic(s.body, s.q) {
				t.Errorf("B's %q: answered off topic: %s", s.q, s.body)
				continue
			}
			okB++
		case s.status == 200:
			if len(body.Unresponsive) == 0 {
				t.Errorf("A's %q: 200 without the engines' errors: %s", s.q, s.body)
			}
			okA++
		default:
			refusedA[fmt.Sprintf("%d %s", s.status, strings.SplitN(body.Error, ";", 2)[0])]++
		}
	}
	t.Logf("B: %d of 40 answered, %d of %d nothing-found after a second opinion; A: %d of 60 answered, refused %v; upstream %v",
		okB, confirmedB, emptyB, okA, refusedA, r.seen)
	return okB, emptyB, confirmedB, okA, refusedA
}

// TestEngineErrorStormLeavesOthersAnswered: at the default budgets and
// client limit, B gets at least 38 of its 40 searches answered beside
// A's engine-error storm, and is never refused for the budget of retries
// and second opinions; what A is refused names A's own share; no
// instance gets more than its budget; none is blamed.
func TestEngineErrorStormLeavesOthersAnswered(t *testing.T) {
	r := engineErrorStorm(t)
	r.withinBudget(t, 10, 100)
	okB, _, _, _, refusedA := r.tally(t)
	if okB < 38 {
		t.Errorf("B got %d of 40 answered beside A's engine-error storm, want at least 38", okB)
	}
	for words, n := range refusedA {
		if !strings.Contains(words, "your share") {
			t.Errorf("A was refused %d times with %q; want A's own share named", n, words)
		}
	}
	allClosed(t, r.g, "after the engine-error storm")
}

// TestEngineErrorStormLeavesOthersTheirExtras: with room enough in the
// instances' windows (20 in 20 s, so that a second opinion always finds
// an instance with room: the budget for extras is all that can refuse
// it), A's storm spends only A's own part of the extras: each of B's
// nothing-found answers still gets its second opinion. With one budget
// for the whole gateway A's second opinions take it all.
func TestEngineErrorStormLeavesOthersTheirExtras(t *testing.T) {
	r := engineErrorStorm(t, "--budget-20s", "20", "--budget-10m", "200")
	r.withinBudget(t, 20, 200)
	okB, emptyB, confirmedB, okA, refusedA := r.tally(t)
	if okB != 40 || okA != 60 || len(refusedA) != 0 {
		t.Errorf("B got %d of 40 answered, A %d of 60 (refused %v); with room in every window, want all", okB, okA, refusedA)
	}
	if emptyB != 10 || confirmedB != emptyB {
		t.Errorf("%d of B's %d nothing-found answers had a second opinion: A's storm spent B's part of the extra budget", confirmedB, emptyB)
	}
	allClosed(t, r.g, "after the engine-error storm")
}
