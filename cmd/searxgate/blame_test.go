package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/searxgate/searxgate/internal/clock"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/sim"
)

// These tests show that searxgate blames an instance only for what is the
// instance's own doing: a bang, engines failing on one query, a query
// slow everywhere, searxgate's own queue are not.

// healthyFleet starts n healthy instances (JSON on) and a gateway on them,
// the sim fleet's clock and latencies as given.
func healthyFleet(t *testing.T, n int, cfg sim.Config, flags ...string) (*sim.Fleet, *gateway) {
	t.Helper()
	for i := range n {
		cfg.Instances = append(cfg.Instances, sim.InstanceConfig{ID: fmt.Sprintf("ok-%d", i), Behaviour: sim.Fast, Latency: 20 * time.Millisecond, JSON: true})
	}
	cfg.Seed = 31
	f, dir := startFleetConfig(t, cfg)
	return f, startGateway(t, dir, "", append([]string{"--client-rate", "0"}, flags...)...) // a later --client-rate wins
}

// searches is how many searches the fleet's instances saw in all.
func searches(f *sim.Fleet) (n uint64) {
	for _, tr := range f.Truth() {
		n += tr.Searches
	}
	return n
}

// allClosed fails the test when any instance of the gateway's pool has an
// open circuit, a refusal or a failure counted against it.
func allClosed(t *testing.T, g *gateway, what string) {
	t.Helper()
	for _, st := range g.app.pool.Snapshot() {
		if st.Circuit != pool.Closed || st.Refusals != 0 || st.Failures != 0 || st.Softs != 0 || st.ConsecutiveFailures != 0 {
			t.Errorf("%s: %s is %s with %d refusals, %d failures, %d softs: blamed for what was not its doing",
				what, st.URL, st.Circuit, st.Refusals, st.Failures, st.Softs)
		}
	}
}

// TestBangsBlameNobody: a bang is the query's answer, SearXNG's redirect
// passed to the client from one instance; no circuit opens, whatever the
// format, however often.
func TestBangsBlameNobody(t *testing.T) {
	f, g := healthyFleet(t, 3, sim.Config{})
	for i := range 6 {
		format := []string{"json", "html", "csv"}[i%3]
		q := fmt.Sprintf("!!g foo bar %d", i)
		a := g.get(t, "/search?format="+format+"&q="+url.QueryEscape(q), nil)
		want := "https://www.google.com/search?q=" + url.QueryEscape(fmt.Sprintf("foo bar %d", i))
		if a.status != 302 || a.header.Get("Location") != want {
			t.Fatalf("%s %q: %d Location %q, want 302 to %s: %s", format, q, a.status, a.header.Get("Location"), want, a.body)
		}
		if n := a.header.Get("X-Searxgate-Attempts"); n != "1" {
			t.Errorf("%q took %s upstream searches, want 1 (one instance answers a bang)", q, n)
		}
	}
	// With fanout, still one instance.
	a := g.get(t, "/search?format=json&fanout=3&q="+url.QueryEscape("!!w rust"), nil)
	if a.status != 302 || !strings.HasPrefix(a.header.Get("Location"), "https://en.wikipedia.org/") || a.header.Get("X-Searxgate-Attempts") != "1" {
		t.Fatalf("a fan-out bang: %d %q after %s upstream searches; want 302 from one", a.status, a.header.Get("Location"), a.header.Get("X-Searxgate-Attempts"))
	}
	// Feeling lucky: the HTML page redirects to the first result; a JSON
	// client gets the results, as from SearXNG.
	lucky := g.get(t, "/search?q="+url.QueryEscape("!! lucky words"), nil)
	if lucky.status != 302 || !strings.HasPrefix(lucky.header.Get("Location"), "https://") {
		t.Fatalf("feeling lucky, HTML: %d %q", lucky.status, lucky.header.Get("Location"))
	}
	if js := g.get(t, "/search?format=json&q="+url.QueryEscape("!! lucky json"), nil); js.status != 200 || !strings.Contains(string(js.body), `"results":[{`) {
		t.Fatalf("feeling lucky, JSON: %d %s", js.status, js.body)
	}
	allClosed(t, g, "after bangs")
	// The pool still answers ordinary searches, from whichever instance.
	before := searches(f)
	if a := g.get(t, "/search?format=json&q=after+the+bangs", nil); a.status != 200 || !onTopic(a.body, "after the bangs") {
		t.Fatalf("an ordinary search after the bangs: %d %s", a.status, a.body)
	}
	if searches(f) != before+1 {
		t.Fatalf("an ordinary search took %d upstream searches, want 1", searches(f)-before)
	}
}

