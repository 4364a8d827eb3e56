package proxy

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/searxgate/searxgate/sim"
)

// fakeShared is a shared budget and trial claim a test decides.
type fakeShared struct {
	mu     sync.Mutex               // guards all
	refuse map[string]time.Duration // instance -> refused, free after this long
	trials map[string]bool          // instances whose trial another replica holds
	takes  []string
}

func (f *fakeShared) Take(_ context.Context, inst string, now time.Time) (bool, time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if d, ok := f.refuse[inst]; ok {
		return false, now.Add(d)
	}
	f.takes = append(f.takes, inst)
	return true, now
}

func (f *fakeShared) Trial(_ context.Context, inst string, until, now time.Time) (bool, time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.trials[inst] {
		return false, now.Add(3 * time.Second)
	}
	return true, now
}

// TestSharedBudgetHasTheLastWord: an instance the shared budget refuses
// is given back and held until the time it said: the next instance
// answers, and once every one is held the refusal says when one frees.
func TestSharedBudgetHasTheLastWord(t *testing.T) {
	f := &fakeShared{refuse: map[string]time.Duration{}}
	e := newEnv(t, Config{Shared: Shared{Budget: f}},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	f.refuse[e.urls[0]] = 15 * time.Second
	res, err := e.search(t, "one")
	if err != nil {
		t.Fatal(err)
	}
	if res.Instance != e.urls[1] || e.searches(0) != 0 {
		t.Fatalf("answered by %s, first instance searched %d times; want the second, none", res.Instance, e.searches(0))
	}
	if st := e.pool.Stats(e.urls[0]); st.InFlight != 0 || st.Cancelled != 1 {
		t.Fatalf("the refused lease: %+v", st)
	}
	if got := e.proxy.polite.FreeAt(e.urls[0], e.clock.Now()); !got.Equal(e.clock.Now().Add(15 * time.Second)) {
		t.Fatalf("held until +%v, want +15s", got.Sub(e.clock.Now()))
	}
	if e.proxy.Metrics().SharedRefused() != 1 {
		t.Fatalf("SharedRefused = %d", e.proxy.Metrics().SharedRefused())
	}
	f.mu.Lock()
	f.refuse[e.urls[1]] = 30 * time.Second
	f.mu.Unlock()
	_, err = e.search(t, "two")
	var na *NoAnswerError
	if !errors.As(err, &na) || na.Why != "no_slot" || na.RetryAfter != 15*time.Second {
		t.Fatalf("with both refused: %v; want no_slot, retry in 15s", err)
	}
	// Own instances are not asked: they keep their local budget.
	f.mu.Lock()
	n := len(f.takes)
	f.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d takes, want 1", n)
	}
}

// TestSharedTrialOneReplicaAtATime: a half-open instance whose trial
// another replica holds is skipped and held until that claim ends.
func TestSharedTrialOneReplicaAtATime(t *testing.T) {
	f := &fakeShared{refuse: map[string]time.Duration{}, trials: map[string]bool{}}
	e := newEnv(t, Config{Shared: Shared{Budget: f, Trials: f}},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	if !e.pool.OpenUntil(e.urls[0], e.clock.Now().Add(time.Second), "rate_limited") {
		t.Fatal("not opened")
	}
	e.clock.Advance(time.Second) // half-open now
	f.trials[e.urls[0]] = true
	res, err := e.search(t, "trial")
	if err != nil {
		t.Fatal(err)
	}
	if res.Instance != e.urls[1] || e.searches(0) != 0 {
		t.Fatalf("answered by %s; the held trial's instance searched %d times", res.Instance, e.searches(0))
	}
	if got := e.proxy.polite.FreeAt(e.urls[0], e.clock.Now()); !got.Equal(e.clock.Now().Add(3 * time.Second)) {
		t.Fatalf("held until +%v, want +3s", got.Sub(e.clock.Now()))
	}
	e.clock.Advance(3 * time.Second)
	f.mu.Lock()
	f.trials[e.urls[0]] = false
	f.mu.Unlock()
	// The claim ended: this replica may take the trial itself.
	l, ok := e.proxy.checkout(context.Background(), "", map[string]bool{e.urls[1]: true}, e.clock.Now(), false)
	if !ok || l.inst != e.urls[0] || !l.lease.Trial() {
		t.Fatalf("after the claim ended: %v %s; want the first instance's trial", ok, l.inst)
	}
	e.proxy.giveBack(l.lease, l.release)
}
