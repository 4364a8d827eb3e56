package proxy

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy/polite"
	"github.com/searxgate/searxgate/sim"
)

// quietTimers never fire: a test that uses them moves on dispatches alone
// (an attempt ending frees its slot), never on a wake-up or a deadline.
func quietTimers(time.Duration) (<-chan time.Time, func()) { return nil, func() {} }

// TestParallelSearchesWaitForASlot: a one-instance gateway given more
// searches at once than the instance's in-flight cap answers them all,
// each waiting its turn, instead of refusing the ones over the cap.
func TestParallelSearchesWaitForASlot(t *testing.T) {
	e := newEnv(t, Config{Clock: timersOf(quietTimers), Budget: []Window{}},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, errs[i] = e.search(t, "parallel "+string(rune('a'+i)))
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("search %d: %v", i, err)
		}
	}
	if got := e.searches(0); got != n {
		t.Fatalf("the instance got %d searches, want %d", got, n)
	}
	if d := e.proxy.Metrics().QueueDepth(); d != 0 {
		t.Fatalf("queue depth %d after every search ended", d)
	}
}

// waitFor spins until cond holds, yielding the processor; it fails the
// test after many rounds rather than hang.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 5_000_000 {
		if cond() {
			return
		}
		runtime.Gosched()
	}
	t.Fatalf("never: %s", what)
}

// oneSlotHeld starts one fast instance that takes one search at a time,
// and holds its slot as a search in flight would.
func oneSlotHeld(t *testing.T, cfg Config) (*testEnv, leased) {
	t.Helper()
	e, held := slotsHeld(t, cfg, 1)
	return e, held[0]
}

// slotsHeld starts n fast instances that take one search at a time, and
// holds each one's slot as a search in flight would: held[i] is urls[i]'s.
func slotsHeld(t *testing.T, cfg Config, n int) (*testEnv, []leased) {
	t.Helper()
	var instances []sim.InstanceConfig
	for range n {
		instances = append(instances, sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	}
	e := newEnvPool(t, envStart, envPool{maxInFlight: 1, unranked: true}, cfg, instances...)
	held := make([]leased, n)
	for i, u := range e.urls {
		others := map[string]bool{}
		for _, o := range e.urls {
			others[o] = o != u
		}
		l, ok := e.proxy.checkout(context.Background(), "", others, e.clock.Now(), false)
		if !ok {
			t.Fatalf("no slot for %s", u)
		}
		held[i] = l
	}
	return e, held
}

// free gives a held slot back and lets the waiters know, as the end of
// its attempt would.
func (e *testEnv) free(l leased) {
	e.proxy.pool.Record(l.lease, pool.Outcome{Kind: pool.Cancelled}, 0)
	l.release()
	e.proxy.dispatch()
}

// TestGreedyClientLeavesAQueuePlace: with the one slot held, a client
// whose searches pile up in the queue is refused before the queue is full
// (queue_full, saying when to retry), and another client's search still
// waits for the slot in its place and is served when it frees.
func TestGreedyClientLeavesAQueuePlace(t *testing.T) {
	e, held := oneSlotHeld(t, Config{Clock: timersOf(quietTimers), MaxQueue: 3, Budget: []Window{}})
	search := func(client, q string) error {
		_, err := e.proxy.Search(context.Background(), Request{Query: q, PageNo: 1, Format: FormatJSON, Client: client})
		return err
	}
	waiting := make(chan error, 3)
	for i := range 2 {
		go func() { waiting <- search("greedy", "greedy "+string(rune('a'+i))) }()
		waitFor(t, "a greedy search queued", func() bool { return e.proxy.Metrics().QueueDepth() == int64(i+1) })
	}
	// Alone it leaves a seat of 3/3 = 1: its third search is refused.
	err := search("greedy", "greedy c")
	var na *NoAnswerError
	if !errors.As(err, &na) || na.Why != StopQueueFull || na.RetryAfter < time.Second {
		t.Fatalf("the greedy client's third search: %v; want queue_full with a Retry-After", err)
	}
	go func() { waiting <- search("modest", "modest") }()
	waitFor(t, "the modest search queued", func() bool { return e.proxy.Metrics().QueueDepth() == 3 })
	e.free(held)
	for range 3 {
		if err := <-waiting; err != nil {
			t.Errorf("a waiting search: %v", err)
		}
	}
	if n := e.proxy.Metrics().QueueRefused(); n != 1 {
		t.Errorf("queue refusals %d, want the greedy client's one", n)
	}
}

// TestQueueFullRefusesAtOnce: with the one slot taken and the queue's one
// place taken, a third search is refused at once, saying when to retry;
// the waiting one is served when the slot frees.
func TestQueueFullRefusesAtOnce(t *testing.T) {
	gate := make(chan struct{})
	e, held := oneSlotHeld(t, Config{Clock: timersOf(quietTimers), MaxQueue: 1, Budget: []Window{}})
	var second error
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-gate
		_, second = e.search(t, "waits")
	}()
	close(gate)
	waitFor(t, "the second search queued", func() bool { return e.proxy.Metrics().QueueDepth() == 1 })

	_, err := e.search(t, "no room")
	var na *NoAnswerError
	if !errors.As(err, &na) || na.Why != "queue_full" || na.RetryAfter < time.Second {
		t.Fatalf("third search: %v; want queue_full with a Retry-After of at least 1s", err)
	}
	if e.proxy.Metrics().QueueRefused() != 1 {
		t.Fatalf("queue refusals %d, want 1", e.proxy.Metrics().QueueRefused())
	}

	// The slot frees: the waiting search takes it.
	e.proxy.pool.Record(held.lease, pool.Outcome{Kind: pool.Cancelled}, 0)
	held.release()
	e.proxy.dispatch()
	<-done
	if second != nil {
		t.Fatalf("the waiting search: %v", second)
	}
	if n := e.proxy.Metrics().QueueWait().Count(); n != 1 {
		t.Fatalf("waits observed %d, want the one search that waited", n)
	}
}