// TestEngineErrorQueriesBlameTheQuery: a query whose engines fail on
// every instance is answered 200 with the engines' errors after at most 2
// upstream searches, cached for a minute, and no circuit opens.
func TestEngineErrorQueriesBlameTheQuery(t *testing.T) {
	f, g := healthyFleet(t, 3, sim.Config{})
	for i := range 4 {
		q := fmt.Sprintf("%s thing %d", sim.EngineErrorPrefix, i)
		before := searches(f)
		a := g.get(t, "/search?format=json&q="+url.QueryEscape(q), nil)
		var body struct {
			Results     []any      `json:"results"`
			Unresponsiv [][]string `json:"unresponsive_engines"`
		}
		if a.status != 200 || json.Unmarshal(a.body, &body) != nil || len(body.Unresponsiv) == 0 {
			t.Fatalf("%q: %d %s; want 200 with the engines' errors", q, a.status, a.body)
		}
		if n := searches(f) - before; n > 2 {
			t.Errorf("%q took %d upstream searches, want at most 2", q, n)
		}
		// A repeat costs nothing upstream.
		before = searches(f)
		if again := g.get(t, "/search?format=json&q="+url.QueryEscape(q), nil); again.status != 200 || again.header.Get("X-Searxgate-Cache") != "hit" {
			t.Errorf("a repeat of %q: %d, cache %q; want a hit", q, again.status, again.header.Get("X-Searxgate-Cache"))
		}
		if searches(f) != before {
			t.Errorf("a repeat of %q searched upstream", q)
		}
	}
	// The HTML page names the engines that failed (which ones the sim's
	// instances name depends on the query: they are read from the JSON
	// answer, whose repeat as a page is a cache hit).
	q := sim.EngineErrorPrefix + " page"
	var failed struct {
		Unresponsive [][]string `json:"unresponsive_engines"`
	}
	if a := g.get(t, "/search?format=json&q="+url.QueryEscape(q), nil); a.status != 200 || json.Unmarshal(a.body, &failed) != nil || len(failed.Unresponsive) == 0 {
		t.Fatalf("%q: %d %s; want 200 with the engines' errors", q, a.status, a.body)
	}
	page := g.get(t, "/search?q="+url.QueryEscape(q), nil)
	named := false
	for _, e := range failed.Unresponsive {
		named = named || len(e) > 0 && strings.Contains(string(page.body), e[0])
	}
	if page.status != 200 || !named {
		t.Errorf("the HTML page of an engine-error query: %d, none of the engines %v named", page.status, failed.Unresponsive)
	}
	allClosed(t, g, "after engine-error queries")
	for i := range 3 {
		q := fmt.Sprintf("ordinary %d", i)
		if a := g.get(t, "/search?format=json&q="+url.QueryEscape(q), nil); a.status != 200 || !onTopic(a.body, q) {
			t.Fatalf("%q after the engine-error queries: %d %s", q, a.status, a.body)
		}
	}
}

