package pool

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestLeaseContextRelease: a lease whose context ends before Record is
// given back, counted as cancelled; a later Record is a no-op.
func TestLeaseContextRelease(t *testing.T) {
	cases := []struct {
		name  string
		trial bool
	}{{"closed", false}, {"half-open trial", true}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, Config{})
			f.Add(a, Public)
			if tc.trial {
				f.record(t, a, refusedO, 0)
				f.clock.Advance(time.Minute)
			}
			ctx, cancel := context.WithCancel(context.Background())
			ls, err := f.Checkout(ctx, 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			if ls[0].Trial() != tc.trial {
				t.Fatalf("Trial() = %v", ls[0].Trial())
			}
			if st := f.Stats(a); st.InFlight != 1 {
				t.Fatalf("in_flight %d before cancel", st.InFlight)
			}
			cancel()
			waitFor(t, "the lease to be released", func() bool { return f.Stats(a).InFlight == 0 })
			st := f.Stats(a)
			if st.Cancelled != 1 || st.Successes != 0 {
				t.Fatalf("after release: %+v", st)
			}
			f.Record(ls[0], okO, time.Millisecond) // too late: no-op
			st = f.Stats(a)
			if st.Successes != 0 || st.InFlight != 0 || st.Measured {
				t.Fatalf("Record after release counted: %+v", st)
			}
			if tc.trial {
				// The trial came back: one more may be handed out.
				if l := f.one(t); !l.Trial() {
					t.Fatal("the released trial was not handed out again")
				}
			}
			mustValid(t, f.Pool)
		})
	}
}

// TestLeaseRecordStopsRelease: Record before the context ends wins; the
// context's end then changes nothing.
func TestLeaseRecordStopsRelease(t *testing.T) {
	f := newFixture(t, Config{})
	f.Add(a, Public)
	ctx, cancel := context.WithCancel(context.Background())
	ls, err := f.Checkout(ctx, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.Record(ls[0], okO, time.Millisecond)
	cancel()
	// Nothing to wait for: the release was unregistered. Give a stray one
	// every chance to run, then check nothing changed.
	for range 100 {
		if st := f.Stats(a); st.Cancelled != 0 || st.InFlight != 0 || st.Successes != 1 {
			t.Fatalf("stats %+v", st)
		}
		waitFor(t, "a yield", func() bool { return true })
	}
}

func TestCheckoutEndedContext(t *testing.T) {
	f := newFixture(t, Config{})
	f.Add(a, Public)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ls, err := f.Checkout(ctx, 1, nil)
	if ls != nil || !errors.Is(err, ErrNoneAvailable) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Checkout on an ended context: %v %v", ls, err)
	}
	if st := f.Stats(a); st.InFlight != 0 {
		t.Fatalf("in_flight %d", st.InFlight)
	}
}

// TestMaxInFlight: no instance carries more than MaxInFlight leases.
func TestMaxInFlight(t *testing.T) {
	cases := []struct {
		max, instances, want int
	}{
		{0, 3, 6}, // default 2 each
		{1, 3, 3},
		{3, 2, 6},
		{-1, 2, 50}, // unlimited: as many as asked
	}
	for _, tc := range cases {
		f := newFixture(t, Config{MaxInFlight: tc.max})
		for i := range tc.instances {
			f.Add(string(rune('a'+i)), Public)
		}
		got := 0
		for range 50 {
			ls, err := f.Checkout(context.Background(), 1, nil)
			if err != nil {
				if !errors.Is(err, ErrNoneAvailable) {
					t.Fatal(err)
				}
				break
			}
			got += len(ls)
		}
		if got != tc.want {
			t.Errorf("max %d over %d instances: %d leases, want %d", tc.max, tc.instances, got, tc.want)
		}
		limit := tc.max
		if limit == 0 {
			limit = DefaultMaxInFlight
		}
		for _, st := range f.Snapshot() {
			if limit > 0 && st.InFlight > limit {
				t.Errorf("%s: in_flight %d > %d", st.URL, st.InFlight, limit)
			}
		}
	}
}

