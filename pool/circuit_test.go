package pool

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

const a, b, c = "https://a.example/", "https://b.example/", "https://c.example/"

// TestTransitions walks one instance through a sequence of outcomes and
// clock moves, checking the circuit after each step.
func TestTransitions(t *testing.T) {
	type step struct {
		advance time.Duration // move the clock first
		out     *Outcome      // then record this on a fresh lease (nil: none)
		want    Circuit
		trial   bool // the lease taken must be (or not be) a trial
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"ok keeps closed", []step{{out: &okO, want: Closed}}},
		{"refusal opens", []step{{out: &refusedO, want: Open}}},
		{"a lone failure stays closed", []step{{out: &failedO, want: Closed}}},
		{"fail strikes open", []step{
			{out: &failedO, want: Closed},
			{out: &failedO, want: Closed},
			{out: &failedO, want: Open},
		}},
		{"an answer ends the failure streak", []step{
			{out: &failedO, want: Closed},
			{out: &failedO, want: Closed},
			{out: &okO, want: Closed},
			{out: &failedO, want: Closed},
			{out: &failedO, want: Closed},
		}},
		{"not the instance's: nothing moves", []step{
			{out: &queryFailedO, want: Closed},
			{out: &queryFailedO, want: Closed},
			{out: &gatewayTimeoutO, want: Closed},
			{out: &clientRefusedO, want: Closed},
			{out: &querySoftO, want: Closed},
			{out: &querySoftO, want: Closed},
			{out: &querySoftO, want: Closed},
		}},
		{"cancel changes nothing", []step{{out: &cancelO, want: Closed}}},
		{"single soft stays closed", []step{{out: &softO, want: Closed}}},
		{"cooldown end is half-open", []step{
			{out: &refusedO, want: Open},
			{advance: 59 * time.Second, want: Open},
			{advance: time.Second, want: HalfOpen},
		}},
		{"trial ok closes", []step{
			{out: &refusedO, want: Open},
			{advance: time.Minute, out: &okO, want: Closed, trial: true},
			{out: &okO, want: Closed},
		}},
		{"trial soft closes", []step{
			{out: &refusedO, want: Open},
			{advance: time.Minute, out: &softO, want: Closed, trial: true},
		}},
		{"trial refusal reopens", []step{
			{out: &refusedO, want: Open},
			{advance: time.Minute, out: &refusedO, want: Open, trial: true},
			{advance: time.Minute, want: Open}, // twice as long: 2 min
			{advance: time.Minute, want: HalfOpen},
		}},
		{"trial failure reopens", []step{
			{out: &refusedO, want: Open},
			{advance: time.Minute, out: &failedO, want: Open, trial: true},
		}},
		{"trial cancelled stays half-open", []step{
			{out: &refusedO, want: Open},
			{advance: time.Minute, out: &cancelO, want: HalfOpen, trial: true},
			{out: &okO, want: Closed, trial: true},
		}},
		{"soft strikes open", []step{
			{out: &softO, want: Closed},
			{out: &softO, want: Closed},
			{out: &softO, want: Open},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, Config{})
			f.Add(a, Public)
			for i, st := range tc.steps {
				f.clock.Advance(st.advance)
				if st.out != nil {
					l := f.lease(t, a)
					if l.Trial() != st.trial {
						t.Fatalf("step %d: Trial() = %v, want %v", i, l.Trial(), st.trial)
					}
					f.Record(l, *st.out, 100*time.Millisecond)
				}
				if got := f.circuit(a); got != st.want {
					t.Fatalf("step %d: circuit %s, want %s", i, got, st.want)
				}
				mustValid(t, f.Pool)
			}
		})
	}
}

func TestOpenIsNeverCheckedOut(t *testing.T) {
	f := newFixture(t, Config{})
	f.Add(a, Public)
	f.record(t, a, refusedO, time.Millisecond)
	for range 3 {
		if ls, err := f.Checkout(context.Background(), 3, nil); !errors.Is(err, ErrNoneAvailable) || ls != nil {
			t.Fatalf("open instance handed out: %v %v", ls, err)
		}
		if r := f.Rank(3, nil); len(r) != 0 {
			t.Fatalf("Rank lists an open instance: %v", r)
		}
		f.clock.Advance(19 * time.Second)
	}
}