// TestQueriesThatFailEverywhereBlameTheQuery: a query that makes SearXNG
// answer 500 on every instance is refused with a 503 that names the
// query after two upstream searches; honest off-topic queries (each
// instance answers its own results, no URL shared) are answered after
// three; no circuit opens, and ordinary searches still answer. An
// instance that answers 404 to every search is blamed for it.
func TestQueriesThatFailEverywhereBlameTheQuery(t *testing.T) {
	f, g := healthyFleet(t, 3, sim.Config{})
	for i := range 3 {
		q := fmt.Sprintf("%s thing %d", sim.ServerErrorPrefix, i)
		before := searches(f)
		a := g.get(t, "/search?format=json&q="+url.QueryEscape(q), nil)
		if a.status != 503 || !strings.Contains(string(a.body), "this query makes SearXNG fail") {
			t.Fatalf("%q: %d %s; want 503 naming the query", q, a.status, a.body)
		}
		if n := searches(f) - before; n != 2 {
			t.Errorf("%q took %d upstream searches, want 2 (a second opinion)", q, n)
		}
	}
	for i := range 3 {
		q := fmt.Sprintf("%s thing %d", sim.OffTopicQueryPrefix, i)
		a := g.get(t, "/search?format=json&q="+url.QueryEscape(q), nil)
		if a.status != 200 || a.header.Get("X-Searxgate-Attempts") != "3" {
			t.Fatalf("%q: %d after %s attempts %s; want 200 after three opinions", q, a.status, a.header.Get("X-Searxgate-Attempts"), a.body)
		}
	}
	allClosed(t, g, "after queries that fail everywhere")
	for i := range 3 {
		q := fmt.Sprintf("ordinary %d", i)
		if a := g.get(t, "/search?format=json&q="+url.QueryEscape(q), nil); a.status != 200 || !onTopic(a.body, q) {
			t.Fatalf("%q after them: %d %s", q, a.status, a.body)
		}
	}
}

// TestNotFoundInstanceIsBlamed: an instance that answers 404 to every
// search is charged for it (the others answer the same queries): its
// health falls and searches go elsewhere.
func TestNotFoundInstanceIsBlamed(t *testing.T) {
	f, g := healthyFleet(t, 2, sim.Config{Instances: []sim.InstanceConfig{{ID: "notfound", Behaviour: sim.NotFound404, Latency: 5 * time.Millisecond, JSON: true}}})
	for i := range 12 {
		q := fmt.Sprintf("ordinary %d", i)
		if a := g.get(t, "/search?format=json&q="+url.QueryEscape(q), nil); a.status != 200 || !onTopic(a.body, q) {
			t.Fatalf("%q: %d %s", q, a.status, a.body)
		}
	}
	bad := f.Instance("notfound").URL()
	for _, st := range g.app.pool.Snapshot() {
		if st.URL != bad {
			continue
		}
		if st.Failures == 0 || st.Excused != 0 || st.Health >= 100 {
			t.Errorf("the 404 instance: %d failures, %d excused, health %d (asked %d times); want its 404s charged",
				st.Failures, st.Excused, st.Health, f.Instance("notfound").Truth().Searches)
		}
		return
	}
	t.Fatalf("%s is not in the pool", bad)
}

// TestSlowEverywhereQueries: a query every instance answers late is
// answered when it fits the deadline, refused honestly when it does not,
// and opens no circuit either way.
func TestSlowEverywhereQueries(t *testing.T) {
	t.Parallel() // it waits on real time: see parallelWaits
	_, g := healthyFleet(t, 3, sim.Config{SlowQuery: 2500 * time.Millisecond}, "--deadline", "4s")
	var wg sync.WaitGroup
	answers := make([]answer, 3)
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = g.get(t, "/search?format=json&q="+url.QueryEscape(fmt.Sprintf("%s answered %d", sim.SlowQueryPrefix, i)), nil)
		}()
	}
	wg.Wait()
	for i, a := range answers {
		if a.status != 200 {
			t.Errorf("slow query %d: %d %s", i, a.status, a.body)
		}
	}
	waitQuiet(t, g)
	allClosed(t, g, "after slow-everywhere queries")
}

