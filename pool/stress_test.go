package pool

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestStress: 64 goroutines check out and record random outcomes while the
// clock runs and readers read; then every lease is accounted for exactly
// once and the invariants hold: no negative in_flight, no open instance
// handed out, at most one trial lease per half-open instance, never more
// than MaxInFlight on a closed one.
func TestStress(t *testing.T) {
	const (
		workers    = 64
		iterations = 250
		instances  = 64
		maxIF      = 3
	)
	f := newFixture(t, Config{
		Cooldown: 500 * time.Millisecond, MaxCooldown: 5 * time.Second,
		MaxInFlight: maxIF, Jitter: 0.3, MinInterval: 100 * time.Millisecond,
	})
	f.ev = nil
	var nEvents atomic.Int64
	f.Pool.onEvent = func(Event) { nEvents.Add(1) }
	var priors []Prior
	for i := range instances {
		priors = append(priors, Prior{fmt.Sprint("https://i", i, ".example/"), time.Duration(200+100*i) * time.Millisecond})
	}
	f.Seed(priors)

	// Checked at the moment of handing out, under the pool's lock.
	f.Pool.checkoutHook = func(in *instance, s *slot, nowM int64) {
		switch {
		case s.disabled:
			t.Errorf("%s handed out while disabled", in.url)
		case s.circuit == Open && nowM < s.until:
			t.Errorf("%s handed out while open", in.url)
		case s.circuit == HalfOpen && s.trialOut:
			t.Errorf("%s: second trial lease handed out", in.url)
		case s.circuit == Closed && s.inFlight >= maxIF:
			t.Errorf("%s handed out with %d in flight", in.url, s.inFlight)
		case s.inFlight < 0:
			t.Errorf("%s: in_flight %d", in.url, s.inFlight)
		}
	}

	var (
		handed atomic.Int64
		nTrial atomic.Int64
		nNone  atomic.Int64
		trials sync.Map // url -> *atomic.Int32: trial leases held
	)
	trialsOf := func(url string) *atomic.Int32 {
		v, _ := trials.LoadOrStore(url, new(atomic.Int32))
		return v.(*atomic.Int32)
	}
	kinds := []Outcome{okO, okO, okO, okO, okO, okO, okO, okO, okO, okO, okO, softO, refusedO, failedO, cancelO,
		{Kind: Refused, Reason: "rate_limited", RetryAfter: 3 * time.Second}}

	stop := make(chan struct{})
	var readers sync.WaitGroup
	readers.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, st := range f.Snapshot() {
				if st.InFlight < 0 || st.InFlight > maxIF+workers || st.Health < 0 || st.Health > 100 ||
					!(st.Quality.Fullness >= 0 && st.Quality.Fullness <= 1) {
					t.Errorf("snapshot: %+v", st)
				}
			}
			f.Rank(3, nil)
			f.Export()
			f.Sweep()
			if err := f.validate(); err != nil {
				t.Error(err)
			}
		}
	})

	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(42, uint64(w)))
			for range iterations {
				if r.IntN(4) == 0 {
					f.clock.Advance(time.Duration(r.IntN(1500)) * time.Millisecond)
				}
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				abandon := r.IntN(10) == 0
				if abandon || r.IntN(3) == 0 {
					ctx, cancel = context.WithCancel(context.Background())
				}
				ls, err := f.Checkout(ctx, 1+r.IntN(3), func(u string) bool { return u == "https://i0.example/" && w%2 == 0 })
				if err != nil {
					cancel()
					if !errors.Is(err, ErrNoneAvailable) {
						t.Errorf("Checkout: %v", err)
					}
					f.clock.Advance(2 * time.Second) // let cooldowns end
					nNone.Add(1)
					continue
				}
				handed.Add(int64(len(ls)))
				for _, l := range ls {
					if l.Trial() {
						nTrial.Add(1)
						if n := trialsOf(l.Instance()).Add(1); n > 1 {
							t.Errorf("%s: %d trial leases held at once", l.Instance(), n)
						}
					}
				}
				if abandon {
					for _, l := range ls {
						if l.Trial() {
							trialsOf(l.Instance()).Add(-1)
						}
					}
					cancel() // the pool takes them back by itself
					continue
				}
				for _, l := range ls {
					if l.Trial() {
						trialsOf(l.Instance()).Add(-1)
					}
					f.Record(l, kinds[r.IntN(len(kinds))], time.Duration(r.IntN(3000))*time.Millisecond)
					if r.IntN(3) == 0 { // what its answer held: thin at times
						f.Learn(l.Instance(), Answer{Hits: r.IntN(11), Page: 10, Engines: []string{"wikipedia"},
							Suspended: [][2]string{{"google", "Suspended: CAPTCHA"}}[:r.IntN(2)]})
					}
				}
				cancel()
			}
		})
	}
	wg.Wait()
	close(stop)
	readers.Wait()

	// Abandoned leases come back on the runtime's own goroutines.
	waitFor(t, "every lease back", func() bool {
		for _, st := range f.Snapshot() {
			if st.InFlight != 0 {
				return false
			}
		}
		return true
	})
	mustValid(t, f.Pool)
	var recorded uint64
	for _, st := range f.Snapshot() {
		recorded += st.Successes + st.Failures + st.Refusals + st.Softs + st.Cancelled
		if st.Circuit == HalfOpen {
			f.mu.RLock()
			in := f.byURL[st.URL]
			trialOut := f.slots[in.idx].trialOut
			f.mu.RUnlock()
			if trialOut {
				t.Errorf("%s: trial still out with nothing in flight", st.URL)
			}
		}
	}
	if recorded != uint64(handed.Load()) {
		t.Fatalf("%d leases handed out, %d accounted for", handed.Load(), recorded)
	}
	if handed.Load() < workers*iterations/4 || nEvents.Load() < 100 || nTrial.Load() < 50 {
		t.Fatalf("the stress did too little: %d none, %d leases, %d trials, %d events", nNone.Load(), handed.Load(), nTrial.Load(), nEvents.Load())
	}
	t.Logf("%d none, %d leases, %d trials, %d events", nNone.Load(), handed.Load(), nTrial.Load(), nEvents.Load())
}