// TestWaiterRefusedWhenTheBudgetRunsOut: a search waiting for a busy
// instance is refused at once, with the window's real end, when the slot
// it waited for frees but the instance's budget was spent meanwhile.
func TestWaiterRefusedWhenTheBudgetRunsOut(t *testing.T) {
	e, held := oneSlotHeld(t, Config{Clock: timersOf(quietTimers), Budget: []Window{{Max: 2, Per: 20 * time.Second}}})
	var err error
	done := make(chan struct{})
	go func() { defer close(done); _, err = e.search(t, "waits in vain") }()
	waitFor(t, "the search queued", func() bool { return e.proxy.Metrics().QueueDepth() == 1 })
	// Someone else spends the last search of the window; then the slot
	// frees. (The clock stays put: the waiter's own dispatch may read it
	// at any moment of this.)
	if !e.proxy.polite.Take(e.urls[0], e.clock.Now()) {
		t.Fatal("the window had no room left")
	}
	e.proxy.pool.Record(held.lease, pool.Outcome{Kind: pool.Cancelled}, 0)
	held.release()
	e.proxy.dispatch()
	<-done
	var na *NoAnswerError
	if !errors.As(err, &na) || na.Why != "no_slot" || na.RetryAfter != 20*time.Second+polite.Margin {
		t.Fatalf("%v; want no_slot, retry after 20.5s (the window's oldest search + 20s and the margin)", err)
	}
	if e.searches(0) != 0 {
		t.Fatalf("the instance got %d searches, want none", e.searches(0))
	}
}