// TestTooSlowEverywhereQueries: a query slower everywhere than the
// deadline is refused with the cause named, and blames no instance.
func TestTooSlowEverywhereQueries(t *testing.T) {
	t.Parallel() // it waits on real time: see parallelWaits
	_, g := healthyFleet(t, 3, sim.Config{SlowQuery: 3 * time.Second}, "--deadline", "1500ms")
	for i := range 3 {
		a := g.get(t, "/search?format=json&q="+url.QueryEscape(fmt.Sprintf("%s hopeless %d", sim.SlowQueryPrefix, i)), nil)
		if a.status != 503 || a.header.Get("Retry-After") == "" {
			t.Fatalf("a query slower than the deadline everywhere: %d, Retry-After %q: %s", a.status, a.header.Get("Retry-After"), a.body)
		}
	}
	waitQuiet(t, g)
	allClosed(t, g, "after queries slower than the deadline everywhere")
	if a := g.get(t, "/search?format=json&q=quick+one", nil); a.status != 200 {
		t.Fatalf("an ordinary search after them: %d %s", a.status, a.body)
	}
}

// waitQuiet waits for the attempts still running (hedge losers) to end
// and be recorded.
func waitQuiet(t *testing.T, g *gateway) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := g.app.proxy.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}

// ownFleet starts one own instance and a gateway with only it.
func ownFleet(t *testing.T, ic sim.InstanceConfig, flags ...string) (*sim.Fleet, *gateway) {
	t.Helper()
	ic.ID = "own"
	f, _ := startFleet(t, 5, []sim.InstanceConfig{ic}) // its directory unused: --directory none
	return f, startGateway(t, "none", "", append([]string{"--instance", f.Instance("own").URL(), "--client-rate", "0"}, flags...)...)
}

// TestBurstToSlowOwnInstance: a burst larger than a slow own instance can
// answer in time is answered as far as it fits and refused at once, with
// Retry-After, where it does not; the instance is not blamed for
// searxgate's queue, and the searches after the burst are all answered.
func TestBurstToSlowOwnInstance(t *testing.T) {
	t.Parallel() // it waits on real time: see parallelWaits
	f, g := ownFleet(t, sim.InstanceConfig{Behaviour: sim.Fast, Latency: 1600 * time.Millisecond, JSON: true}, "--deadline", "4s")
	burst := func(n int, prefix string) []answer {
		out := make([]answer, n)
		var wg sync.WaitGroup
		for i := range out {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out[i] = g.get(t, "/search?format=json&q="+url.QueryEscape(fmt.Sprintf("%s %d", prefix, i)), nil)
			}()
		}
		wg.Wait()
		return out
	}
	ok := 0
	for i, a := range burst(20, "burst") {
		switch a.status {
		case 200:
			ok++
		case 503:
			if ra, err := strconv.Atoi(a.header.Get("Retry-After")); err != nil || ra < 1 {
				t.Errorf("burst search %d refused without a Retry-After: %q %s", i, a.header.Get("Retry-After"), a.body)
			}
		default:
			t.Errorf("burst search %d: %d %s", i, a.status, a.body)
		}
	}
	if ok < 8 {
		t.Errorf("%d of the burst answered, want at least the 8 that fit at once", ok)
	}
	waitQuiet(t, g)
	st := g.app.pool.Stats(f.Instance("own").URL())
	if st.Circuit != pool.Closed || st.Failures != 0 {
		t.Fatalf("the own instance is %s with %d failures after the burst: blamed for searxgate's queue", st.Circuit, st.Failures)
	}
	for i, a := range burst(5, "after") {
		if a.status != 200 {
			t.Errorf("search %d after the burst: %d %s", i, a.status, a.body)
		}
	}
}

