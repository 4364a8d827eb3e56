package proxy

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy/instance"
	"github.com/searxgate/searxgate/sim"
)

func hits(t *testing.T, res *Response) int {
	t.Helper()
	r, err := res.Results()
	if err != nil {
		t.Fatal(err)
	}
	return len(r.Results)
}

func TestQualityHedgeServesTheFullerAnswer(t *testing.T) {
	e := newEnv(t, Config{},
		sim.InstanceConfig{Behaviour: sim.Thin, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	// Neither is known yet: the thin one, ranked first, answers, and
	// one more instance not known thin is asked.
	res, err := e.search(t, "hello world")
	if err != nil {
		t.Fatal(err)
	}
	if res.Instance != e.urls[1] || res.Attempts != 2 || hits(t, res) != 10 || res.Thin() != "" {
		t.Fatalf("served by %s in %d attempts, %d results, thin %q; want the full instance's 10 in 2", res.Instance, res.Attempts, hits(t, res), res.Thin())
	}
	if n := e.proxy.metrics.QualityHedges(); n != 1 {
		t.Fatalf("%d quality hedges, want 1", n)
	}
	st := e.pool.Stats(e.urls[0])
	if !st.Thin || st.Circuit != pool.Closed || st.Failures != 0 || st.Softs != 0 || len(st.Quality.Suspended) != 3 {
		t.Fatalf("thin instance: thin %v circuit %v failures %d softs %d suspended %v; want thin, closed, clean, 3 suspended",
			st.Thin, st.Circuit, st.Failures, st.Softs, st.Quality.Suspended)
	}
	// Known thin now: the next search goes to the full one at once.
	res, err = e.search(t, "another query")
	if err != nil || res.Instance != e.urls[1] || res.Attempts != 1 {
		t.Fatalf("next search: err %v; want the full instance in one attempt", err)
	}
	if n := e.proxy.metrics.QualityHedges(); n != 1 {
		t.Fatalf("%d quality hedges after the second search, want still 1", n)
	}
}

func TestSuspendedEnginesNeverOpenTheCircuit(t *testing.T) {
	e := newEnv(t, Config{NoCache: true},
		sim.InstanceConfig{Behaviour: sim.Thin, Latency: -1, JSON: true})
	for i := range 12 {
		e.clock.Advance(3 * time.Second) // within the politeness budget
		res, err := e.search(t, "thin search "+string(rune('a'+i)))
		if err != nil || res.Soft != "" || hits(t, res) != 4 {
			t.Fatalf("search %d: err %v; want the thin answer", i, err)
		}
	}
	st := e.pool.Stats(e.urls[0])
	if st.Circuit != pool.Closed || st.FailureRate != 0 || st.Successes != 12 {
		t.Fatalf("circuit %v failure %.2f successes %d; want closed, 0, 12", st.Circuit, st.FailureRate, st.Successes)
	}
}

func TestNoQualityHedgeOrLossForQueryOwnedEmptiness(t *testing.T) {
	e := newEnv(t, Config{},
		sim.InstanceConfig{Behaviour: sim.Thin, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	ask := func(req Request) *Response {
		t.Helper()
		req.Format = FormatJSON
		if req.PageNo == 0 {
			req.PageNo = 1
		}
		res, err := e.proxy.Search(context.Background(), req)
		if err != nil {
			t.Fatalf("%+v: %v", req, err)
		}
		return res
	}
	// Nothing found: asked twice (the second opinion), never raced.
	if res := ask(Request{Query: sim.NoResultsPrefix + " gibberish"}); hits(t, res) != 0 {
		t.Fatalf("nothing found: %d results", hits(t, res))
	}
	// A bang or the client's engines: the few results are the query's.
	if res := ask(Request{Query: "!wikipedia hello world"}); res.Instance != e.urls[0] || res.Attempts != 1 {
		t.Fatalf("a bang: served by %s in %d attempts, want the first in 1", res.Instance, res.Attempts)
	}
	if res := ask(Request{Query: "hello engines", Engines: []string{"wikipedia"}}); res.Attempts != 1 {
		t.Fatalf("engines named: %d attempts, want 1", res.Attempts)
	}
	if res := ask(Request{Query: "hello world", PageNo: 2}); res.Attempts != 1 {
		t.Fatalf("page 2: %d attempts, want 1", res.Attempts)
	}
	if n := e.proxy.metrics.QualityHedges(); n != 0 {
		t.Fatalf("%d quality hedges for query-owned emptiness, want 0", n)
	}
	for _, u := range e.urls {
		if st := e.pool.Stats(u); st.Quality.Samples != 0 || st.Quality.Fullness != 1 || st.FailureRate != 0 {
			t.Fatalf("%s: %d fullness samples, fullness %.2f, failure %.2f; want none learned", u, st.Quality.Samples, st.Quality.Fullness, st.FailureRate)
		}
	}
}

func TestThinAnswerSaysWhy(t *testing.T) {
	e := newEnv(t, Config{},
		sim.InstanceConfig{Behaviour: sim.Thin, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Thin, Latency: -1, JSON: true})
	if _, err := e.search(t, "first search"); err != nil {
		t.Fatal(err)
	}
	// Both known thin: no instance is expected full, nothing is raced.
	hedges := e.proxy.metrics.QualityHedges()
	res, err := e.search(t, "second search")
	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimSuffix(strings.TrimPrefix(res.Instance, "http://"), "/")
	want := "google, bing, duckduckgo suspended on " + host + "; 4 results from wikipedia"
	if res.Attempts != 1 || res.Thin() != want || e.proxy.metrics.QualityHedges() != hedges {
		t.Fatalf("%d attempts, thin %q, hedges %d -> %d; want 1, %q, no new hedge", res.Attempts, res.Thin(), hedges, e.proxy.metrics.QualityHedges(), want)
	}
	// The cached answer says the same, for a minute only: the engines
	// may answer again.
	res, err = e.search(t, "second search")
	if err != nil || !res.Cached || res.Thin() != want {
		t.Fatalf("cached: %v thin %q, err %v", res != nil && res.Cached, res.Thin(), err)
	}
	e.clock.Advance(queryFaultTTL + time.Second)
	if res, err = e.search(t, "second search"); err != nil || res.Cached {
		t.Fatalf("a thin answer past %v: cached %v, err %v; want asked again", queryFaultTTL, res != nil && res.Cached, err)
	}
}

func TestEnginesAskedGoWhereTheyAnswer(t *testing.T) {
	e := newEnv(t, Config{NoCache: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	engines := func(es ...Engine) func(*Caps) {
		return func(c *Caps) { c.Engines, c.EnginesV = es, instance.EnginesVersion }
	}
	wiki := Engine{Name: "wikipedia", Shortcut: "wp", Categories: []string{"general"}}
	google := Engine{Name: "google", Shortcut: "go", Categories: []string{"general"}}
	news := Engine{Name: "bing news", Shortcut: "bin", Categories: []string{"news"}}
	e.proxy.setCaps(e.urls[0], engines(wiki, google))
	e.proxy.setCaps(e.urls[1], engines(wiki, google, news))
	ask := func(req Request) string {
		t.Helper()
		req.Format, req.PageNo = FormatJSON, 1
		res, err := e.proxy.Search(context.Background(), req)
		if err != nil {
			t.Fatalf("%+v: %v", req, err)
		}
		return res.Instance
	}
	if got := ask(Request{Query: "plain"}); got != e.urls[0] {
		t.Fatalf("a plain search went to %s, want the first", got)
	}
	if got := ask(Request{Query: "news", Categories: []string{"news"}}); got != e.urls[1] {
		t.Fatalf("a news search went to %s, want the one with a news engine", got)
	}
	// google suspended on the first, as its answer says.
	e.pool.Learn(e.urls[0], pool.Answer{Suspended: [][2]string{{"google", "Suspended: CAPTCHA"}}})
	if got := ask(Request{Query: "googled", Engines: []string{"google"}}); got != e.urls[1] {
		t.Fatalf("engines=google went to %s, want the one where google is not suspended", got)
	}
	if got := ask(Request{Query: "!go banged"}); got != e.urls[1] {
		t.Fatalf("!go went to %s, want the one where google is not suspended", got)
	}
	if got := ask(Request{Query: "general words", Categories: []string{"general"}}); got != e.urls[0] || len(e.proxy.lacking(&Request{Categories: []string{"general"}})) != 0 {
		t.Fatalf("a general search went to %s, want the first: every instance has general engines", got)
	}
	if got := ask(Request{Query: "!wp wiki"}); got != e.urls[0] {
		t.Fatalf("!wp went to %s, want the first (wikipedia answers on both)", got)
	}
}

func TestLateFullerAnswerLeavesTheThinOne(t *testing.T) {
	e := newEnv(t, Config{},
		sim.InstanceConfig{Behaviour: sim.Thin, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Hang, HangFor: 100 * time.Millisecond, JSON: true})
	done := make(chan struct{})
	var res *Response
	var err error
	go func() { res, err = e.search(t, "late fuller"); close(done) }()
	<-e.timers.armed                 // the first attempt's hedge timer: never fired
	<-e.timers.armed                 // the deadline: never fired
	(<-e.timers.armed) <- time.Now() // made once the thin answer is held: the wait for the fuller one ends
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if res.Instance != e.urls[0] || res.Attempts != 2 || res.Thin() == "" || e.proxy.metrics.QualityHedges() != 1 {
		t.Fatalf("served by %s in %d attempts, thin %q; want the thin answer once the raced instance is late", res.Instance, res.Attempts, res.Thin())
	}
	if err := e.proxy.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestMaySuspend: the cheap look at a cached answer's bytes finds every
// reason pool.Suspends reads as a suspension, in any letter case, and
// passes an answer that names none (so a cache hit is not decoded).
func TestMaySuspend(t *testing.T) {
	for _, reason := range []string{"Suspended: CAPTCHA", "Suspended: too many requests", "Suspended: access denied", "captcha", "SUSPENDED", "Too Many Requests"} {
		if !pool.Suspends(reason) {
			t.Fatalf("pool.Suspends(%q) is false: the table is out of date", reason)
		}
		json := []byte(`{"results":[],"unresponsive_engines":[["google",` + strconv.Quote(reason) + `]]}`)
		if !maySuspend(json) {
			t.Errorf("%q: maySuspend missed it", reason)
		}
	}
	for _, json := range []string{`{"results":[{"title":"a"}],"unresponsive_engines":[["wikidata","timeout"]]}`, `{}`, ``} {
		if maySuspend([]byte(json)) {
			t.Errorf("%s: maySuspend says it may be thin", json)
		}
	}
}

// TestEngineErrorQueryTeachesNoQuality: a query that makes every engine
// fail ("timeout", "CAPTCHA", "Suspended: too many requests" on that
// query, everywhere) is the query's: no instance is learned thin, and
// none is taken to have its engines suspended, so a later search naming
// them still goes there.
func TestEngineErrorQueryTeachesNoQuality(t *testing.T) {
	e := newEnv(t, Config{NoCache: true}, fastFleet(2)...)
	for i := range 3 {
		res, err := e.search(t, sim.EngineErrorPrefix+" query "+strconv.Itoa(i))
		if err != nil || res.Soft != string(detect.EnginesDown) {
			t.Fatalf("engine-error query %d: %v %+v, want the engines-down answer", i, err, res)
		}
	}
	e.settled(t)
	for i, u := range e.urls {
		st := e.pool.Stats(u)
		if e.searches(i) == 0 || st.Thin || st.Quality.Samples != 0 || len(st.Quality.Suspended) != 0 || st.Softs != 0 {
			t.Errorf("instance %d (%d searches): thin %v, %d fullness samples, suspended %v, %d softs; want nothing learned against it",
				i, e.searches(i), st.Thin, st.Quality.Samples, st.Quality.Suspended, st.Softs)
		}
	}
	if l := e.proxy.pool.Lacking([]string{"google", "bing", "duckduckgo"}, ""); len(l) != 0 {
		t.Errorf("instances lacking the engines the query broke: %v, want none", l)
	}
}
