package proxy

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/internal/clock"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy/instance"
	"github.com/searxgate/searxgate/proxy/polite"
	"github.com/searxgate/searxgate/sim"
)

// testClock is the tests' clock: a clock.Fake's time, with the deadline,
// hedge and wake-up timers made by timers (by default manualTimers),
// which fire only when a test says.
type testClock struct {
	*clock.Fake
	timers func(d time.Duration) (<-chan time.Time, func())
	// upstreamTakes, when set, moves the clock on that much each time
	// the fleet reads it (once a request): every upstream request then
	// takes that long on the proxy's clock.
	upstreamTakes time.Duration
}

// fleetNow is the fleet's clock (see upstreamTakes).
func (c *testClock) fleetNow() time.Time {
	if c.upstreamTakes > 0 {
		c.Advance(c.upstreamTakes)
	}
	return c.Now()
}

func (c *testClock) NewTimer(d time.Duration) (<-chan time.Time, func() bool) {
	ch, stop := c.timers(d)
	return ch, func() bool { stop(); return true }
}

// timersOf is a Config.Clock for newEnv whose timers are made by f.
func timersOf(f func(d time.Duration) (<-chan time.Time, func())) *testClock {
	return &testClock{timers: f}
}

// manualTimers hands out timers that fire only when the test says.
type manualTimers struct {
	armed chan chan time.Time // each hedge timer as it is made
}

func newManualTimers() *manualTimers { return &manualTimers{armed: make(chan chan time.Time, 16)} }

func (m *manualTimers) timer(d time.Duration) (<-chan time.Time, func()) {
	ch := make(chan time.Time, 1)
	if d < time.Minute { // hedges; the deadline timer never fires
		select {
		case m.armed <- ch:
		default: // nobody will fire it: it never fires
		}
	}
	return ch, func() {}
}

// fireHedge fires the next hedge timer once the search has made it.
func (m *manualTimers) fireHedge() {
	(<-m.armed) <- time.Now()
}

type testEnv struct {
	fleet  *sim.Fleet
	pool   *pool.Pool
	proxy  *Proxy
	clock  *clock.Fake
	timers *manualTimers
	urls   []string
}

// newEnv starts an in-memory fleet and a proxy over it. Instances are
// ranked in order (the first is tried first) through their priors, and
// their terms are known: JSON where the instance config enables it.
func newEnv(t *testing.T, cfg Config, instances ...sim.InstanceConfig) *testEnv {
	t.Helper()
	return newEnvAt(t, envStart, cfg, instances...)
}

// envStart is when newEnv's fake clock starts.
var envStart = time.Unix(1_800_000_000, 0)

// newEnvAt is newEnv with the fake clock starting at start.
func newEnvAt(t *testing.T, start time.Time, cfg Config, instances ...sim.InstanceConfig) *testEnv {
	t.Helper()
	return newEnvPool(t, start, envPool{}, cfg, instances...)
}

// envPool shapes the pool newEnvPool builds.
type envPool struct {
	maxInFlight int  // searches an instance takes at a time; 0: the pool's default
	unranked    bool // every prior unknown, instead of ranked in order
}

// newEnvPool is newEnvAt over a pool shaped by ep: the proxy, its
// instance records and the slot waiters all see that one pool.
func newEnvPool(t *testing.T, start time.Time, ep envPool, cfg Config, instances ...sim.InstanceConfig) *testEnv {
	t.Helper()
	fake := clock.NewFake(start)
	tc, _ := cfg.Clock.(*testClock)
	if tc == nil {
		tc = &testClock{}
	}
	tc.Fake = fake
	fleet, err := sim.Start(sim.Config{InMemory: true, Seed: 1, Instances: instances, Now: tc.fleetNow})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fleet.Close() })
	pl := pool.New(pool.Config{Clock: tc, MaxInFlight: ep.maxInFlight})
	urls := fleet.URLs()
	var priors []pool.Prior
	for i, u := range urls {
		pr := pool.Prior{URL: u, Prior: time.Duration(i+1) * 100 * time.Millisecond}
		if ep.unranked {
			pr.Prior = 0
		}
		priors = append(priors, pr)
	}
	pl.Seed(priors)
	timers := newManualTimers()
	cfg.Pool = pl
	cfg.Upstream = UpstreamConfig{UserAgent: "searxgate-test/1", Dial: fleet.Dial}
	if tc.timers == nil {
		tc.timers = timers.timer
	}
	cfg.Clock = tc
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	for i, u := range urls {
		json := No
		if instances[i].JSON {
			json = Yes
		}
		p.setCaps(u, func(c *Caps) { *c = Caps{ConfigAt: fake.Now(), ConfigOK: true, JSON: json, JSONAt: fake.Now()} })
	}
	return &testEnv{fleet: fleet, pool: pl, proxy: p, clock: fake, timers: timers, urls: urls}
}

