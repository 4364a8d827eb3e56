package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/searxgate/searxgate/sim"
)

// These run the real binary, as a self-hoster or an agent would, on a sim
// fleet on 127.0.0.1.

// ownInstance starts one healthy sim instance and searxgate with it as
// the operator's own, no public list, every other setting its default.
func ownInstance(t *testing.T) (*sim.Fleet, *proc) {
	t.Helper()
	fleet, _ := startFleet(t, 31, []sim.InstanceConfig{{ID: "home", Behaviour: sim.Fast, Latency: 20 * time.Millisecond, JSON: true}})
	p := startProc(t, "serve", "--listen", "127.0.0.1:0", "--allow-private", "--data", t.TempDir(),
		"--directory", "none", "--instance", fleet.Instance("home").URL())
	return fleet, p
}

// TestOwnInstanceSequential: the operator's own instance is not held to
// the public budget (10 in 20 s): 60 searches in a row are all answered.
func TestOwnInstanceSequential(t *testing.T) {
	t.Parallel() // it waits on real time: see parallelWaits
	fleet, p := ownInstance(t)
	for i := range 60 {
		p.mustSearch(t, fmt.Sprintf("home search %d", i))
	}
	if got := fleet.Instance("home").Truth().Searches; got != 60 {
		t.Fatalf("the own instance got %d searches, want 60", got)
	}
}

// TestOwnInstanceParallelAndNothingFound: 16 searches at once are all
// answered within the deadline (they wait for a slot, they are not
// refused); searches that find nothing are answered as SearXNG answers
// them and leave the instance usable.
func TestOwnInstanceParallelAndNothingFound(t *testing.T) {
	t.Parallel() // it waits on real time: see parallelWaits
	fleet, p := ownInstance(t)
	var wg sync.WaitGroup
	answers := make([]answer, 16)
	errs := make([]error, 16)
	elapsed := make([]time.Duration, 16)
	for i := range 16 {
		wg.Go(func() {
			start := time.Now()
			answers[i], errs[i] = p.search(fmt.Sprintf("parallel %d", i))
			elapsed[i] = time.Since(start)
		})
	}
	wg.Wait()
	for i := range 16 {
		if errs[i] != nil || answers[i].status != 200 {
			t.Fatalf("parallel search %d: %v %d %s", i, errs[i], answers[i].status, answers[i].body)
		}
		// Room for a loaded machine; a search that waited for a window
		// (20 s) instead of the deadline is still caught.
		if elapsed[i] > 4*time.Second+2*time.Second {
			t.Errorf("parallel search %d took %v, past the 4 s deadline", i, elapsed[i])
		}
	}
	for i := range 4 {
		a, err := p.search(fmt.Sprintf("%s xq%dzz", sim.NoResultsPrefix, i))
		if err != nil || a.status != 200 {
			t.Fatalf("nothing-found search %d: %v %d %s", i, err, a.status, a.body)
		}
		var body struct {
			Results             []any `json:"results"`
			UnresponsiveEngines []any `json:"unresponsive_engines"`
		}
		if err := json.Unmarshal(a.body, &body); err != nil || body.Results == nil || len(body.Results) != 0 {
			t.Fatalf("nothing-found search %d: %s", i, a.body)
		}
	}
	p.mustSearch(t, "a normal search after them")
	if n := fleet.Instance("home").Truth().NoResults; n != 4 {
		t.Fatalf("the instance answered %d nothing-found searches, want 4 (one each: no confirmation without another instance)", n)
	}
}