// TestCooldownDoubling: each opening since the last OK doubles the
// cooldown, capped at MaxCooldown; an OK starts again from Cooldown.
func TestCooldownDoubling(t *testing.T) {
	cases := []struct {
		name      string
		cfg       Config
		outs      []Outcome // recorded in turn, each after the last cooldown ended
		cooldowns []time.Duration
	}{
		{"defaults", Config{}, []Outcome{refusedO, refusedO, refusedO, refusedO, refusedO, refusedO, refusedO, refusedO},
			[]time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 16 * time.Minute, 30 * time.Minute, 30 * time.Minute, 30 * time.Minute}},
		{"custom", Config{Cooldown: 10 * time.Second, MaxCooldown: 35 * time.Second, FailStrikes: 1}, []Outcome{failedO, refusedO, failedO, refusedO},
			[]time.Duration{10 * time.Second, 20 * time.Second, 35 * time.Second, 35 * time.Second}},
		{"max below base", Config{Cooldown: time.Minute, MaxCooldown: 30 * time.Second}, []Outcome{refusedO, refusedO},
			[]time.Duration{30 * time.Second, 30 * time.Second}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.cfg)
			f.Add(a, Public)
			for i, o := range tc.outs {
				f.record(t, a, o, time.Millisecond)
				evs := f.ev.take()
				last := evs[len(evs)-1]
				if last.To != Open || last.Cooldown != tc.cooldowns[i] {
					t.Fatalf("opening %d: event %+v, want open for %s", i, last, tc.cooldowns[i])
				}
				st := f.Stats(a)
				if want := f.clock.Now().Add(tc.cooldowns[i]); !st.CooldownUntil.Equal(want) {
					t.Fatalf("opening %d: cooldown_until %s, want %s", i, st.CooldownUntil, want)
				}
				f.clock.Advance(tc.cooldowns[i])
			}
		})
	}

	t.Run("ok resets", func(t *testing.T) {
		f := newFixture(t, Config{})
		f.Add(a, Public)
		f.record(t, a, refusedO, 0)
		f.clock.Advance(time.Minute)
		f.record(t, a, refusedO, 0) // 2 min
		f.clock.Advance(2 * time.Minute)
		f.record(t, a, okO, 0)
		f.record(t, a, refusedO, 0)
		if st := f.Stats(a); !st.CooldownUntil.Equal(f.clock.Now().Add(time.Minute)) {
			t.Fatalf("after an OK the cooldown should start again at 1 min: %s", st.CooldownUntil.Sub(f.clock.Now()))
		}
	})
}

// TestRetryAfter: the server's retry-after is the cooldown, capped.
func TestRetryAfter(t *testing.T) {
	cases := []struct {
		retry, want time.Duration
	}{
		{5 * time.Second, 5 * time.Second},
		{10 * time.Minute, 10 * time.Minute},
		{2 * time.Hour, 30 * time.Minute},
		{-time.Second, time.Minute}, // nonsense: the default
	}
	for _, tc := range cases {
		t.Run(tc.retry.String(), func(t *testing.T) {
			f := newFixture(t, Config{})
			f.Add(a, Public)
			f.record(t, a, Outcome{Kind: Refused, Reason: "rate_limited", RetryAfter: tc.retry}, 0)
			evs := f.ev.take()
			if ev := evs[len(evs)-1]; ev.Cooldown != tc.want || ev.Reason != "rate_limited" {
				t.Fatalf("event %+v, want cooldown %s", ev, tc.want)
			}
			f.clock.Advance(tc.want - time.Nanosecond)
			if got := f.circuit(a); got != Open {
				t.Fatalf("just before the end: %s", got)
			}
			f.clock.Advance(time.Nanosecond)
			if got := f.circuit(a); got != HalfOpen {
				t.Fatalf("at the end: %s", got)
			}
		})
	}
}

