package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/sim"
)

// The deadline the fault tests give one search, and the slack they allow on
// top of it: the machine running them may be loaded, and the point is that
// a search never hangs, not its exact timing.
const (
	faultDeadline = 2 * time.Second
	faultSlack    = 2 * time.Second
)

// faultCase is one way an upstream instance misbehaves, and what searxgate
// must make of it.
type faultCase struct {
	name string
	// fault is the misbehaving sim instance (its ID is set to "faulty");
	// unused when setup is given.
	fault sim.InstanceConfig
	// setup starts a faulty instance of the test's own and returns its URL
	// and a check run after the search (nil: none).
	setup func(t *testing.T) (url string, check func(t *testing.T))
	// outcome and reason are what the pool must record for the faulty
	// instance ("failed"/"timeout", "refused"/"bot_challenge", ...).
	outcome, reason string
	// answeredBy is who must answer: "good" (the fault is passed over), or
	// "faulty" (the fault is one searxgate repairs, like invalid UTF-8).
	answeredBy string
	// memory: the fault is a body too large to hold; the test measures the
	// heap around the search, so it does not run in parallel with others.
	memory bool
	// names: the instance URL is a name, resolved by the test's resolver.
	names bool
}

// heapLimit is how far the heap may grow over its baseline while a search
// meets a body too large to hold: well under the 40 MiB and 64 MiB bodies
// the memory cases send, so that reading either whole shows.
const heapLimit = 64 << 20

func TestUpstreamFaults(t *testing.T) {
	cases := []faultCase{
		{name: "refused", fault: sim.InstanceConfig{Behaviour: sim.Dead}, outcome: "failed", reason: "connection_refused"},
		{name: "dns", setup: dnsFailure, outcome: "failed", reason: "dns", names: true},
		{name: "hang", fault: sim.InstanceConfig{Behaviour: sim.Hang, JSON: true}, outcome: "failed", reason: "timeout"},
		{name: "stall-body", fault: sim.InstanceConfig{Behaviour: sim.StallBody, JSON: true}, outcome: "failed", reason: "timeout"},
		{name: "slow-loris", fault: sim.InstanceConfig{Behaviour: sim.SlowLoris, JSON: true}, outcome: "failed", reason: "timeout"},
		{name: "reset-mid-body", fault: sim.InstanceConfig{Behaviour: sim.ResetMidBody, JSON: true}, outcome: "failed", reason: "reset"},
		{name: "huge-body", fault: sim.InstanceConfig{Behaviour: sim.HugeBody, BodySize: 40 << 20, Latency: -1, JSON: true},
			outcome: "failed", reason: "too_large", memory: true},
		{name: "gzip-bomb", fault: sim.InstanceConfig{Behaviour: sim.GzipBomb, BodySize: 64 << 20, Latency: -1, JSON: true},
			outcome: "failed", reason: "too_large", memory: true},
		{name: "invalid-utf8", fault: sim.InstanceConfig{Behaviour: sim.InvalidUTF8, Latency: -1, JSON: true},
			outcome: "ok", reason: "", answeredBy: "faulty"},
		{name: "redirect-loop", fault: sim.InstanceConfig{Behaviour: sim.RedirectLoop, JSON: true}, outcome: "refused", reason: "limiter_redirect"},
		{name: "redirect-other-host", fault: sim.InstanceConfig{Behaviour: sim.RedirectOtherHost, JSON: true},
			outcome: "refused", reason: "limiter_redirect"},
		{name: "challenge-200", fault: sim.InstanceConfig{Behaviour: sim.CloudflareChallenge200, JSON: true},
			outcome: "refused", reason: "bot_challenge"},
		{name: "tls-self-signed", setup: selfSignedTLS, outcome: "failed", reason: "tls"},
	}
	for _, c := range cases {
		if c.answeredBy == "" {
			c.answeredBy = "good"
		}
		t.Run(c.name, func(t *testing.T) {
			if !c.memory {
				// The memory cases run first, one at a time (subtests
				// that do not call Parallel run before those that do), so
				// that no other case's garbage blurs their heap.
				t.Parallel()
			}
			runFault(t, c)
		})
	}
}