// TestQueryTimeoutLongerThanTheDeadline: "<6" asks SearXNG to wait 6 s
// for its engines; cut by a shorter --deadline, the search is refused
// with the cause named, and the instance is not charged. (The same cut
// without the syntax is the instance's own: the control.)
func TestQueryTimeoutLongerThanTheDeadline(t *testing.T) {
	t.Parallel() // it waits on real time: see parallelWaits
	f, g := ownFleet(t, sim.InstanceConfig{Behaviour: sim.Slow, Latency: 5 * time.Second, JSON: true}, "--deadline", "2s")
	own := f.Instance("own").URL()
	for i := range 2 {
		a := g.get(t, "/search?format=json&q="+url.QueryEscape(fmt.Sprintf("<6 slowbackend %d", i)), nil)
		if a.status != 503 || !strings.Contains(string(a.body), "timeout syntax") {
			t.Fatalf("<6 search %d: %d %s; want 503 naming the query's timeout", i, a.status, a.body)
		}
	}
	waitQuiet(t, g)
	if st := g.app.pool.Stats(own); st.Failures != 0 || st.Circuit != pool.Closed || st.Excused < 2 {
		t.Fatalf("after the <6 searches: %d failures, %d excused, circuit %s; want the query's", st.Failures, st.Excused, st.Circuit)
	}
	if a := g.get(t, "/search?format=json&q=slowbackend+plain", nil); a.status != 503 {
		t.Fatalf("the control: %d %s", a.status, a.body)
	}
	waitQuiet(t, g)
	if st := g.app.pool.Stats(own); st.Failures != 1 {
		t.Fatalf("the control: %d failures, want its own timeout charged", st.Failures)
	}
}

// TestOwnLimiterInstanceIsPaced: an own instance whose SearXNG limiter is
// on is paced below the limiter's windows: steady load over more than a
// window gets no refusal from it, what does not fit is refused by
// searxgate at once with Retry-After, and the operator is told how to lift
// the limit.
//
// The clock is the test's, shared by searxgate and the limiter's windows:
// a search every 400 ms of it for 24 s, 2.5 a second, past the limiter's
// 15 in 20 s. It stands still while a search is answered.
func TestOwnLimiterInstanceIsPaced(t *testing.T) {
	clk := clock.NewFake(time.Now())
	f, _ := startFleetConfig(t, sim.Config{Seed: 5, Now: clk.Now, Instances: []sim.InstanceConfig{
		{ID: "own", Behaviour: sim.Limiter, Latency: 10 * time.Millisecond, JSON: true}}})
	inst := f.Instance("own")
	g := startGatewayOn(t, clk, "--listen", "127.0.0.1:0", "--allow-private", "--directory", "none", "--data", t.TempDir(),
		"--instance", inst.URL(), "--client-rate", "0")
	start := clk.Now()
	const step, steps = 400 * time.Millisecond, 60 // 24 s: more than a 20 s window
	ok, refused := 0, 0
	for i := range steps {
		a := g.getAsTimePasses(t, clk, "/search?format=json&q="+url.QueryEscape(fmt.Sprintf("steady %d", i)))
		switch a.status {
		case 200:
			ok++
		case 503:
			refused++
			if a.header.Get("Retry-After") == "" {
				t.Fatalf("search %d refused without Retry-After: %s", i, a.body)
			}
		default:
			t.Fatalf("search %d: %d %s", i, a.status, a.body)
		}
		clk.Advance(step)
	}
	t.Logf("%d answered, %d refused by searxgate in %v of the clock", ok, refused, clk.Now().Sub(start))
	if tr := inst.Truth(); tr.Refusals != 0 {
		t.Fatalf("the own instance's limiter refused searxgate %d times (%d searches)", tr.Refusals, tr.Searches)
	}
	if ok < 12 || refused == 0 {
		t.Fatalf("%d answered, %d refused: want the limiter's pace (at least 12) and honest refusals past it", ok, refused)
	}
	st := g.get(t, "/status.json", nil)
	if !strings.Contains(string(st.body), "pass_ip") {
		t.Errorf("/status.json does not tell how to lift the limiter: %s", st.body)
	}
}