// TestHalfOpenSingleTrial: however many goroutines ask at once, a
// half-open instance hands out one trial lease.
func TestHalfOpenSingleTrial(t *testing.T) {
	f := newFixture(t, Config{MaxInFlight: -1})
	f.Add(a, Public)
	f.record(t, a, refusedO, 0)
	f.clock.Advance(time.Minute)

	const n = 64
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex // guards leases
		leases []*Lease
		start  = make(chan struct{})
	)
	for range n {
		wg.Go(func() {
			<-start
			ls, err := f.Checkout(context.Background(), 1, nil)
			if err != nil {
				if !errors.Is(err, ErrNoneAvailable) {
					t.Errorf("Checkout: %v", err)
				}
				return
			}
			mu.Lock()
			leases = append(leases, ls...)
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	if len(leases) != 1 || !leases[0].Trial() {
		t.Fatalf("%d leases handed out on a half-open instance, want one trial", len(leases))
	}
	if st := f.Stats(a); st.InFlight != 1 || st.Circuit != HalfOpen {
		t.Fatalf("stats %+v", st)
	}
	f.Record(leases[0], okO, time.Millisecond)
	if got := f.circuit(a); got != Closed {
		t.Fatalf("after the trial answered: %s", got)
	}
}

// TestSoftStrikes: SoftStrikes soft answers in a row open; an OK in
// between breaks the row; refusals do not reset it; negative disables.
func TestSoftStrikes(t *testing.T) {
	cases := []struct {
		name    string
		strikes int
		outs    []Outcome
		want    Circuit
	}{
		{"default three", 0, []Outcome{softO, softO, softO}, Open},
		{"two is not enough", 0, []Outcome{softO, softO}, Closed},
		{"ok breaks the row", 0, []Outcome{softO, softO, okO, softO, softO}, Closed},
		{"one strike", 1, []Outcome{softO}, Open},
		{"five", 5, []Outcome{softO, softO, softO, softO}, Closed},
		{"never", -1, []Outcome{softO, softO, softO, softO, softO, softO}, Closed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, Config{SoftStrikes: tc.strikes})
			f.Add(a, Public)
			for _, o := range tc.outs {
				f.record(t, a, o, 200*time.Millisecond)
			}
			st := f.Stats(a)
			if st.Circuit != tc.want {
				t.Fatalf("circuit %s, want %s (stats %+v)", st.Circuit, tc.want, st)
			}
			if st.FailureRate <= 0 {
				t.Fatalf("soft answers left the failure rate at %v", st.FailureRate)
			}
		})
	}
}

// TestStaleLease: leases out when the circuit opened do not move it again,
// but still count.
func TestStaleLease(t *testing.T) {
	f := newFixture(t, Config{MaxInFlight: 3})
	f.Add(a, Public)
	l1, l2, l3 := f.lease(t, a), f.lease(t, a), f.lease(t, a)
	f.Record(l1, refusedO, 0)
	f.ev.take()
	f.Record(l2, okO, time.Second) // answered before the refusal: no close
	if got := f.circuit(a); got != Open {
		t.Fatalf("stale OK closed the circuit: %s", got)
	}
	f.Record(l3, refusedO, 0) // the same burst: no longer cooldown
	st := f.Stats(a)
	if !st.CooldownUntil.Equal(f.clock.Now().Add(time.Minute)) {
		t.Fatalf("stale refusal moved the cooldown to %s", st.CooldownUntil)
	}
	if st.Successes != 1 || st.Refusals != 2 || st.InFlight != 0 || st.ConsecutiveFailures != 1 {
		t.Fatalf("stats %+v", st)
	}
	if evs := f.ev.take(); len(evs) != 0 {
		t.Fatalf("stale leases fired %v", evs)
	}
}

// TestEventsOncePerTransition checks the exact list of events of a
// scenario: one per change, none for non-changes.
func TestEventsOncePerTransition(t *testing.T) {
	f := newFixture(t, Config{})
	f.Add(a, Public)
	f.Add(a, Public) // idempotent: no event
	f.record(t, a, okO, time.Millisecond)
	f.record(t, a, refusedO, time.Millisecond)
	start := f.clock.Now()
	f.clock.Advance(time.Minute)
	f.Sweep()                     // Open -> HalfOpen, once
	f.Sweep()                     // nothing
	l := f.lease(t, a)            // already half-open: no event
	f.Record(l, okO, time.Second) // HalfOpen -> Closed
	f.Record(l, okO, time.Second) // second Record: nothing
	f.record(t, a, softO, 0)      // no change
	f.record(t, a, softO, 0)      // no change
	f.record(t, a, softO, 0)      // Closed -> Open
	f.clock.Advance(2 * time.Minute)
	l = f.lease(t, a) // Open -> HalfOpen on checkout
	f.Record(l, failedO, 0)
	f.Disable(a)
	f.Enable(a)
	f.Remove(a)
	f.Remove(a) // unknown now: no event

	want := []Event{
		{Instance: a, Reason: ReasonAdded, At: start},
		{Instance: a, From: Closed, To: Open, Cooldown: time.Minute, Reason: "rate_limited", At: start},
		{Instance: a, From: Open, To: HalfOpen, Reason: ReasonCooldownEnded, At: start.Add(time.Minute)},
		{Instance: a, From: HalfOpen, To: Closed, Reason: "ok", At: start.Add(time.Minute)},
		{Instance: a, From: Closed, To: Open, Cooldown: time.Minute, Reason: "empty", At: start.Add(time.Minute)},
		{Instance: a, From: Open, To: HalfOpen, Reason: ReasonCooldownEnded, At: start.Add(3 * time.Minute)},
		{Instance: a, From: HalfOpen, To: Open, Cooldown: 2 * time.Minute, Reason: "timeout", At: start.Add(3 * time.Minute)},
		{Instance: a, From: Open, To: Open, Reason: ReasonDisabled, At: start.Add(3 * time.Minute)},
		{Instance: a, From: Open, To: Closed, Reason: ReasonEnabled, At: start.Add(3 * time.Minute)},
		{Instance: a, From: Closed, To: Closed, Reason: ReasonRemoved, At: start.Add(3 * time.Minute)},
	}
	got := f.ev.take()
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d:\n%v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
		// Only the removal takes the instance out of the pool; none of
		// these was heard from another searxgate.
		if got[i].Gone() != (i == len(want)-1) || got[i].Source != SourceLocal {
			t.Errorf("event %d: gone %v, source %v", i, got[i].Gone(), got[i].Source)
		}
	}
}