// runFault searches once through a fleet of the faulty instance and a good
// one, the faulty one looking fastest in the directory so that it is tried
// first, and checks the answer, the time it took, the verdict the pool
// recorded and, for the memory cases, the heap.
func runFault(t *testing.T, c faultCase) {
	good := sim.InstanceConfig{ID: "good", Behaviour: sim.Fast, Latency: 40 * time.Millisecond, JSON: true}
	instances := []sim.InstanceConfig{good}
	if c.setup == nil {
		f := c.fault
		f.ID = "faulty"
		instances = append(instances, f)
	}
	fleet, _ := startFleet(t, 11, instances)
	goodURL := fleet.Instance("good").URL()
	var faultyURL string
	var check func(*testing.T)
	if c.setup != nil {
		faultyURL, check = c.setup(t)
	} else {
		faultyURL = fleet.Instance("faulty").URL()
	}
	if c.fault.Behaviour == sim.GzipBomb {
		warmBomb(t, faultyURL)
	}
	var searchesBefore uint64
	if c.setup == nil {
		searchesBefore = fleet.Instance("faulty").Truth().Searches
	}
	// The faulty instance claims 10 ms, the good one 1.5 s: the pool tries
	// the faulty one first (its ±10 % jitter cannot swap them).
	dir := writeDirectory(t, dirEntry{faultyURL, 0.01}, dirEntry{goodURL, 1.5})
	resolver := &failResolver{}
	g := startGatewayWith(t, resolver, dir, "", "--deadline", faultDeadline.String(), "--client-rate", "0")

	var mem *heapWatch
	if c.memory {
		mem = watchHeap()
	}
	q := "fault " + strings.ReplaceAll(c.name, "-", " ")
	start := time.Now()
	a := g.get(t, "/search?format=json&q="+strings.ReplaceAll(q, " ", "+"), nil)
	took := time.Since(start)
	// Hedge losers still running (a hanging instance, until the deadline)
	// record their verdict when they end: wait for them.
	wctx, cancel := context.WithTimeout(context.Background(), faultDeadline+10*time.Second)
	defer cancel()
	if err := g.app.proxy.Wait(wctx); err != nil {
		t.Fatalf("upstream attempts still running %v after the search: %v", faultDeadline+10*time.Second, err)
	}
	if mem != nil {
		peak, after := mem.stop()
		t.Logf("heap: peak %d MiB, after GC %d MiB over the baseline", peak>>20, after>>20)
		if peak > heapLimit {
			t.Errorf("the heap grew by %d MiB during the search, limit %d MiB: the body was held whole", peak>>20, heapLimit>>20)
		}
		if after > heapLimit {
			t.Errorf("the heap is %d MiB over its baseline after the search and a GC, limit %d MiB", after>>20, heapLimit>>20)
		}
	}

	if took > faultDeadline+faultSlack {
		t.Errorf("the search took %v, deadline %v", took, faultDeadline)
	}
	want := goodURL
	if c.answeredBy == "faulty" {
		want = faultyURL
	}
	switch {
	case a.status != 200:
		t.Errorf("status %d, want 200 from the %s instance: %s", a.status, c.answeredBy, a.body)
	case a.header.Get("X-Searxgate-Instance") != want:
		t.Errorf("answered by %q, want the %s instance %s", a.header.Get("X-Searxgate-Instance"), c.answeredBy, want)
	case !utf8.Valid(a.body) || !json.Valid(a.body):
		t.Errorf("the answer is not valid UTF-8 JSON: %q", a.body)
	case !onTopic(a.body, q):
		t.Errorf("the answer is not about %q: %s", q, a.body)
	}
	if c.answeredBy == "good" && a.header.Get("X-Searxgate-Attempts") == "1" {
		t.Errorf("answered in one attempt: the faulty instance was not tried first, the test proves nothing")
	}

	if c.names {
		if got := resolver.looked(); len(got) == 0 || slices.ContainsFunc(got, func(h string) bool { return h != "searx.invalid" }) {
			t.Errorf("names looked up: %q, want searx.invalid only", got)
		}
	} else if n := resolver.lookups.Load(); n != 0 {
		t.Errorf("%d names were looked up, where every URL is an address: %q", n, resolver.looked())
	}
	if c.setup == nil && c.fault.Behaviour != sim.Dead {
		if tr := fleet.Instance("faulty").Truth(); tr.Searches == searchesBefore {
			t.Errorf("the faulty instance got no search: the test proves nothing")
		}
	}
	if check != nil {
		check(t)
	}
	// Still serving: nothing panicked, nothing is wedged.
	if h := g.get(t, "/healthz", nil); h.status != 200 {
		t.Errorf("/healthz after the fault: %d %s", h.status, h.body)
	}

	st := g.app.pool.Stats(faultyURL)
	if st.LastOutcome != c.outcome || string(st.LastReason) != c.reason {
		t.Errorf("the faulty instance was recorded %q/%q, want %q/%q (ok %d, soft %d, refused %d, failed %d, cancelled %d)",
			st.LastOutcome, st.LastReason, c.outcome, c.reason,
			st.Successes, st.Softs, st.Refusals, st.Failures, st.Cancelled)
	}

	// What was learned is used: soon the next search goes straight to the
	// good instance. A refusal opens the faulty one's circuit at once; a
	// slow failure makes it rank last; a quick failure opens the circuit
	// when it is the FailStrikes-th in a row, the searches until then
	// still answered (by the good instance).
	if c.answeredBy == "good" {
		straight := false
		for i := 1; i <= pool.DefaultFailStrikes && !straight; i++ {
			st := g.app.pool.Stats(faultyURL)
			before := st.Successes + st.Softs + st.Refusals + st.Failures + st.Cancelled
			q2 := fmt.Sprintf("%s again %d", q, i)
			a2 := g.get(t, "/search?format=json&q="+strings.ReplaceAll(q2, " ", "+"), nil)
			if err := g.app.proxy.Wait(wctx); err != nil {
				t.Fatal(err)
			}
			st2 := g.app.pool.Stats(faultyURL)
			after := st2.Successes + st2.Softs + st2.Refusals + st2.Failures + st2.Cancelled
			if a2.status != 200 || !onTopic(a2.body, q2) || a2.header.Get("X-Searxgate-Instance") != goodURL {
				t.Fatalf("search %d after the fault: %d by %q: %s", i, a2.status, a2.header.Get("X-Searxgate-Instance"), a2.body)
			}
			straight = after == before && a2.header.Get("X-Searxgate-Attempts") == "1"
		}
		if !straight {
			st := g.app.pool.Stats(faultyURL)
			t.Errorf("after %d more searches, each still went to the faulty instance first (circuit %v, %d failures in a row)",
				pool.DefaultFailStrikes, st.Circuit, st.ConsecutiveFailures)
		}
	}
}

