package pool

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// FuzzOps reads the input as a program of pool operations (checkouts,
// records, answers' quality, clock moves, operator and directory changes,
// export/import)
// and checks after every step that the pool's counters agree with the
// leases actually out.
func FuzzOps(f *testing.F) {
	f.Add([]byte{0, 1, 1, 0, 2, 3, 0, 9, 0, 1, 1, 2, 0})
	f.Add([]byte{0, 3, 1, 2, 1, 2, 2, 200, 0, 1, 1, 0, 3, 0, 0, 1, 1, 1})
	f.Add([]byte{4, 1, 5, 1, 0, 2, 6, 0, 7, 8, 0, 1, 10, 11, 0, 2})
	f.Add([]byte{13, 3, 13, 5, 0, 1, 2, 1, 4, 200, 11, 0, 12, 0, 13, 1, 10, 0})
	f.Fuzz(func(t *testing.T, prog []byte) {
		urlsOf := []string{a, b, c, own}
		fx := newFixture(t, Config{MaxInFlight: 2, SoftStrikes: 2, Cooldown: time.Second, MaxCooldown: 8 * time.Second, Jitter: 0.1})
		fx.Seed([]Prior{{a, 100 * time.Millisecond}, {b, 200 * time.Millisecond}, {c, 300 * time.Millisecond}})
		var out []*Lease
		next := func() byte {
			if len(prog) == 0 {
				return 0
			}
			v := prog[0]
			prog = prog[1:]
			return v
		}
		for step := 0; len(prog) > 0 && step < 500; step++ {
			op := next() % 14
			arg := next()
			u := urlsOf[int(arg)%len(urlsOf)]
			switch op {
			case 0, 1: // checkout
				ls, _ := fx.Checkout(context.Background(), 1+int(arg%3), nil)
				out = append(out, ls...)
			case 2, 3: // record the oldest lease out
				if len(out) > 0 {
					o := Outcome{Kind: Kind(arg % 6), Reason: "r", RetryAfter: time.Duration(arg/6) * 100 * time.Millisecond}
					fx.Record(out[0], o, time.Duration(next())*10*time.Millisecond)
					out = out[1:]
				}
			case 4:
				fx.clock.Advance(time.Duration(arg) * 50 * time.Millisecond)
			case 5:
				fx.Add(u, Tier(arg%2))
			case 6:
				fx.Remove(u)
			case 7:
				fx.Disable(u)
			case 8:
				fx.Enable(u)
			case 9:
				fx.Seed([]Prior{{urlsOf[int(arg)%3], time.Duration(arg) * time.Millisecond}, {urlsOf[int(arg+1)%3], 0}})
			case 10:
				fx.Reset()
			case 11:
				fx.Sweep()
			case 12:
				fx.Import(roundTrip(t, fx.Export()))
			case 13: // an answer's quality: thin when arg is odd
				a := Answer{Hits: int(arg % 11), Page: 10, Engines: []string{"wikipedia"}}
				if arg%2 == 1 {
					a.Suspended = [][2]string{{"google", "Suspended: CAPTCHA"}}
				}
				fx.Learn(u, a)
			}
			if err := checkLeases(fx.Pool, out); err != nil {
				t.Fatalf("step %d (op %d): %v", step, op, err)
			}
		}
		for _, l := range out {
			fx.Record(l, okO, time.Millisecond)
		}
		if err := checkLeases(fx.Pool, nil); err != nil {
			t.Fatalf("after recording every lease: %v", err)
		}
	})
}

// checkLeases checks the pool's invariants, and that every instance's
// in_flight counts exactly the leases out on it and its trial flag matches
// the current trial lease out, if any.
func checkLeases(p *Pool, out []*Lease) error {
	if err := p.validate(); err != nil {
		return err
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	inFlight := map[*instance]int32{}
	trials := map[*instance]int{}
	for _, l := range out {
		if l.done {
			return fmt.Errorf("%s: a lease out is marked done", l.url)
		}
		inFlight[l.in]++
		if l.trial && l.epoch == l.in.epoch {
			trials[l.in]++
		}
	}
	for i, in := range p.list {
		s := &p.slots[i]
		if s.inFlight != inFlight[in] {
			return fmt.Errorf("%s: in_flight %d, %d leases out", in.url, s.inFlight, inFlight[in])
		}
		if trials[in] > 1 || s.trialOut != (trials[in] == 1) {
			return fmt.Errorf("%s: trial out %v, %d current trial leases", in.url, s.trialOut, trials[in])
		}
	}
	return nil
}