// TestOnEventMayCallPool: events run outside the lock.
func TestOnEventMayCallPool(t *testing.T) {
	clk := newClock()
	var p *Pool
	seen := 0
	p = New(Config{Clock: clk, OnEvent: func(ev Event) {
		_ = p.Stats(ev.Instance)
		_ = p.Snapshot()
		seen++
	}})
	p.Add(a, Public)
	ls, err := p.Checkout(context.Background(), 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Record(ls[0], refusedO, 0)
	if seen != 2 {
		t.Fatalf("%d events, want 2", seen)
	}
}

// TestExcusedTeachesNothing: an outcome that is not the instance's own
// changes no average, streak or counter but its own, and gives a half-open
// trial back.
func TestExcusedTeachesNothing(t *testing.T) {
	f := newFixture(t, Config{})
	f.Add(a, Public)
	f.record(t, a, okO, 200*time.Millisecond)
	before := f.Stats(a)
	for _, o := range []Outcome{queryFailedO, querySoftO, gatewayTimeoutO, clientRefusedO,
		{Kind: Refused, Owner: OwnerQuery, Reason: "limiter_redirect", RetryAfter: time.Hour}} {
		f.record(t, a, o, 3*time.Second)
	}
	after := f.Stats(a)
	if after.LatencyMS != before.LatencyMS || after.FailureRate != before.FailureRate ||
		after.Failures != 0 || after.Refusals != 0 || after.Softs != 0 || after.ConsecutiveFailures != 0 {
		t.Fatalf("an excused outcome taught the pool: before %+v, after %+v", before, after)
	}
	if after.Excused != 5 || after.Circuit != Closed {
		t.Fatalf("excused %d, circuit %s; want 5, closed", after.Excused, after.Circuit)
	}
	if evs := f.ev.take(); len(evs) != 1 || evs[0].Reason != ReasonAdded {
		t.Fatalf("events %+v, want only the addition", evs)
	}

	// A trial whose outcome is the query's leaves the instance half-open
	// with its trial free for the next search.
	f.record(t, a, refusedO, 0)
	f.clock.Advance(time.Minute)
	l := f.lease(t, a)
	if !l.Trial() {
		t.Fatal("want a trial lease")
	}
	f.Record(l, querySoftO, time.Second)
	if st := f.Stats(a); st.Circuit != HalfOpen || st.TrialOut {
		t.Fatalf("after an excused trial: %+v", st)
	}
	mustValid(t, f.Pool)
}

// TestHold: a held lease frees its slot at once, its outcome is learned
// when it is recorded, and the end of its context gives it back only once.
func TestHold(t *testing.T) {
	f := newFixture(t, Config{MaxInFlight: 1})
	f.Add(a, Public)
	freed := 0
	f.SetOnFree(func() { freed++ })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ls, err := f.Checkout(ctx, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.Hold(ls[0])
	f.Hold(ls[0]) // a second Hold does nothing
	if st := f.Stats(a); st.InFlight != 0 || freed != 1 {
		t.Fatalf("held: in flight %d, freed %d; want 0, 1", st.InFlight, freed)
	}
	l2 := f.lease(t, a) // the slot is free for another search
	f.Record(l2, okO, time.Millisecond)
	f.Record(ls[0], softO, 100*time.Millisecond)
	if st := f.Stats(a); st.Softs != 1 || st.InFlight != 0 {
		t.Fatalf("after the held outcome: %+v", st)
	}
	mustValid(t, f.Pool)

	// Held, then its context ends: given back once, counted as cancelled.
	ctx2, cancel2 := context.WithCancel(context.Background())
	ls2, err := f.Checkout(ctx2, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.Hold(ls2[0])
	cancel2()
	waitFor(t, "the held lease given back", func() bool { return f.Stats(a).Cancelled == 1 })
	if st := f.Stats(a); st.InFlight != 0 {
		t.Fatalf("in flight %d after a held lease's context ended", st.InFlight)
	}
	mustValid(t, f.Pool)
}