// warmBomb asks the gzip bomb once, reading only the headers, so that the
// fleet makes (and keeps) its compressed body before the search: making it
// takes seconds under the race detector, which would turn the bomb into a
// timeout.
func warmBomb(t *testing.T, instance string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, instance+"search?q=warm+up&format=json", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", "searxgate-test")
	req.Header.Set("Accept", "*/*")
	req.Header.Set("Accept-Language", "en")
	// Asked for explicitly, gzip is not undone by the transport: the body
	// is never inflated here.
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("the bomb answered %d without gzip", resp.StatusCode)
	}
}

// dnsFailure is an instance whose name does not resolve: the test's
// resolver refuses every name, so no lookup leaves the machine.
func dnsFailure(t *testing.T) (string, func(*testing.T)) {
	return "http://searx.invalid:8888/", nil
}

// selfSignedTLS is an https instance whose certificate no root vouches for.
// Its check asserts that no request got through the failed handshake.
func selfSignedTLS(t *testing.T) (string, func(*testing.T)) {
	var served atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, "<html><body>no results here</body></html>")
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the failed handshakes
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.URL + "/", func(t *testing.T) {
		if n := served.Load(); n != 0 {
			t.Errorf("%d requests reached the instance whose certificate is self-signed", n)
		}
	}
}

// heapWatch samples the heap while a search runs.
type heapWatch struct {
	base uint64
	peak atomic.Uint64
	done chan struct{}
	wg   sync.WaitGroup
}