// TestPublicBudgetRefusesFastAndHonestly: three public instances, 40
// searches at once from one client. No instance gets more than its 10
// searches in 20 s; what fits the client's share is answered (two thirds
// of the windows: a third is kept for whoever comes next); the rest are
// refused within 3 s (before the 4 s deadline: at once, not after waiting
// for it), with a Retry-After from the real time its share
// frees (the reserve's release, 15 s in, or the windows' end).
func TestPublicBudgetRefusesFastAndHonestly(t *testing.T) {
	var cfgs []sim.InstanceConfig
	for i := range 3 {
		cfgs = append(cfgs, sim.InstanceConfig{ID: "pub" + strconv.Itoa(i), Behaviour: sim.Fast, Latency: 30 * time.Millisecond, JSON: true})
	}
	fleet, dir := startFleet(t, 32, cfgs)
	p := startProc(t, "serve", "--listen", "127.0.0.1:0", "--allow-private", "--data", t.TempDir(), "--directory", dir)
	start := time.Now()
	var wg sync.WaitGroup
	answers := make([]answer, 40)
	errs := make([]error, 40)
	elapsed := make([]time.Duration, 40)
	for i := range 40 {
		wg.Go(func() {
			t0 := time.Now()
			answers[i], errs[i] = p.search(fmt.Sprintf("budget %d", i))
			elapsed[i] = time.Since(t0)
		})
	}
	wg.Wait()
	window := time.Since(start)
	if window > 20*time.Second {
		t.Fatalf("the 40 searches took %v: the 20 s window check below proves nothing", window)
	}
	ok, refused := 0, 0
	for i, a := range answers {
		if errs[i] != nil {
			t.Fatalf("search %d: %v", i, errs[i])
		}
		switch a.status {
		case 200:
			ok++
		case 503:
			refused++
			if elapsed[i] > 3*time.Second {
				t.Errorf("search %d refused after %v, want under 3 s (before the 4 s deadline)", i, elapsed[i])
			}
			// The windows filled within the first second or two: the
			// first frees about 20 s after it started.
			ra, err := strconv.Atoi(a.header.Get("Retry-After"))
			if err != nil || ra < 15 || ra > 21 { // 20 s and the budget's half-second margin, rounded up
				t.Errorf("search %d: Retry-After %q, want the window's real end (15 to 21 s)", i, a.header.Get("Retry-After"))
			}
		default:
			t.Errorf("search %d: status %d %s", i, a.status, a.body)
		}
	}
	total := uint64(0)
	for i := range 3 {
		n := fleet.Instance("pub" + strconv.Itoa(i)).Truth().Searches
		if n > 10 {
			t.Errorf("pub%d got %d searches within %v, over its 10 in 20 s", i, n, window)
		}
		total += n
	}
	if ok != int(total) || ok < 18 || ok > 22 {
		t.Fatalf("%d answered, %d refused, %d upstream searches; want every search that fits a lone client's share (two thirds of 30) answered", ok, refused, total)
	}
}

// TestFanoutThroughTheGateway: fanout=3 asks three instances, merges their
// answers and says so; the status page counts it.
func TestFanoutThroughTheGateway(t *testing.T) {
	var cfgs []sim.InstanceConfig
	for i := range 3 {
		cfgs = append(cfgs, sim.InstanceConfig{ID: "f" + strconv.Itoa(i), Behaviour: sim.Fast, Latency: 10 * time.Millisecond, JSON: true})
	}
	fleet, dir := startFleet(t, 33, cfgs)
	g := startGateway(t, dir, "")
	a := g.get(t, "/search?format=json&q=wide+search&fanout=3", nil)
	if a.status != 200 {
		t.Fatalf("status %d: %s", a.status, a.body)
	}
	if f := a.header.Get("X-Searxgate-Fanout"); f != "3/3" {
		t.Fatalf("X-Searxgate-Fanout %q, want 3/3", f)
	}
	if insts := a.header.Get("X-Searxgate-Instance"); strings.Count(insts, ",") != 2 {
		t.Fatalf("X-Searxgate-Instance %q, want the three that answered", insts)
	}
	var body struct {
		Results []struct{ URL string } `json:"results"`
	}
	if err := json.Unmarshal(a.body, &body); err != nil || len(body.Results) < 20 {
		t.Fatalf("%d merged results (%v), want the three answers' together", len(body.Results), err)
	}
	for i := range 3 {
		if n := fleet.Instance("f" + strconv.Itoa(i)).Truth().Searches; n != 1 {
			t.Fatalf("f%d got %d searches, want 1", i, n)
		}
	}
	var st struct {
		Totals struct {
			Fanout uint64 `json:"fanout_searches"`
		} `json:"totals"`
	}
	s := g.get(t, "/status.json", nil)
	if err := json.Unmarshal(s.body, &st); err != nil || st.Totals.Fanout != 1 {
		t.Fatalf("status counts %d fan-out searches (%v), want 1", st.Totals.Fanout, err)
	}
	if bad := g.get(t, "/search?format=json&q=x&fanout=many", nil); bad.status != 400 {
		t.Fatalf("fanout=many: %d, want 400", bad.status)
	}
}
