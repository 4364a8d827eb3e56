package pool

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"testing"
	"time"
)

const (
	own  = "https://own.example/"
	off  = "https://off.example/"
	half = "https://half.example/"
	gone = "https://gone.example/"
)

// learnedFixture builds a pool that knows a bit of everything.
func learnedFixture(t testing.TB) *fixture {
	f := newFixture(t, Config{})
	f.Seed([]Prior{{a, 900 * time.Millisecond}, {b, 400 * time.Millisecond}, {c, 0}, {off, 100 * time.Millisecond}, {half, time.Second}})
	f.Add(own, Own)
	f.Remove(gone)
	f.record(t, a, okO, 600*time.Millisecond)
	f.record(t, a, softO, 700*time.Millisecond)
	f.record(t, own, okO, 1500*time.Millisecond)
	f.record(t, half, refusedO, 0) // 60 s
	f.clock.Advance(2 * time.Minute)
	f.Sweep() // half: half-open
	f.record(t, b, Outcome{Kind: Refused, Reason: "rate_limited", RetryAfter: 5 * time.Minute}, 0)
	for range DefaultFailStrikes {
		f.record(t, c, failedO, 3*time.Second) // the last opens it: 60 s
	}
	f.Disable(off)
	return f
}

func snapshotJSON(t testing.TB, p *Pool) string {
	t.Helper()
	b, err := json.Marshal(p.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func roundTrip(t testing.TB, states []InstanceState) []InstanceState {
	t.Helper()
	data, err := json.Marshal(states)
	if err != nil {
		t.Fatal(err)
	}
	var back []InstanceState
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	return back
}

// TestExportImport: what Export gave, through JSON and Import into a new
// pool at the same time, ranks and reads the same.
func TestExportImport(t *testing.T) {
	f := learnedFixture(t)
	states := roundTrip(t, f.Export())
	if last := states[len(states)-1]; !last.Removed || last.URL != gone {
		t.Fatalf("the removal is not exported last: %+v", last)
	}

	g := newFixture(t, Config{})
	g.clock.Set(f.clock.Now())
	g.Import(states)
	mustValid(t, g.Pool)
	if x, y := snapshotJSON(t, f.Pool), snapshotJSON(t, g.Pool); x != y {
		t.Fatalf("snapshots differ:\n%s\n%s", x, y)
	}
	if x, y := f.Rank(0, nil), g.Rank(0, nil); !slices.Equal(x, y) || len(x) != 3 {
		t.Fatalf("ranks differ: %v vs %v", x, y)
	}
	if x, y := roundTrip(t, g.Export()), states; !equalJSON(t, x, y) {
		t.Fatal("export of the import differs")
	}
	// The operator's removal came along.
	g.Seed([]Prior{{gone, 0}, {a, 0}})
	if got, want := urls(g.Snapshot()), []string{a, off, own}; !slices.Equal(got, want) {
		t.Fatalf("after seeding: %v, want %v (gone must not come back)", got, want)
	}
	// Same circuits, same cooldown arithmetic after.
	g2 := newFixture(t, Config{})
	g2.clock.Set(f.clock.Now())
	g2.Import(states)
	g2.record(t, half, refusedO, 0) // its trial fails: 2 min now
	if st := g2.Stats(half); st.Circuit != Open || !st.CooldownUntil.Equal(g2.clock.Now().Add(2*time.Minute)) {
		t.Fatalf("half after import: %+v", st)
	}
}

func equalJSON(t testing.TB, x, y any) bool {
	bx, err := json.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	by, err := json.Marshal(y)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(bx, by)
}

// TestImportAfterDowntime: cooldowns that ended while the gateway was down
// have ended; running ones keep running.
func TestImportAfterDowntime(t *testing.T) {
	f := learnedFixture(t)
	states := roundTrip(t, f.Export())
	cases := []struct {
		down  time.Duration
		b, c  Circuit
		bLeft time.Duration
	}{
		{0, Open, Open, 5 * time.Minute},
		{30 * time.Second, Open, Open, 4*time.Minute + 30*time.Second},
		{time.Minute, Open, HalfOpen, 4 * time.Minute},
		{10 * time.Minute, HalfOpen, HalfOpen, 0},
	}
	for _, tc := range cases {
		g := newFixture(t, Config{})
		g.clock.Set(f.clock.Now())
		g.clock.Advance(tc.down)
		g.Import(states)
		if got := g.circuit(b); got != tc.b {
			t.Errorf("down %s: b %s, want %s", tc.down, got, tc.b)
		}
		if got := g.circuit(c); got != tc.c {
			t.Errorf("down %s: c %s, want %s", tc.down, got, tc.c)
		}
		if tc.bLeft > 0 {
			if left := g.Stats(b).CooldownUntil.Sub(g.clock.Now()); left != tc.bLeft {
				t.Errorf("down %s: b has %s left, want %s", tc.down, left, tc.bLeft)
			}
			if slices.Contains(g.Rank(0, nil), b) {
				t.Errorf("down %s: open b ranked", tc.down)
			}
		} else if l := g.lease(t, b); !l.Trial() {
			t.Errorf("down %s: b's lease is not a trial", tc.down)
		}
		if got := g.Stats(half).Circuit; got != HalfOpen {
			t.Errorf("down %s: half %s", tc.down, got)
		}
		mustValid(t, g.Pool)
	}
}

// TestImportSanitizes: nonsense in a state file cannot poison the pool.
func TestImportSanitizes(t *testing.T) {
	f := newFixture(t, Config{})
	f.Import([]InstanceState{
		{URL: a, Measured: true, LatencyMS: math.NaN(), FailureRate: math.Inf(1), PriorMS: -5},
		{URL: b, Measured: true, LatencyMS: 1e300, FailureRate: -3, ConsecutiveFailures: -2, Tier: 9, Circuit: 7},
		{URL: c, Circuit: Open, CooldownUntil: f.clock.Now().Add(1000 * time.Hour), CooldownMS: -1, LastOutcome: "bogus"},
		{URL: ""},
	})
	mustValid(t, f.Pool)
	if st := f.Stats(a); st.Measured || st.FailureRate != 0 || st.PriorMS != 2500 {
		t.Errorf("a: %+v", st)
	}
	if st := f.Stats(b); st.LatencyMS != maxLatencyMS || st.FailureRate != 0 || st.ConsecutiveFailures != 0 || st.Tier != Public || st.Circuit != Closed {
		t.Errorf("b: %+v", st)
	}
	if st := f.Stats(c); !st.CooldownUntil.Equal(f.clock.Now().Add(DefaultMaxCooldown)) || st.LastOutcome != "" {
		t.Errorf("c: %+v", st)
	}
}

func TestTextNames(t *testing.T) {
	for _, v := range []Circuit{Closed, Open, HalfOpen} {
		b, _ := v.MarshalText()
		var back Circuit
		if err := back.UnmarshalText(b); err != nil || back != v {
			t.Errorf("circuit %s: %v %v", b, back, err)
		}
	}
	for _, v := range []Tier{Public, Own} {
		b, _ := v.MarshalText()
		var back Tier
		if err := back.UnmarshalText(b); err != nil || back != v {
			t.Errorf("tier %s: %v %v", b, back, err)
		}
	}
	for _, v := range []Kind{OK, Soft, Refused, Failed, Cancelled} {
		b, _ := v.MarshalText()
		var back Kind
		if err := back.UnmarshalText(b); err != nil || back != v {
			t.Errorf("kind %s: %v %v", b, back, err)
		}
	}
	for _, v := range []Strategy{EWMA, PrimaryBackup} {
		b, _ := v.MarshalText()
		var back Strategy
		if err := back.UnmarshalText(b); err != nil || back != v {
			t.Errorf("strategy %s: %v %v", b, back, err)
		}
	}
	want := map[string]string{
		Closed.String(): "closed", Open.String(): "open", HalfOpen.String(): "half_open",
		Public.String(): "public", Own.String(): "own",
		OK.String(): "ok", Soft.String(): "soft", Refused.String(): "refused", Failed.String(): "failed", Cancelled.String(): "cancelled",
		EWMA.String(): "ewma", PrimaryBackup.String(): "primary_backup",
		Circuit(9).String(): "circuit(9)",
	}
	for got, w := range want {
		if got != w {
			t.Errorf("name %q, want %q", got, w)
		}
	}
	var c Circuit
	var tr Tier
	var k Kind
	if c.UnmarshalText([]byte("ajar")) == nil || tr.UnmarshalText([]byte("x")) == nil || k.UnmarshalText([]byte("")) == nil {
		t.Error("unknown names accepted")
	}
	if _, err := ParseStrategy("round_robin"); err == nil {
		t.Error("unknown strategy accepted")
	}
}

// FuzzImport: whatever JSON a state file holds, Import leaves a valid pool
// whose stats are in range, and export/import is stable after one pass.
func FuzzImport(f *testing.F) {
	lf := learnedFixture(f)
	seed, err := json.Marshal(lf.Export())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`[{"url":"x","circuit":"open","cooldown_until":"2025-03-01T12:05:00Z","latency_ms":-1,"measured":true}]`))
	f.Add([]byte(`[{"url":"x","tier":"own","removed":true},{"url":"x","tier":"own"}]`))
	f.Add([]byte(`[{"url":"y","circuit":"half_open","failure_rate":2,"trips":99,"last_outcome":"ok"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var states []InstanceState
		if json.Unmarshal(data, &states) != nil {
			return
		}
		g := newFixture(t, Config{})
		g.Import(states)
		mustValid(t, g.Pool)
		for _, st := range g.Snapshot() {
			if st.Health < 0 || st.Health > 100 || math.IsNaN(st.LatencyMS) || st.LatencyMS < 0 || st.FailureRate < 0 || st.FailureRate > 1 {
				t.Fatalf("stats out of range: %+v", st)
			}
		}
		// A checkout and a record still work.
		if g.Len() > 0 {
			g.Rank(0, nil)
		}
		once := roundTrip(t, g.Export())
		h := newFixture(t, Config{})
		h.clock.Set(g.clock.Now())
		h.Import(once)
		if !equalJSON(t, roundTrip(t, h.Export()), once) {
			t.Fatalf("export/import not stable:\n%s", mustJSON(t, once))
		}
	})
}

func mustJSON(t testing.TB, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLatencyIsWhatStatsSays: Latency gives Stats' measured latency
// average, and nothing for a prior or a url the pool does not hold.
func TestLatencyIsWhatStatsSays(t *testing.T) {
	const u = "https://a.example/"
	f := newFixture(t, Config{})
	f.Seed([]Prior{{URL: u, Prior: 300 * time.Millisecond}})
	if d, ok := f.Latency(u); ok || d != 0 {
		t.Fatalf("only a prior: %s %v, want none", d, ok)
	}
	f.record(t, u, okO, 120*time.Millisecond)
	f.record(t, u, okO, 200*time.Millisecond)
	st := f.Stats(u)
	if d, ok := f.Latency(u); !ok || d != time.Duration(st.LatencyMS*float64(time.Millisecond)) || d <= 120*time.Millisecond {
		t.Fatalf("measured: %s %v, want Stats' %.1f ms", d, ok, st.LatencyMS)
	}
	if d, ok := f.Latency("https://unknown.example/"); ok || d != 0 {
		t.Fatalf("unknown url: %s %v, want none", d, ok)
	}
}