func watchHeap() *heapWatch {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	w := &heapWatch{base: ms.HeapAlloc, done: make(chan struct{})}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > w.peak.Load() {
				w.peak.Store(ms.HeapAlloc)
			}
			select {
			case <-w.done:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// stop returns the peak growth over the baseline, and the growth left
// after a GC.
func (w *heapWatch) stop() (peak, after uint64) {
	close(w.done)
	w.wg.Wait()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	over := func(v uint64) uint64 {
		if v < w.base {
			return 0
		}
		return v - w.base
	}
	return over(w.peak.Load()), over(ms.HeapAlloc)
}

// TestUpstreamFaultsAlone: when the only instance misbehaves, the search
// fails with the 503 explanation, within the deadline, naming the instance.
func TestUpstreamFaultsAlone(t *testing.T) {
	cases := []struct {
		b      sim.Behaviour
		reason string
	}{
		{sim.Dead, "connection_refused"},
		{sim.ResetMidBody, "reset"},
		{sim.Hang, "timeout"},
		{sim.StallBody, "timeout"},
	}
	for _, c := range cases {
		t.Run(string(c.b), func(t *testing.T) {
			t.Parallel()
			fleet, _ := startFleet(t, 12, []sim.InstanceConfig{{ID: "faulty", Behaviour: c.b, JSON: true}})
			faultyURL := fleet.Instance("faulty").URL()
			dir := writeDirectory(t, dirEntry{faultyURL, 0.2})
			g := startGatewayWith(t, &failResolver{}, dir, "", "--deadline", faultDeadline.String(), "--client-rate", "0")
			start := time.Now()
			a := g.get(t, "/search?format=json&q=alone", nil)
			took := time.Since(start)
			if took > faultDeadline+faultSlack {
				t.Errorf("the 503 took %v, deadline %v", took, faultDeadline)
			}
			body := decodeNoAnswer(t, a)
			if body.Error == "" || len(body.Tried) != 1 || body.Tried[0].Instance != faultyURL {
				t.Fatalf("the 503 body does not say the faulty instance was tried: %s", a.body)
			}
			if tr := body.Tried[0]; tr.Outcome != "failed" || tr.Reason != c.reason {
				t.Errorf("the 503 body says the attempt ended %q/%q, want failed/%s: %s", tr.Outcome, tr.Reason, c.reason, a.body)
			}
			wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := g.app.proxy.Wait(wctx); err != nil {
				t.Fatal(err)
			}
			if st := g.app.pool.Stats(faultyURL); st.LastOutcome != "failed" || string(st.LastReason) != c.reason {
				t.Errorf("the pool recorded %q/%q, want failed/%s", st.LastOutcome, st.LastReason, c.reason)
			}
			if h := g.get(t, "/healthz", nil); h.status != 200 {
				t.Errorf("/healthz after the fault: %d", h.status)
			}
		})
	}
}

// TestRedirectToAnotherHostIsNotFollowed listens where the redirect points
// (127.0.0.2, the same port): nothing may connect there.
func TestRedirectToAnotherHostIsNotFollowed(t *testing.T) {
	fleet, _ := startFleet(t, 13, []sim.InstanceConfig{
		{ID: "faulty", Behaviour: sim.RedirectOtherHost, JSON: true},
		{ID: "good", Behaviour: sim.Fast, JSON: true},
	})
	faultyURL := fleet.Instance("faulty").URL()
	_, port, _ := net.SplitHostPort(fleet.Instance("faulty").Addr())
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.2", port))
	if err != nil {
		t.Skipf("cannot listen where the redirect points (%v): nothing to watch", err)
	}
	var conns atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })

	dir := writeDirectory(t, dirEntry{faultyURL, 0.01}, dirEntry{fleet.Instance("good").URL(), 1.5})
	g := startGatewayWith(t, &failResolver{}, dir, "", "--deadline", faultDeadline.String(), "--client-rate", "0")
	for i := range 3 {
		if a := g.get(t, fmt.Sprintf("/search?format=json&q=redirect+%d", i), nil); a.status != 200 {
			t.Fatalf("search %d: %d %s", i, a.status, a.body)
		}
	}
	if fleet.Instance("faulty").Truth().Searches == 0 {
		t.Fatal("the redirecting instance got no search: the test proves nothing")
	}
	if n := conns.Load(); n != 0 {
		t.Fatalf("%d connections reached the host the redirect pointed to", n)
	}
}