// TestCheckoutMany: several leases in one step, best first, distinct.
func TestCheckoutMany(t *testing.T) {
	f := newFixture(t, Config{MaxInFlight: 1})
	f.Seed([]Prior{{a, 300 * time.Millisecond}, {b, 100 * time.Millisecond}, {c, 200 * time.Millisecond}})
	ls, err := f.Checkout(context.Background(), 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 2 || ls[0].Instance() != b || ls[1].Instance() != c {
		t.Fatalf("leases %v, %v", ls[0].Instance(), ls[1].Instance())
	}
	ls2, err := f.Checkout(context.Background(), 5, nil)
	if err != nil || len(ls2) != 1 || ls2[0].Instance() != a {
		t.Fatalf("second checkout: %v %v", ls2, err)
	}
	if _, err := f.Checkout(context.Background(), 1, nil); !errors.Is(err, ErrNoneAvailable) {
		t.Fatalf("all full: %v", err)
	}
	if _, err := f.Checkout(context.Background(), 0, nil); !errors.Is(err, ErrNoneAvailable) {
		t.Fatalf("count 0: %v", err)
	}
}

func TestCheckoutSkip(t *testing.T) {
	f := newFixture(t, Config{})
	f.Seed([]Prior{{a, 100 * time.Millisecond}, {b, 200 * time.Millisecond}, {c, 300 * time.Millisecond}})
	asked := map[string]int{}
	ls, err := f.Checkout(context.Background(), 1, func(u string) bool { asked[u]++; return u == a })
	if err != nil || ls[0].Instance() != b {
		t.Fatalf("skip a: %v %v", ls, err)
	}
	if asked[c] != 0 {
		t.Fatalf("skip asked about %s, which could not make the cut: %v", c, asked)
	}
	if _, err := f.Checkout(context.Background(), 1, func(string) bool { return true }); !errors.Is(err, ErrNoneAvailable) {
		t.Fatalf("skip all: %v", err)
	}
}

// TestRecordIdempotent: a second Record, a foreign lease, a nil lease and a
// lease on a removed instance change nothing.
func TestRecordIdempotent(t *testing.T) {
	f := newFixture(t, Config{})
	f.Add(a, Public)
	l := f.one(t)
	f.Record(l, okO, time.Second)
	f.Record(l, refusedO, time.Second)
	f.Record(nil, refusedO, 0)
	other := New(Config{Clock: f.clock})
	other.Add(a, Public)
	ls, _ := other.Checkout(context.Background(), 1, nil)
	f.Record(ls[0], refusedO, 0)
	st := f.Stats(a)
	if st.Successes != 1 || st.Refusals != 0 || st.Circuit != Closed || st.InFlight != 0 {
		t.Fatalf("stats %+v", st)
	}

	l = f.one(t)
	f.Remove(a)
	f.Add(a, Public)
	f.Record(l, refusedO, 0)
	if st := f.Stats(a); st.Refusals != 0 || st.Successes != 0 || st.InFlight != 0 || st.Circuit != Closed {
		t.Fatalf("a lease on the removed instance reached the new one: %+v", st)
	}
	mustValid(t, f.Pool)
}

// TestRecordNoAlloc: Record allocates nothing, with or without events.
func TestRecordNoAlloc(t *testing.T) {
	f := newFixture(t, Config{MaxInFlight: -1})
	f.ev = nil
	f.Pool.onEvent = func(Event) {}
	for i := range 100 {
		f.Add(string(rune('A'+i)), Public)
	}
	outs := []Outcome{okO, softO, refusedO, failedO, cancelO}
	ls := make([]*Lease, 0, 1000)
	for range 1000 {
		f.clock.Advance(time.Hour) // every cooldown ends: trials too
		l, err := f.Checkout(context.Background(), 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l[0])
	}
	i := 0
	allocs := testing.AllocsPerRun(len(ls)-1, func() {
		f.Record(ls[i], outs[i%len(outs)], time.Duration(i)*time.Millisecond)
		i++
	})
	if allocs != 0 {
		t.Fatalf("Record allocates %v times per call", allocs)
	}
}

// TestFastFailureIsNotFast: a refusal in 30 ms never makes an instance
// look faster; a slow failure makes it look slower.
func TestFastFailureIsNotFast(t *testing.T) {
	f := newFixture(t, Config{})
	f.Seed([]Prior{{a, 800 * time.Millisecond}, {b, 1000 * time.Millisecond}})
	f.record(t, a, okO, 800*time.Millisecond)
	f.record(t, b, okO, 1000*time.Millisecond)
	f.clock.Advance(time.Hour)
	f.record(t, a, refusedO, 30*time.Millisecond)
	if st := f.Stats(a); st.LatencyMS != 800 {
		t.Fatalf("a refusal moved the latency to %v", st.LatencyMS)
	}
	f.clock.Advance(time.Hour) // a is half-open now; its failure weighs
	if r := f.Rank(2, nil); r[0] != b {
		t.Fatalf("after a fast refusal, rank %v, want %s first", r, b)
	}
	f.record(t, b, failedO, 5*time.Millisecond)
	if st := f.Stats(b); st.LatencyMS != 1000 {
		t.Fatalf("a fast failure moved the latency to %v", st.LatencyMS)
	}
	f.clock.Advance(time.Hour)
	f.record(t, b, failedO, 10*time.Second)
	if st := f.Stats(b); st.LatencyMS <= 1000 {
		t.Fatalf("a 10 s timeout left the latency at %v", st.LatencyMS)
	}
}

func TestFreeAtSaysWhenEachCandidateFrees(t *testing.T) {
	clk := newClock()
	p := New(Config{Clock: clk, MaxInFlight: 1, OwnMaxInFlight: 2, Cooldown: 30 * time.Second})
	p.Add("https://own.example/", Own)
	p.Seed([]Prior{{URL: "https://busy.example/"}, {URL: "https://open.example/"}, {URL: "https://free.example/"}, {URL: "https://off.example/"}})
	p.Disable("https://off.example/")
	take := func(url string) *Lease {
		t.Helper()
		ls, err := p.Checkout(context.Background(), 1, func(u string) bool { return u != url })
		if err != nil {
			t.Fatalf("checkout %s: %v", url, err)
		}
		return ls[0]
	}
	take("https://busy.example/")
	p.Record(take("https://open.example/"), Outcome{Kind: Refused, Reason: "rate_limited"}, 0)
	own := take("https://own.example/")
	if !own.Own() {
		t.Fatal("a lease on an own instance says it is not own")
	}
	now := clk.Now()
	got := map[string]Free{}
	for _, f := range p.FreeAt(nil) {
		got[f.URL] = f
	}
	if _, ok := got["https://off.example/"]; ok {
		t.Error("a disabled instance is listed")
	}
	want := map[string]Free{
		"https://own.example/":  {At: now, Own: true},            // 1 of 2 out: still free
		"https://busy.example/": {At: now, Busy: true},           // its one slot is out
		"https://open.example/": {At: now.Add(30 * time.Second)}, // its cooldown
		"https://free.example/": {At: now},
	}
	for u, w := range want {
		g, ok := got[u]
		if !ok {
			t.Errorf("%s missing", u)
			continue
		}
		if !g.At.Equal(w.At) || g.Own != w.Own || g.Busy != w.Busy {
			t.Errorf("%s: got at=%v own=%v busy=%v, want at=%v own=%v busy=%v", u, g.At.Sub(now), g.Own, g.Busy, w.At.Sub(now), w.Own, w.Busy)
		}
	}
	take("https://own.example/")
	for _, f := range p.FreeAt(func(u string) bool { return u != "https://own.example/" }) {
		if !f.Busy {
			t.Errorf("own instance with both of its slots out is not busy: %+v", f)
		}
	}
}

func TestCheckoutOwnTakesOnlyOwnInstances(t *testing.T) {
	p := New(Config{Clock: newClock(), OwnMaxInFlight: 1})
	p.Seed([]Prior{{URL: "https://fast-public.example/", Prior: time.Millisecond}})
	p.Add("https://own-b.example/", Own)
	p.Add("https://own-a.example/", Own)
	got := map[string]bool{}
	for range 2 {
		ls, err := p.CheckoutOwn(context.Background(), 1, nil)
		if err != nil {
			t.Fatalf("CheckoutOwn: %v", err)
		}
		if !ls[0].Own() {
			t.Fatalf("CheckoutOwn handed out %s, not an own instance", ls[0].Instance())
		}
		got[ls[0].Instance()] = true
	}
	if len(got) != 2 {
		t.Fatalf("two checkouts took %v; want both own instances (each takes one at a time)", got)
	}
	if _, err := p.CheckoutOwn(context.Background(), 1, nil); !errors.Is(err, ErrNoneAvailable) {
		t.Fatalf("both own instances full: %v, want ErrNoneAvailable (never the public one)", err)
	}
}