// TestOneClientCannotSpendEveryonesBudget: a client that searches as fast
// as it may gets at most its share of the public instances' windows, and
// a second client is still served at once.
func TestOneClientCannotSpendEveryonesBudget(t *testing.T) {
	e := newEnv(t, Config{Clock: timersOf(quietTimers), Budget: []Window{{Max: 2, Per: 20 * time.Second}}},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	search := func(client, q string) error {
		_, err := e.proxy.Search(context.Background(), Request{Query: q, PageNo: 1, Format: FormatJSON, Client: client})
		return err
	}
	// 3 instances × 2 per 20 s = 6; alone, a client may take all but a
	// newcomer's seat (a third).
	served := 0
	var refusal *NoAnswerError
	for i := range 6 {
		err := search("greedy", "greedy "+string(rune('a'+i)))
		if err == nil {
			served++
			continue
		}
		if !errors.As(err, &refusal) {
			t.Fatalf("greedy search %d: %v", i, err)
		}
	}
	if served != 4 {
		t.Fatalf("the greedy client was served %d of 6, want its share of 4", served)
	}
	if refusal.Why != StopShare || refusal.RetryAfter < 5*time.Second {
		t.Fatalf("the greedy client's refusal: %+v; want its share, with the share's real end", refusal)
	}
	if m := e.proxy.Metrics(); m.ShareRefused() != 2 || m.QueueRefused() != 0 || m.Searches()["limited"] != 2 || m.Searches()["failed"] != 0 {
		t.Fatalf("share refused %d, queue refused %d, searches %v; want the 2 counted as the client's share, none failed",
			m.ShareRefused(), m.QueueRefused(), m.Searches())
	}
	if err := search("other", "someone else"); err != nil {
		t.Fatalf("a second client was refused: %v", err)
	}
	total := uint64(0)
	for i := range 3 {
		total += e.searches(i)
	}
	if total != 5 {
		t.Fatalf("the instances got %d searches, want 5", total)
	}
}

// TestOwnInstancesServeAClientOverItsShare: the share limits only what a
// client takes of the public instances.
func TestOwnInstancesServeAClientOverItsShare(t *testing.T) {
	e := newEnv(t, Config{Clock: timersOf(quietTimers), Budget: []Window{{Max: 1, Per: 20 * time.Second}}},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	e.pool.Add(e.urls[1], pool.Own)
	for i := range 20 {
		_, err := e.proxy.Search(context.Background(), Request{Query: "mine " + string(rune('a'+i)), PageNo: 1, Format: FormatJSON, Client: "me"})
		if err != nil {
			t.Fatalf("search %d: %v", i, err)
		}
	}
	if e.searches(1) < 19 {
		t.Fatalf("the own instance answered %d of 20", e.searches(1))
	}
}

// TestAClientAloneLeavesAReserve: the fair share keeps a newcomer's seat,
// a third of each window for a client alone: the client alone gets it
// only when the window starts to free within half a deadline, and is
// told exactly when; a newcomer takes it at once.
func TestAClientAloneLeavesAReserve(t *testing.T) {
	e := newEnv(t, Config{Clock: timersOf(quietTimers), Budget: []Window{{Max: 2, Per: 20 * time.Second}, {Max: 10, Per: 10 * time.Minute}}},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	served := 0
	for i := range 12 {
		// 20 s apart: the short window never binds; the long one (2 × 10
		// per 10 min) would, at two thirds (14) for a client alone.
		_, err := e.proxy.Search(context.Background(), Request{Query: "alone " + string(rune('a'+i)), PageNo: 1, Format: FormatJSON, Client: "solo"})
		if err == nil {
			served++
		}
		e.clock.Advance(20 * time.Second)
	}
	if served != 12 {
		t.Fatalf("served %d of 12 spread over 4 minutes, want 12 (within two thirds of the 10-minute capacity of 20)", served)
	}
	if ok, _ := e.proxy.fair.Allowed("solo", e.clock.Now()); !ok {
		t.Fatal("refused at 12 of the 14 a client alone may take")
	}
	e.clock.Advance(10 * time.Minute)
	for i := range 3 {
		// Now all at once: of the short window (2 × 2), all but the
		// seat (a third, at least 1).
		if _, err := e.proxy.Search(context.Background(), Request{Query: "burst " + string(rune('a'+i)), PageNo: 1, Format: FormatJSON, Client: "solo"}); err != nil {
			t.Fatalf("burst search %d: %v", i, err)
		}
	}
	_, err := e.proxy.Search(context.Background(), Request{Query: "burst reserve", PageNo: 1, Format: FormatJSON, Client: "solo"})
	var na *NoAnswerError
	// The burst leaves the window 20 s on, as it leaves the instances';
	// the seat is lent 2 s (half the deadline) before.
	if !errors.As(err, &na) || na.Why != StopShare || na.RetryAfter != 18*time.Second {
		t.Fatalf("the 4th search of a burst: %v; want refused for its share until the seat is lent, 18 s", err)
	}
	// Another client takes the reserve at once.
	if _, err := e.proxy.Search(context.Background(), Request{Query: "newcomer", PageNo: 1, Format: FormatJSON, Client: "other"}); err != nil {
		t.Fatalf("a newcomer found no reserve: %v", err)
	}
}

// TestFanoutMergesSeveralInstances: fanout=3 asks three instances at once
// and merges their answers; a hanging one does not hold the answer past
// the deadline; a budget that affords fewer asks fewer and says so.
func TestFanoutMergesSeveralInstances(t *testing.T) {
	e := newEnv(t, Config{Clock: timersOf(quietTimers)},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	res, err := e.proxy.Search(context.Background(), Request{Query: "wide", PageNo: 1, Format: FormatJSON, Fanout: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Fanout != "3/3" || strings.Count(res.Instance, ",") != 2 {
		t.Fatalf("fanout %q, instances %q; want 3/3 and all three named", res.Fanout, res.Instance)
	}
	for i := range 3 {
		if e.searches(i) != 1 {
			t.Fatalf("instance %d got %d searches, want 1", i, e.searches(i))
		}
	}
	r, err := res.Results()
	if err != nil || len(r.Results) == 0 {
		t.Fatalf("merged results: %v, %d", err, len(r.Results))
	}
	if e.proxy.Metrics().FanoutSearches() != 1 {
		t.Fatalf("fan-out searches counted %d", e.proxy.Metrics().FanoutSearches())
	}
	// The same search with one instance: another answer, another key.
	if one, err := e.search(t, "wide"); err != nil || one.Cached {
		t.Fatalf("fanout 1 after fanout 3: cached %v err %v; want its own answer", one != nil && one.Cached, err)
	}
}

func TestFanoutAsksFewerWhenTheBudgetIsShort(t *testing.T) {
	e := newEnv(t, Config{Clock: timersOf(quietTimers), Budget: []Window{{Max: 1, Per: 20 * time.Second}}},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	if _, err := e.search(t, "spend one"); err != nil {
		t.Fatal(err)
	}
	res, err := e.proxy.Search(context.Background(), Request{Query: "wide", PageNo: 1, Format: FormatJSON, Fanout: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Fanout != "2/2" {
		t.Fatalf("fanout %q, want 2/2: one instance's window is spent", res.Fanout)
	}
	total := e.searches(0) + e.searches(1) + e.searches(2)
	if total != 3 {
		t.Fatalf("%d upstream searches, want 3 (1 + 2): never over budget", total)
	}
}

func TestFanoutDoesNotWaitForAHangingInstance(t *testing.T) {
	deadline := make(chan time.Time, 1)
	timers := func(d time.Duration) (<-chan time.Time, func()) {
		if d >= 3*time.Second { // the search's deadline
			return deadline, func() {}
		}
		return nil, func() {}
	}
	e := newEnv(t, Config{Clock: timersOf(timers)},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Hang, HangFor: 300 * time.Millisecond, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	done := make(chan struct{})
	var res *Response
	var err error
	go func() {
		defer close(done)
		res, err = e.proxy.Search(context.Background(), Request{Query: "patient", PageNo: 1, Format: FormatJSON, Fanout: 3})
	}()
	waitFor(t, "two answers in and the third asked", func() bool {
		return e.pool.Stats(e.urls[0]).Successes == 1 && e.pool.Stats(e.urls[2]).Successes == 1 && e.searches(1) == 1
	})
	deadline <- time.Now()
	<-done
	if err != nil {
		t.Fatalf("%v; want the two answers merged at the deadline", err)
	}
	// Both good answers were recorded before the deadline fired; whether
	// the second was read yet is the scheduler's business. The hanging
	// instance never counts, and the answer does not wait for it.
	if res.Fanout != "3/2" && res.Fanout != "3/1" {
		t.Fatalf("fanout %q, want 3 asked and the good ones answered at the deadline", res.Fanout)
	}
	if strings.Contains(res.Instance, e.urls[1]) {
		t.Fatalf("the hanging instance is named among those that answered: %s", res.Instance)
	}
}

// TestFollowersOfALimitedLeaderAskAgain: a search coalesced with one whose
// client was over its share is not refused for it: it asks again.
func TestFollowersOfALimitedLeaderAskAgain(t *testing.T) {
	e := newEnv(t, Config{Clock: timersOf(quietTimers)},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	req := Request{Query: "shared", PageNo: 1, Format: FormatJSON, Client: "patient"}
	norm := req
	norm.Fanout = 1
	key := norm.Key()
	fl, leader := e.proxy.flights.join(key) // a greedy client's search, in flight
	if !leader {
		t.Fatal("no leader")
	}
	done := make(chan struct{})
	var res *Response
	var err error
	go func() { defer close(done); res, err = e.proxy.Search(context.Background(), req) }()
	waitFor(t, "the second search joined", func() bool {
		e.proxy.flights.mu.Lock()
		defer e.proxy.flights.mu.Unlock()
		return fl.dups == 1
	})
	e.proxy.flights.finish(key, fl, nil, &LimitedError{RetryAfter: time.Minute})
	<-done
	if err != nil || res.Coalesced {
		t.Fatalf("the follower: coalesced %v, err %v; want its own answer", res != nil && res.Coalesced, err)
	}
}

// TestLeaderWhoseClientLeftStillAnswersFollowers: the search others joined
// goes on when its own client goes away; they get its answer.
func TestLeaderWhoseClientLeftStillAnswersFollowers(t *testing.T) {
	e := newEnv(t, Config{Clock: timersOf(quietTimers)},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: 200 * time.Millisecond, JSON: true})
	for _, q := range []string{"left alone", "left again"} {
		req := Request{Query: q, PageNo: 1, Format: FormatJSON}
		lctx, leave := context.WithCancel(context.Background())
		leaderDone := make(chan error, 1)
		go func() { _, err := e.proxy.Search(lctx, req); leaderDone <- err }()
		waitFor(t, "the leader in flight", func() bool {
			select {
			case err := <-leaderDone:
				t.Fatalf("%q: the leader ended before anyone joined: %v", q, err)
			default:
			}
			e.proxy.flights.mu.Lock()
			defer e.proxy.flights.mu.Unlock()
			return len(e.proxy.flights.m) == 1
		})
		followerDone := make(chan *Response, 1)
		go func() {
			res, err := e.proxy.Search(context.Background(), req)
			if err != nil {
				t.Errorf("%q, the follower: %v", q, err)
			}
			followerDone <- res
		}()
		waitFor(t, "the follower joined", func() bool {
			e.proxy.flights.mu.Lock()
			defer e.proxy.flights.mu.Unlock()
			for _, fl := range e.proxy.flights.m {
				return fl.dups == 1
			}
			return false
		})
		leave() // the leader's client goes away
		<-leaderDone
		res := <-followerDone
		if res == nil || !res.Coalesced {
			t.Fatalf("%q: the follower got %+v, want the leader's answer, coalesced", q, res)
		}
	}
	if n := e.searches(0); n != 2 {
		t.Fatalf("%d upstream searches, want one per query", n)
	}
}

// TestALoneClientGetsWhatIdleClientsLeft: four clients search, stop, and
// two minutes later a fifth alone gets the capacity that is free, not a
// fifth of it.
func TestALoneClientGetsWhatIdleClientsLeft(t *testing.T) {
	e := newEnv(t, Config{Clock: timersOf(quietTimers)},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	search := func(client, q string) error {
		_, err := e.proxy.Search(context.Background(), Request{Query: q, PageNo: 1, Format: FormatJSON, Client: client})
		return err
	}
	for i := range 60 {
		client := fmt.Sprintf("early-%d", i%4)
		if err := search(client, fmt.Sprintf("early %d", i)); err != nil {
			t.Fatalf("search %d of %s: %v", i, client, err)
		}
		e.clock.Advance(time.Second)
	}
	e.clock.Advance(2 * time.Minute)
	served := 0
	for i := range 10 {
		if err := search("late", fmt.Sprintf("late %d", i)); err == nil {
			served++
		}
	}
	if served < 9 {
		t.Fatalf("a lone client 2 minutes after four others got %d of 10, want at least 9", served)
	}
}

// TestSecondOpinionsAreChargedToTheClient: a query that makes every
// engine fail costs two upstream searches (the second opinion says it is
// the query's), and both are charged to its client's own limit; a
// normal search costs one.
func TestSecondOpinionsAreChargedToTheClient(t *testing.T) {
	var admits atomic.Int64
	e := newEnv(t, Config{Clock: timersOf(quietTimers), Admit: func(string, time.Time) (bool, time.Duration) {
		admits.Add(1)
		return true, 0
	}},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	search := func(q string) {
		_, _ = e.proxy.Search(context.Background(), Request{Query: q, PageNo: 1, Format: FormatJSON, Client: "c"})
	}
	search("calm one")
	if n := admits.Load(); n != 1 {
		t.Fatalf("a normal search was charged %d times, want 1", n)
	}
	search(sim.EngineErrorPrefix + " storm")
	sent := e.searches(0) + e.searches(1) + e.searches(2)
	if sent != 3 {
		t.Fatalf("%d upstream searches, want 3 (1 + a query whose engines fail and its second opinion)", sent)
	}
	if n := admits.Load(); n != 3 {
		t.Fatalf("the client was charged %d times for 3 upstream searches, want 3", n)
	}
}

// TestAQueuedSearchNobodyWaitsForStops: a search waiting for a slot whose
// one caller goes away leaves the queue at once (no answer, no slot held
// later for nobody); one that another caller still waits for goes on until
// that caller leaves too.
func TestAQueuedSearchNobodyWaitsForStops(t *testing.T) {
	e, held := oneSlotHeld(t, Config{Clock: timersOf(quietTimers), Budget: []Window{}})
	req := Request{Query: "nobody waits", PageNo: 1, Format: FormatJSON}
	ctx, leave := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := e.proxy.Search(ctx, req); done <- err }()
	waitFor(t, "the search queued", func() bool { return e.proxy.Metrics().QueueDepth() == 1 })
	leave()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the search whose caller left: %v, want context.Canceled", err)
	}
	waitFor(t, "the queue empty", func() bool { return e.proxy.queue.Len() == 0 })
	if n := e.proxy.Metrics().Searches()["cancelled"]; n != 1 {
		t.Fatalf("searches counted cancelled: %d, want 1", n)
	}

	// Two callers of one search: the first leaving does not end it.
	req.Query = "two wait"
	first, leaveFirst := context.WithCancel(context.Background())
	second, leaveSecond := context.WithCancel(context.Background())
	firstDone, secondDone := make(chan error, 1), make(chan error, 1)
	go func() { _, err := e.proxy.Search(first, req); firstDone <- err }()
	waitFor(t, "the search queued", func() bool { return e.proxy.Metrics().QueueDepth() == 1 })
	go func() { _, err := e.proxy.Search(second, req); secondDone <- err }()
	waitFor(t, "the second caller joined", func() bool {
		e.proxy.flights.mu.Lock()
		defer e.proxy.flights.mu.Unlock()
		fl := e.proxy.flights.m[req.Key()]
		return fl != nil && fl.waiting == 2
	})
	leaveFirst()
	waitFor(t, "the first caller counted gone", func() bool {
		e.proxy.flights.mu.Lock()
		defer e.proxy.flights.mu.Unlock()
		fl := e.proxy.flights.m[req.Key()]
		return fl != nil && fl.waiting == 1
	})
	if d := e.proxy.queue.Len(); d != 1 {
		t.Fatalf("queue length %d with the second caller still waiting, want the search still queued", d)
	}
	select {
	case err := <-secondDone:
		t.Fatalf("the second caller's search ended when the first left: %v", err)
	default:
	}
	leaveSecond()
	for name, done := range map[string]chan error{"first": firstDone, "second": secondDone} {
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("the %s caller: %v, want context.Canceled", name, err)
		}
	}
	e.free(held)
	if n := e.searches(0); n != 0 {
		t.Fatalf("%d upstream searches for callers that had gone, want 0", n)
	}
}