func (e *testEnv) search(t *testing.T, q string) (*Response, error) {
	t.Helper()
	return e.proxy.Search(context.Background(), Request{Query: q, PageNo: 1, Format: FormatJSON})
}

func (e *testEnv) searches(i int) uint64 { return e.fleet.Instances()[i].Truth().Searches }

func TestSearchAnswersFromTheBestInstance(t *testing.T) {
	e := newEnv(t, Config{},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	res, err := e.search(t, "hello world")
	if err != nil {
		t.Fatal(err)
	}
	if res.Instance != e.urls[0] || res.Attempts != 1 || res.Cached {
		t.Fatalf("answered by %s in %d attempts (cached %v); want the first instance in 1", res.Instance, res.Attempts, res.Cached)
	}
	r, err := res.Results()
	if err != nil || len(r.Results) == 0 || r.Query != "hello world" {
		t.Fatalf("results %+v, %v", r, err)
	}
	if got := e.fleet.Instances()[0].Truth().Formats["json"]; got != 1 {
		t.Fatalf("the instance got %d JSON searches, want 1", got)
	}
}

func TestRefusalMovesOnAndOpensTheCircuit(t *testing.T) {
	e := newEnv(t, Config{},
		sim.InstanceConfig{Behaviour: sim.RateLimitSeconds, RateBurst: 1, RetryAfter: 10 * time.Minute, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	if _, err := e.search(t, "one"); err != nil { // the limiter's one free search
		t.Fatal(err)
	}
	res, err := e.search(t, "two")
	if err != nil {
		t.Fatal(err)
	}
	if res.Instance != e.urls[1] || res.Attempts != 2 {
		t.Fatalf("answered by %s in %d attempts; want the second in 2", res.Instance, res.Attempts)
	}
	st := e.pool.Stats(e.urls[0])
	if st.Circuit != pool.Open || st.LastReason != pool.Reason(detect.RateLimited) {
		t.Fatalf("refusing instance: circuit %v, reason %q", st.Circuit, st.LastReason)
	}
	// Inside its Retry-After nothing goes to it...
	before := e.searches(0)
	for _, q := range []string{"three", "four", "five"} {
		if _, err := e.search(t, q); err != nil {
			t.Fatal(err)
		}
	}
	if e.searches(0) != before {
		t.Fatal("a search went to an instance inside its Retry-After")
	}
	// ...and after it, the instance is half-open: with the other one
	// disabled, its trial answers and closes the circuit.
	e.clock.Advance(11 * time.Minute)
	if c := e.pool.Stats(e.urls[0]).Circuit; c != pool.HalfOpen {
		t.Fatalf("after the cooldown the circuit is %v, want half-open", c)
	}
	e.pool.Disable(e.urls[1])
	if res, err := e.search(t, "six"); err != nil || res.Instance != e.urls[0] {
		t.Fatalf("trial: %v, %v", res, err)
	}
	if e.searches(0) != before+1 || e.pool.Stats(e.urls[0]).Circuit != pool.Closed {
		t.Fatalf("after the trial: %d searches, circuit %v; want 1 and closed", e.searches(0)-before, e.pool.Stats(e.urls[0]).Circuit)
	}
	for _, tr := range e.fleet.Truth() {
		if tr.InsideRetryAfter != 0 {
			t.Fatalf("%d searches inside an announced Retry-After", tr.InsideRetryAfter)
		}
	}
}

func TestNoAnswerSaysWhatWasTried(t *testing.T) {
	e := newEnv(t, Config{},
		sim.InstanceConfig{Behaviour: sim.CloudflareChallenge403, Latency: -1},
		sim.InstanceConfig{Behaviour: sim.Unavailable503, Latency: -1},
		sim.InstanceConfig{Behaviour: sim.Dead})
	_, err := e.search(t, "nobody")
	var na *NoAnswerError
	if !errors.As(err, &na) || !errors.Is(err, ErrNoAnswer) {
		t.Fatalf("err = %v, want a *NoAnswerError", err)
	}
	if len(na.Tried) != 3 {
		t.Fatalf("tried %d instances, want all 3: %+v", len(na.Tried), na.Tried)
	}
	reasons := map[string]string{}
	for _, a := range na.Tried {
		reasons[a.Instance] = a.Outcome + "/" + string(a.Reason)
	}
	want := map[string]string{e.urls[0]: "refused/bot_challenge", e.urls[1]: "refused/unavailable", e.urls[2]: "failed/connection_refused"}
	for u, w := range want {
		if reasons[u] != w {
			t.Errorf("%s: %q, want %q", u, reasons[u], w)
		}
	}
	for _, a := range na.Tried {
		// Each is its instance's own doing, and the refusals say until when
		// their circuits are open.
		if a.Owner != "instance" || a.Own || (a.Outcome == "refused") != !a.Until.IsZero() {
			t.Errorf("%s: owner %q, own %v, until %v; want the instance's, public, an end only for a refusal", a.Instance, a.Owner, a.Own, a.Until)
		}
	}
	// The refusals opened their circuits; the dead one's lone failure did
	// not (a failure opens only the FailStrikes-th time in a row): the
	// next searches try it alone until it does.
	for i := 2; i <= pool.DefaultFailStrikes; i++ {
		_, err = e.search(t, "nobody again")
		if !errors.As(err, &na) || len(na.Tried) != 1 || na.Tried[0].Instance != e.urls[2] {
			t.Fatalf("search %d: %v, want the dead instance alone tried", i, err)
		}
	}
	// Everything is open now: the next search fails at once, saying when
	// the first cooldown ends (60 s, the pool's first cooldown).
	_, err = e.search(t, "nobody again")
	if !errors.As(err, &na) || na.Why != "no_slot" || len(na.Tried) != 0 {
		t.Fatalf("err = %v, want no_slot with nothing tried", err)
	}
	if na.RetryAfter != 60*time.Second {
		t.Fatalf("RetryAfter = %v, want the first cooldown's end, 60s", na.RetryAfter)
	}
}

func TestStaleAnswerWhenNothingAnswers(t *testing.T) {
	e := newEnv(t, Config{CacheTTL: time.Minute},
		sim.InstanceConfig{Behaviour: sim.Flapping, FlapPeriod: time.Hour, Latency: -1, JSON: true})
	res, err := e.search(t, "keep me")
	if err != nil {
		t.Fatal(err)
	}
	if again, err := e.search(t, "keep me"); err != nil || !again.Cached || again.Stale {
		t.Fatalf("repeat: cached %v stale %v err %v; want a fresh cache hit", again.Cached, again.Stale, err)
	}
	// An hour later the instance is down and the answer expired.
	e.clock.Advance(time.Hour + time.Second)
	stale, err := e.search(t, "keep me")
	if err != nil {
		t.Fatalf("no stale answer: %v", err)
	}
	if !stale.Stale || !stale.Cached || string(stale.JSON) != string(res.JSON) {
		t.Fatalf("stale %v cached %v; want the old answer marked stale", stale.Stale, stale.Cached)
	}
}

func TestHedgeStartsTheNextAndTheFirstAnswerWins(t *testing.T) {
	e := newEnv(t, Config{},
		sim.InstanceConfig{Behaviour: sim.Hang, HangFor: 100 * time.Millisecond, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	done := make(chan struct{})
	var res *Response
	var err error
	go func() { res, err = e.search(t, "hedged"); close(done) }()
	e.timers.fireHedge()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if res.Instance != e.urls[1] || res.Attempts != 2 {
		t.Fatalf("answered by %s in %d attempts; want the hedge", res.Instance, res.Attempts)
	}
	// The loser runs on to its own end: the hanging instance drops the
	// connection. That is its failure, recorded although the search was
	// over, and its lease is given back.
	if err := e.proxy.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := e.pool.Stats(e.urls[0])
	if st.InFlight != 0 {
		t.Fatalf("the hedge loser still holds its lease: in flight %d", st.InFlight)
	}
	if st.LastOutcome != "failed" || st.LastReason != pool.Reason(detect.Reset) {
		t.Fatalf("the hedge loser was recorded %s/%s, want failed/reset", st.LastOutcome, st.LastReason)
	}
}

func TestPolitenessSkipsAnInstanceOutOfBudget(t *testing.T) {
	e := newEnv(t, Config{Budget: []Window{{Max: 2, Per: 20 * time.Second}}},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	for _, q := range []string{"a", "b", "c", "d"} {
		if _, err := e.search(t, q); err != nil {
			t.Fatal(err)
		}
	}
	if e.searches(0) != 2 || e.searches(1) != 2 {
		t.Fatalf("searches %d and %d; want 2 each (budget 2 per 20 s)", e.searches(0), e.searches(1))
	}
	// The first window frees 20 s from now, past the deadline: refused at
	// once, saying when.
	_, err := e.search(t, "e")
	var na *NoAnswerError
	if !errors.As(err, &na) || na.Why != "no_slot" || na.RetryAfter != 20*time.Second+polite.Margin {
		t.Fatalf("a 5th search: %v (retry after %v); want no_slot in 20.5s, not a wait", err, na.RetryAfter)
	}
	e.clock.Advance(21 * time.Second)
	if _, err := e.search(t, "f"); err != nil {
		t.Fatalf("after the window: %v", err)
	}
}

func TestTermsDecideFormatAndLinkToken(t *testing.T) {
	e := newEnv(t, Config{},
		sim.InstanceConfig{Behaviour: sim.LinkToken, Latency: -1},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	// Terms unknown: the first search reads /config before it searches.
	for _, u := range e.urls {
		e.proxy.setCaps(u, func(c *Caps) { *c = Caps{} })
	}
	if _, err := e.search(t, "first"); err != nil {
		t.Fatal(err)
	}
	if e.searches(0) != 0 {
		t.Fatal("the first search went to an instance whose /config says link-token")
	}
	if err := e.proxy.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !e.proxy.Instances().Caps(e.urls[0]).LinkToken {
		t.Fatalf("the link-token instance's /config was not read: %+v", e.proxy.Instances().Caps(e.urls[0]))
	}
	before := e.searches(0)
	for _, q := range []string{"second", "third", "fourth"} {
		if _, err := e.search(t, q); err != nil {
			t.Fatal(err)
		}
	}
	if e.searches(0) != before {
		t.Fatal("searches went to an instance with the link-token check on")
	}
	// The healthy instance's /config says the limiter is off, and its
	// first results page lists JSON: JSON from the second search on.
	if got := e.proxy.recs.Ensure(e.urls[1]).Format(e.proxy.recs.Caps(e.urls[1]), false); got != FormatJSON {
		t.Fatalf("format for a JSON instance without limiter: %s, caps %+v", got, e.proxy.Instances().Caps(e.urls[1]))
	}
	if f := e.fleet.Instances()[1].Truth().Formats; f["json"] != 3 || f["html"] != 1 {
		t.Fatalf("the JSON instance was asked %v; want the HTML page once, then JSON 3 times", f)
	}
}

func TestSoftAnswerIsServedWhenNothingBetter(t *testing.T) {
	e := newEnv(t, Config{MaxAttempts: 2},
		sim.InstanceConfig{Behaviour: sim.EmptyEnginesDown, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.EmptyEnginesDown, Latency: -1, JSON: true})
	res, err := e.search(t, "nothing out there")
	if err != nil {
		t.Fatalf("a search every instance answers empty: %v; want the empty answer", err)
	}
	if res.Soft == "" || res.Attempts != 2 {
		t.Fatalf("soft %q after %d attempts; want the soft reason after trying both", res.Soft, res.Attempts)
	}
	if strings.Contains(string(res.JSON), `"results":null`) {
		t.Fatal("results written as null")
	}
	// Both answered alike: the query's own poverty, cached briefly so a
	// repeat costs nothing upstream; after a minute it is asked again.
	before := e.searches(0) + e.searches(1)
	if again, err := e.search(t, "nothing out there"); err != nil || !again.Cached {
		t.Fatalf("the query's poor answer was not cached: %+v, %v", again, err)
	}
	if after := e.searches(0) + e.searches(1); after != before {
		t.Fatalf("a repeat searched upstream: %d searches, want %d", after, before)
	}
	e.clock.Advance(queryFaultTTL + time.Second)
	if again, err := e.search(t, "nothing out there"); err != nil || again.Cached {
		t.Fatalf("the query's poor answer outlived its minute: %+v, %v", again, err)
	}
	// Neither instance was blamed for the query's engines.
	for _, u := range e.urls {
		if st := e.pool.Stats(u); st.Softs != 0 || st.Circuit != pool.Closed || st.Excused == 0 {
			t.Errorf("%s: softs %d, excused %d, circuit %s; want the query blamed, not it", u, st.Softs, st.Excused, st.Circuit)
		}
	}
}

func TestOffTopicAnswerIsNeverServed(t *testing.T) {
	e := newEnv(t, Config{},
		sim.InstanceConfig{Behaviour: sim.OffTopic, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.OffTopic, Latency: -1, JSON: true})
	res, err := e.search(t, "my own question")
	var na *NoAnswerError
	if !errors.As(err, &na) {
		t.Fatalf("got an answer from %v (soft %q); want no answer rather than another query's", res.Instance, res.Soft)
	}
	for _, a := range na.Tried {
		if a.Reason != pool.Reason(detect.OffTopic) {
			t.Errorf("attempt %+v, want off_topic", a)
		}
	}
}

func TestReadTermsBeforeSearching(t *testing.T) {
	e := newEnv(t, Config{},
		sim.InstanceConfig{Behaviour: sim.LinkToken, Latency: -1},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	for _, u := range e.urls {
		e.proxy.setCaps(u, func(c *Caps) { *c = Caps{} })
	}
	e.proxy.Instances().ReadTerms(e.urls)
	if err := e.proxy.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !e.proxy.Instances().Caps(e.urls[0]).LinkToken || !e.proxy.Instances().Caps(e.urls[1]).ConfigOK {
		t.Fatalf("terms not read: %+v / %+v", e.proxy.Instances().Caps(e.urls[0]), e.proxy.Instances().Caps(e.urls[1]))
	}
	// The link-token instance ranks first, yet never gets a search.
	for _, q := range []string{"a", "b", "c"} {
		if _, err := e.search(t, q); err != nil {
			t.Fatal(err)
		}
	}
	if n := e.searches(0); n != 0 {
		t.Fatalf("the link-token instance got %d searches", n)
	}
	// Read once: a second call within the day reads nothing.
	e.proxy.Instances().ReadTerms(e.urls)
	if err := e.proxy.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, in := range e.fleet.Instances() {
		if n := in.Truth().ConfigReads; n != 1 {
			t.Fatalf("%s: %d /config reads, want 1", in.ID(), n)
		}
	}
}

func TestAutocompleteRespectsRefusals(t *testing.T) {
	e := newEnv(t, Config{},
		sim.InstanceConfig{Behaviour: sim.CloudflareChallenge403, Latency: -1},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	for _, u := range e.urls {
		e.proxy.setCaps(u, func(c *Caps) { c.Autocomplete = "duckduckgo" })
	}
	out, err := e.proxy.Autocomplete(context.Background(), "hel", "en")
	if err != nil || len(out) == 0 {
		t.Fatalf("suggestions %q, %v; want the second instance's", out, err)
	}
	st := e.pool.Stats(e.urls[0])
	if st.Circuit != pool.Open || st.LastReason != pool.Reason(detect.BotChallenge) {
		t.Fatalf("the challenging instance: circuit %v, reason %q; want open, bot_challenge", st.Circuit, st.LastReason)
	}
	// A good autocompletion teaches nothing about searches.
	if good := e.pool.Stats(e.urls[1]); good.Successes != 0 || good.Failures != 0 || good.InFlight != 0 {
		t.Fatalf("the answering instance: %+v", good)
	}
	// The refusing one is not asked again while cooling down.
	before := e.fleet.Instances()[0].Truth().Requests
	if _, err := e.proxy.Autocomplete(context.Background(), "help", "en"); err != nil {
		t.Fatal(err)
	}
	if n := e.fleet.Instances()[0].Truth().Requests; n != before {
		t.Fatalf("the cooling instance got %d more requests", n-before)
	}
}

// TestAutocompleteKeepsTerms: an instance whose link-token check would
// take searxgate for a bot is no more asked for suggestions than for
// searches.
func TestAutocompleteKeepsTerms(t *testing.T) {
	e := newEnv(t, Config{},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	for _, u := range e.urls {
		e.proxy.setCaps(u, func(c *Caps) { c.Autocomplete = "duckduckgo" })
	}
	e.proxy.setCaps(e.urls[0], func(c *Caps) { c.LinkToken = true })
	for _, q := range []string{"hel", "help"} { // within the public autocompletion budget
		if out, err := e.proxy.Autocomplete(context.Background(), q, "en"); err != nil || len(out) == 0 {
			t.Fatalf("%s: suggestions %q, %v; want the second instance's", q, out, err)
		}
	}
	if n := e.fleet.Instances()[0].Truth().Requests; n != 0 {
		t.Fatalf("the link-token instance was asked %d times", n)
	}
	if n := e.fleet.Instances()[1].Truth().Requests; n == 0 {
		t.Fatal("the other instance was never asked: the test proves nothing")
	}
}

func TestForgetDropsWhatIsKeptPerInstance(t *testing.T) {
	e := newEnv(t, Config{}, sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	if _, err := e.search(t, "remember me"); err != nil {
		t.Fatal(err)
	}
	u := e.urls[0]
	if e.proxy.Instances().Budget().Used(u, e.clock.Now(), time.Minute) != 1 || e.proxy.InstanceMetrics(u).ByKind["ok"] != 1 {
		t.Fatal("the search left no budget use or metrics: the test proves nothing")
	}
	e.proxy.Instances().DirtyCaps()
	e.proxy.Forget(u)
	if e.proxy.Instances().Budget().Used(u, e.clock.Now(), time.Minute) != 0 || len(e.proxy.InstanceMetrics(u).ByKind) != 0 {
		t.Fatal("budget use or metrics kept after Forget")
	}
	if c := e.proxy.Instances().Caps(u); c.ConfigOK {
		t.Fatalf("terms kept after Forget: %+v", c)
	}
	if _, deleted := e.proxy.Instances().DirtyCaps(); len(deleted) != 1 || deleted[0] != u {
		t.Fatalf("the store is not told to drop the terms: %v", deleted)
	}
}

// TestJSONRefusedFallsBackToHTMLAtOnce: an instance that answered JSON
// before and has since disabled it answers the next search through its
// HTML page, in the same attempt; later ones go there directly.
func TestJSONRefusedFallsBackToHTMLAtOnce(t *testing.T) {
	e := newEnv(t, Config{}, sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: false})
	e.proxy.setCaps(e.urls[0], func(c *Caps) {
		*c = Caps{ConfigAt: e.clock.Now(), ConfigOK: true, JSON: Yes, JSONAt: e.clock.Now()}
	})
	res, err := e.search(t, "only html here")
	if err != nil {
		t.Fatalf("an HTML-only instance alone in the pool: %v", err)
	}
	if res.Attempts != 1 {
		t.Fatalf("%d attempts, want 1", res.Attempts)
	}
	if _, err := e.search(t, "html again"); err != nil {
		t.Fatal(err)
	}
	f := e.fleet.Instances()[0].Truth().Formats
	if f["json"] != 1 || f["html"] != 2 {
		t.Fatalf("asked %v; want JSON once (refused), then HTML", f)
	}
	if st := e.pool.Stats(e.urls[0]); st.Circuit != pool.Closed {
		t.Fatalf("the refused format opened the circuit: %v", st.Circuit)
	}
}

// TestNothingFoundIsAnAnswer: searches that honestly find nothing are
// answered (after one confirming attempt on another instance), cached for
// EmptyTTL, and leave every instance as usable as before.
func TestNothingFoundIsAnAnswer(t *testing.T) {
	e := newEnv(t, Config{EmptyTTL: 5 * time.Minute},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	for i := range 4 {
		q := sim.NoResultsPrefix + " gibberish " + string(rune('a'+i))
		res, err := e.search(t, q)
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		r, err := res.Results()
		if err != nil || !r.NothingFound() || res.Soft != "" {
			t.Fatalf("%q: soft %q, results %+v, err %v; want an honest empty answer", q, res.Soft, r, err)
		}
		if res.Attempts != 2 {
			t.Fatalf("%q: %d attempts, want 2 (one confirmation)", q, res.Attempts)
		}
	}
	for _, u := range e.urls {
		st := e.pool.Stats(u)
		if st.Circuit != pool.Closed || st.FailureRate != 0 {
			t.Fatalf("%s after four nothing-found answers: circuit %v, failure %v", u, st.Circuit, st.FailureRate)
		}
	}
	if _, err := e.search(t, "something real"); err != nil {
		t.Fatalf("a normal search after them: %v", err)
	}
	// Cached, for EmptyTTL only.
	before := e.searches(0) + e.searches(1)
	if res, err := e.search(t, sim.NoResultsPrefix+" gibberish a"); err != nil || !res.Cached {
		t.Fatalf("repeat: cached %v, err %v", res != nil && res.Cached, err)
	}
	e.clock.Advance(5*time.Minute + time.Second)
	if res, err := e.search(t, sim.NoResultsPrefix+" gibberish a"); err != nil || res.Cached {
		t.Fatalf("after EmptyTTL: cached %v, err %v; want asked again", res != nil && res.Cached, err)
	}
	if got := e.searches(0) + e.searches(1) - before; got != 2 {
		t.Fatalf("%d upstream searches for the cached and expired repeats, want 2", got)
	}
}

// setCaps sets inst's terms, making its record if need be.
func (p *Proxy) setCaps(inst string, f func(*Caps)) { p.recs.Ensure(inst).Update(f) }

// InstanceMetrics returns a copy of inst's recent outcomes (zero when the proxy
// keeps no record of it).
func (p *Proxy) InstanceMetrics(inst string) instance.MetricsView {
	if r := p.recs.Get(inst); r != nil {
		return r.Metrics().View()
	}
	return instance.MetricsView{}
}

// Background work runs on workers that may be reused; Close waits for all of it
// and ends the idle workers, and nothing is started afterwards.
func TestSpawnedWorkIsWaitedForAndCloseEndsWorkers(t *testing.T) {
	e := newEnv(t, Config{}, sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	p := e.proxy
	ran := make(chan int, 3)
	for i := range 3 {
		if !p.spawn(func() { ran <- i }) {
			t.Fatalf("spawn %d refused before Close", i)
		}
		if got := <-ran; got != i {
			t.Fatalf("ran %d, want %d", got, i)
		}
		// Wait until the worker is parked again, so the next spawn can
		// hand it the work.
		if err := p.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	block := make(chan struct{})
	p.spawn(func() { <-block })
	closed := make(chan struct{})
	go func() { p.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while work was still running")
	default:
	}
	close(block)
	<-closed
	if p.spawn(func() { t.Error("work started after Close") }) {
		t.Fatal("spawn accepted work after Close")
	}
}

// TestAutocompleteAsksOwnFirst: suggestions come from the operator's own
// instance when it offers them, sparing the public ones' small budget,
// whatever the ranking says.
func TestAutocompleteAsksOwnFirst(t *testing.T) {
	e := newEnv(t, Config{},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	own := e.urls[1] // ranked second (its prior is the slower one)
	e.pool.Add(own, pool.Own)
	for _, u := range e.urls {
		e.proxy.setCaps(u, func(c *Caps) { c.Autocomplete = "duckduckgo" })
	}
	for _, q := range []string{"tid", "tida", "tidal"} {
		if out, err := e.proxy.Autocomplete(context.Background(), q, "en"); err != nil || len(out) == 0 {
			t.Fatalf("%q: %q %v", q, out, err)
		}
	}
	if pub := e.fleet.Instances()[0].Truth().Requests; pub != 0 {
		t.Fatalf("the public instance got %d autocompletions while the own one offered them", pub)
	}
}

// TestPublicCapacity: what the public pool serves, sustained and at once,
// from the budget's windows and the public instances (own ones do not
// count).
func TestPublicCapacity(t *testing.T) {
	e := newEnv(t, Config{},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	// The default budget: 10 in 20 s (30 a minute), 100 in 10 min (10 a
	// minute, the sustained rate), two instances.
	if per, burst := e.proxy.PublicCapacity(); per != 20 || burst != 20 {
		t.Fatalf("capacity %v a minute, %v at once; want 20 and 20", per, burst)
	}
	e.pool.Add("https://own.example/", pool.Own)
	if per, _ := e.proxy.PublicCapacity(); per != 20 {
		t.Fatalf("an own instance counted: %v a minute", per)
	}
}

// TestDeadlinesHoldOnAClockFarFromRealTime: the proxy's deadlines are read
// on its clock, fasthttp's, the network's and the contexts' on the real
// one. With a clock twenty years before or after real time, a search is
// still answered, and an instance that hangs is cut when the search's time
// runs out, in real time. (The search's own timers never fire here: only
// the upstream client's real deadline can end the hanging attempt.)
func TestDeadlinesHoldOnAClockFarFromRealTime(t *testing.T) {
	// Long enough for the first search's answer under the race detector
	// on a loaded machine; far below the hang's minute.
	const deadline = 2 * time.Second
	for name, years := range map[string]int{"past": -20, "future": 20} {
		t.Run(name, func(t *testing.T) {
			e := newEnvAt(t, time.Now().AddDate(years, 0, 0), Config{Clock: timersOf(quietTimers), Deadline: deadline, MaxAttempts: 1},
				sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
				sim.InstanceConfig{Behaviour: sim.Hang, HangFor: time.Minute, JSON: true})
			// A failsafe: a broken deadline fails the test instead of hanging it.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := e.proxy.Search(ctx, Request{Query: "answered", PageNo: 1, Format: FormatJSON})
			if err != nil || res.Instance != e.urls[0] {
				t.Fatalf("search: %v; want an answer from the first instance", err)
			}

			e.pool.Disable(e.urls[0]) // the hanging instance alone
			began := time.Now()
			_, err = e.proxy.Search(ctx, Request{Query: "hangs", PageNo: 1, Format: FormatJSON})
			took := time.Since(began)
			var na *NoAnswerError
			if !errors.As(err, &na) || len(na.Tried) != 1 || na.Tried[0].Reason != pool.Reason(detect.Timeout) {
				t.Fatalf("search of a hanging instance: %v; want its attempt timed out", err)
			}
			// Far below the hang's minute, with room for a loaded machine.
			if took < deadline || took > 10*time.Second {
				t.Fatalf("the hanging attempt was cut after %v of real time, want the search's %v", took, deadline)
			}
		})
	}
}

// TestAutocompleteSharesThePublicBudget: one client's suggestions take
// at most its share of the public instances' autocompletion budget, and
// another client still gets some.
func TestAutocompleteSharesThePublicBudget(t *testing.T) {
	e := newEnv(t, Config{},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	for _, u := range e.urls {
		e.proxy.setCaps(u, func(c *Caps) { c.Autocomplete = "duckduckgo" })
	}
	suggest := func(client, q string) bool {
		out, err := e.proxy.Autocomplete(WithClient(context.Background(), client), q, "en")
		return err == nil && len(out) > 0
	}
	// 3 instances × 2 per 20 s = 6; alone, a client may take all but a
	// newcomer's seat (a third).
	greedy := 0
	for _, q := range []string{"ta", "tb", "tc", "td", "te", "tf"} {
		if suggest("greedy", q) {
			greedy++
		}
	}
	if greedy != 4 {
		t.Fatalf("the greedy client got %d of 6 suggestions, want its share of 4", greedy)
	}
	// Beside it, another client's first suggestion goes at once; its
	// second would take the seat kept for a third client, who then gets
	// one too.
	if !suggest("other", "ua") {
		t.Fatal("another client found no room left beside the greedy one")
	}
	if suggest("other", "ub") {
		t.Fatal("the second client took the seat kept for a third")
	}
	if !suggest("third", "va") {
		t.Fatal("a third client found no room left")
	}
}
