package pool

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/searxgate/searxgate/internal/clock"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// newClock is a fake clock at t0, moved by hand.
func newClock() *clock.Fake { return clock.NewFake(t0) }

// events records every event, in order. Safe for concurrent use.
type events struct {
	mu  sync.Mutex // guards all
	all []Event
}

func (e *events) add(ev Event) {
	e.mu.Lock()
	e.all = append(e.all, ev)
	e.mu.Unlock()
}

func (e *events) take() []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.all
	e.all = nil
	return out
}

// fixture is a pool on a fake clock with a seeded random source and an
// event log.
type fixture struct {
	*Pool
	clock *clock.Fake
	ev    *events
}

func newFixture(t testing.TB, cfg Config) *fixture {
	t.Helper()
	f := &fixture{clock: newClock(), ev: &events{}}
	cfg.Clock = f.clock
	if cfg.Rand == nil {
		cfg.Rand = rand.New(rand.NewPCG(1, 2))
	}
	cfg.OnEvent = f.ev.add
	f.Pool = New(cfg)
	return f
}

// one checks out exactly one lease, failing the test when none comes.
func (f *fixture) one(t testing.TB) *Lease {
	t.Helper()
	ls, err := f.Checkout(context.Background(), 1, nil)
	if err != nil {
		t.Fatalf("Checkout: %v", err)
	}
	if len(ls) != 1 {
		t.Fatalf("Checkout gave %d leases, want 1", len(ls))
	}
	return ls[0]
}

// lease checks out one lease on url (skipping the others).
func (f *fixture) lease(t testing.TB, url string) *Lease {
	t.Helper()
	ls, err := f.Checkout(context.Background(), 1, func(u string) bool { return u != url })
	if err != nil {
		t.Fatalf("Checkout %s: %v", url, err)
	}
	return ls[0]
}

// record checks out url and records o after elapsed.
func (f *fixture) record(t testing.TB, url string, o Outcome, elapsed time.Duration) {
	t.Helper()
	f.Record(f.lease(t, url), o, elapsed)
}

func (f *fixture) circuit(url string) Circuit { return f.Stats(url).Circuit }

var (
	okO      = Outcome{Kind: OK, Hits: 10}
	softO    = Outcome{Kind: Soft, Reason: "empty"}
	refusedO = Outcome{Kind: Refused, Reason: "rate_limited"}
	failedO  = Outcome{Kind: Failed, Reason: "timeout"}
	cancelO  = Outcome{Kind: Cancelled}

	// Outcomes that belong to someone other than the instance.
	queryFailedO    = Outcome{Kind: Failed, Owner: OwnerQuery, Reason: "timeout"}
	querySoftO      = Outcome{Kind: Soft, Owner: OwnerQuery, Reason: "engines_down"}
	gatewayTimeoutO = Outcome{Kind: Failed, Owner: OwnerGateway, Reason: "timeout"}
	clientRefusedO  = Outcome{Kind: Refused, Owner: OwnerClient, Reason: "client_error"}
)

// validate checks the pool's internal invariants under its lock.
func (p *Pool) validate() error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if len(p.list) != len(p.slots) || len(p.list) != len(p.byURL) {
		return fmt.Errorf("sizes: list %d slots %d map %d", len(p.list), len(p.slots), len(p.byURL))
	}
	for i, in := range p.list {
		s := &p.slots[i]
		switch {
		case in.idx != i:
			return fmt.Errorf("%s: idx %d at %d", in.url, in.idx, i)
		case p.byURL[in.url] != in:
			return fmt.Errorf("%s: map points elsewhere", in.url)
		case s.seq != in.seq || s.own != (in.tier == Own):
			return fmt.Errorf("%s: slot out of sync", in.url)
		case s.inFlight < 0:
			return fmt.Errorf("%s: in_flight %d", in.url, s.inFlight)
		case s.trialOut && s.circuit != HalfOpen:
			return fmt.Errorf("%s: trial out while %s", in.url, s.circuit)
		case s.circuit > HalfOpen:
			return fmt.Errorf("%s: circuit %d", in.url, s.circuit)
		case !(s.score >= minLatencyMS) || math.IsInf(s.score, 0):
			return fmt.Errorf("%s: score %v", in.url, s.score)
		case in.failure < 0 || in.failure > 1 || math.IsNaN(in.failure):
			return fmt.Errorf("%s: failure %v", in.url, in.failure)
		case in.consecFail < 0 || in.consecSoft < 0 || in.trips < 0:
			return fmt.Errorf("%s: negative streak", in.url)
		}
		if _, gone := p.removed[in.url]; gone {
			return fmt.Errorf("%s: both a candidate and removed", in.url)
		}
	}
	return nil
}

func mustValid(t testing.TB, p *Pool) {
	t.Helper()
	if err := p.validate(); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds or a generous real-time deadline
// passes; for work the runtime does on its own goroutine (a context's
// AfterFunc). It yields instead of sleeping.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		runtime.Gosched()
	}
}
