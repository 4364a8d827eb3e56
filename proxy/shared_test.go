package proxy

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/searxgate/searxgate/proxy/polite"
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

// slowBudget is a shared budget that, once armed, holds every Take until
// the test opens it: a Redis slow to answer.
type slowBudget struct {
	armed    atomic.Bool
	asked    chan string   // each instance asked while armed
	open     chan struct{} // closed: every Take answers yes
	openOnce sync.Once
}

func newSlowBudget() *slowBudget {
	return &slowBudget{asked: make(chan string, 8), open: make(chan struct{})}
}

func (b *slowBudget) Take(_ context.Context, inst string, now time.Time) (bool, time.Time) {
	if b.armed.Load() {
		b.asked <- inst
		<-b.open
	}
	return true, now
}

func (b *slowBudget) release() { b.openOnce.Do(func() { close(b.open) }) }

// signalTimers never fire, or, while fire is set, fire at once; made hears
// of each timer as it is made.
type signalTimers struct {
	fire atomic.Bool
	made chan time.Duration
}

func newSignalTimers() *signalTimers { return &signalTimers{made: make(chan time.Duration, 64)} }

func (s *signalTimers) timer(d time.Duration) (<-chan time.Time, func()) {
	select {
	case s.made <- d:
	default:
	}
	if !s.fire.Load() {
		return nil, func() {}
	}
	c := make(chan time.Time, 1)
	c <- time.Time{}
	return c, func() {}
}

// TestDispatchAsksTheSharedBudgetOutsideTheQueuesLock: while the shared
// budget is slow to confirm the slot dispatch served a waiter, the queue
// is not held: another search joins it, times out and leaves meanwhile;
// and the waiter gets its slot once the budget says yes.
func TestDispatchAsksTheSharedBudgetOutsideTheQueuesLock(t *testing.T) {
	b := newSlowBudget()
	t.Cleanup(b.release)
	timers := newSignalTimers()
	e, held := oneSlotHeld(t, Config{Clock: timersOf(timers.timer), Shared: Shared{Budget: b}, Budget: []Window{}})
	b.armed.Store(true)

	first := make(chan error, 1)
	go func() { _, err := e.search(t, "first"); first <- err }()
	<-timers.made // its wait's deadline: it waits in the queue, its own dispatch done
	go e.free(held)
	if got := <-b.asked; got != e.urls[0] {
		t.Fatalf("the budget was asked for %s", got)
	}

	// The budget has not answered. Another search joins the queue, and
	// its deadline passes at once: it leaves.
	timers.fire.Store(true)
	second := make(chan error, 1)
	go func() { _, err := e.search(t, "second"); second <- err }()
	var err error
	waitFor(t, "the second search came back while the budget was asked (the queue's lock is held)", func() bool {
		select {
		case err = <-second:
			return true
		default:
			return false
		}
	})
	var na *NoAnswerError
	if !errors.As(err, &na) || na.Why != "deadline" {
		t.Fatalf("second search: %v; want it to wait, then leave at its deadline", err)
	}
	if d := e.proxy.Metrics().QueueDepth(); d != 1 {
		t.Fatalf("queue depth %d while the first search's slot is asked for, want 1", d)
	}

	timers.fire.Store(false)
	b.release()
	if err := <-first; err != nil {
		t.Fatalf("first search, once the budget said yes: %v", err)
	}
	if d := e.proxy.Metrics().QueueDepth(); d != 0 || e.searches(0) != 1 {
		t.Fatalf("queue depth %d, %d searches; want 0 and the first search's", d, e.searches(0))
	}
}

// TestWaiterRefusedByTheSharedBudgetKeepsItsPlace: a slot dispatch served
// a waiter that the shared budget then refused is given back, lease and
// local budget alike; the instance is held until the time the budget
// said, and the waiter, still first in the queue, gets the next slot.
func TestWaiterRefusedByTheSharedBudgetKeepsItsPlace(t *testing.T) {
	f := &fakeShared{refuse: map[string]time.Duration{}}
	timers := newSignalTimers()
	e, held := slotsHeld(t, Config{Clock: timersOf(timers.timer), Shared: Shared{Budget: f},
		Budget: []Window{{Max: 10, Per: 20 * time.Second}}}, 2)
	f.mu.Lock()
	f.refuse[e.urls[0]] = 15 * time.Second
	f.mu.Unlock()
	now := e.clock.Now()

	type answer struct {
		res *Response
		err error
	}
	search := func(q string) chan answer {
		c := make(chan answer, 1)
		go func() { res, err := e.search(t, q); c <- answer{res, err} }()
		<-timers.made // it waits in the queue, its own dispatch done
		return c
	}
	first := search("first")
	e.free(held[0]) // served urls[0], which the shared budget refuses
	if n := e.proxy.Metrics().SharedRefused(); n != 1 {
		t.Fatalf("shared refusals %d, want 1", n)
	}
	if got := e.proxy.polite.FreeAt(e.urls[0], now); !got.Equal(now.Add(15 * time.Second)) {
		t.Fatalf("the refused instance is held until +%v, want +15s", got.Sub(now))
	}
	if used := e.proxy.polite.Used(e.urls[0], now, time.Minute); used != 1 {
		t.Fatalf("the refused instance's budget counts %d searches, want 1 (the held slot's alone)", used)
	}
	if st := e.pool.Stats(e.urls[0]); st.InFlight != 0 {
		t.Fatalf("the refused lease is still out: %+v", st)
	}

	second := search("second")
	var order []string
	e.proxy.queue.Serve(func(w *waiter) polite.Turn { order = append(order, w.Value.s.req.Query); return polite.Wait })
	if len(order) == 0 || order[0] != "first" || e.proxy.Metrics().QueueDepth() != 2 {
		t.Fatalf("waiters served in the order %v; want the refused one first", order)
	}

	e.free(held[1])
	for i, c := range []chan answer{first, second} {
		a := <-c
		if a.err != nil || a.res.Instance != e.urls[1] {
			t.Fatalf("search %d: %v from %v; want an answer from the second instance", i+1, a.err, a.res)
		}
	}
	if e.searches(0) != 0 {
		t.Fatalf("the refused instance got %d searches", e.searches(0))
	}
}
