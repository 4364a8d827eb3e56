package proxy

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/sim"
)

// fastFleet is n good instances.
func fastFleet(n int) []sim.InstanceConfig {
	var c []sim.InstanceConfig
	for range n {
		c = append(c, sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	}
	return c
}

// settled waits for every attempt, so that every outcome held for a
// second opinion has been recorded.
func (e *testEnv) settled(t *testing.T) {
	t.Helper()
	if err := e.proxy.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// blamed fails the test unless instance i has the failures and softs its
// own, and at least minExcused outcomes excused.
func (e *testEnv) blamed(t *testing.T, i int, failures, softs, minExcused uint64) pool.Stats {
	t.Helper()
	st := e.proxy.pool.Stats(e.urls[i])
	if st.Failures != failures || st.Softs != softs || st.Excused < minExcused {
		t.Errorf("instance %d: %d failures, %d softs, %d excused (circuit %s, last %s/%s); want %d failures, %d softs, at least %d excused",
			i, st.Failures, st.Softs, st.Excused, st.Circuit, st.LastOutcome, st.LastReason, failures, softs, minExcused)
	}
	return st
}

// TestQueryThatCrashesSearXNGIsTheQuerys: a query that every instance
// answers 500 is tried on two, then refused with an error that names the
// query; no instance is charged, no circuit opens, and normal searches
// still answer.
func TestQueryThatCrashesSearXNGIsTheQuerys(t *testing.T) {
	e := newEnv(t, Config{}, fastFleet(3)...)
	for _, q := range []string{"servererror one", "servererror two", "servererror three"} {
		_, err := e.search(t, q)
		var na *NoAnswerError
		if !errors.As(err, &na) || na.Why != "query" || len(na.Tried) != 2 || na.Tried[1].Reason != pool.Reason(detect.ServerError) {
			t.Fatalf("%q: %v (%+v), want the query's error after two 500s", q, err, na)
		}
	}
	e.settled(t)
	var excused uint64
	for i := range e.urls {
		st := e.blamed(t, i, 0, 0, 0)
		if st.Circuit != pool.Closed {
			t.Errorf("instance %d: circuit %s, want closed", i, st.Circuit)
		}
		excused += st.Excused
	}
	if excused != 6 {
		t.Errorf("%d outcomes excused, want the 6 500s", excused)
	}
	if res, err := e.search(t, "a normal search"); err != nil || res.Soft != "" {
		t.Fatalf("a normal search after them: %v %+v", err, res)
	}
}

// TestFanoutQueryThatCrashesSearXNGIsTheQuerys: fanned out, the same
// query blames no instance either: a first failure alone is replaced (it
// cannot tell), none after two failed alike.
func TestFanoutQueryThatCrashesSearXNGIsTheQuerys(t *testing.T) {
	e := newEnv(t, Config{Clock: timersOf(quietTimers)}, fastFleet(5)...)
	_, err := e.proxy.Search(context.Background(), Request{Query: "servererror wide", PageNo: 1, Format: FormatJSON, Fanout: 3})
	var na *NoAnswerError
	// Three alike 5xx decide it when they come back together; one that
	// comes back first is held and a replacement asked: both are the
	// query's, and never a second replacement.
	if !errors.As(err, &na) || na.Why != "query" || len(na.Tried) < 3 || len(na.Tried) > 4 {
		t.Fatalf("%v (%+v), want the query's error after the three asked and at most one replacement", err, na)
	}
	e.settled(t)
	if e.searches(4) != 0 {
		t.Errorf("a second replacement was asked after the query failed alike")
	}
	for i := range e.urls {
		e.blamed(t, i, 0, 0, 0)
	}
}

// TestServerErrorWhereAnotherAnswersIsTheInstances: a 5xx whose query a
// second instance answers well is the first instance's own failure.
func TestServerErrorWhereAnotherAnswersIsTheInstances(t *testing.T) {
	e := newEnv(t, Config{},
		sim.InstanceConfig{Behaviour: sim.Flapping, FlapPeriod: time.Minute, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	e.clock.Advance(time.Minute) // the flapping one is down: 502 to everything
	res, err := e.search(t, "answered by the second")
	if err != nil || res.Instance != e.urls[1] || res.Attempts != 2 {
		t.Fatalf("%v %+v, want the second instance's answer", err, res)
	}
	e.settled(t)
	if st := e.blamed(t, 0, 1, 0, 0); st.LastReason != pool.Reason(detect.ServerError) || st.Excused != 0 {
		t.Errorf("the 502 instance: last %s, %d excused; want its server error charged", st.LastReason, st.Excused)
	}
}

// TestOffTopicEverywhereOpensNoCircuit: three honest off-topic queries
// (each instance answers with results of its own, no URL shared) ask
// all three instances, are served as the query's answer, and blame none.
func TestOffTopicEverywhereOpensNoCircuit(t *testing.T) {
	e := newEnv(t, Config{}, fastFleet(3)...)
	for _, q := range []string{"offtopicquery alpha", "offtopicquery beta", "offtopicquery gamma"} {
		res, err := e.search(t, q)
		if err != nil || res.Soft != string(detect.OffTopic) || res.Attempts != 3 {
			t.Fatalf("%q: %v %+v, want the off-topic answer served after three opinions", q, err, res)
		}
	}
	e.settled(t)
	for i := range e.urls {
		if st := e.blamed(t, i, 0, 0, 3); st.Circuit != pool.Closed {
			t.Errorf("instance %d: circuit %s, want closed", i, st.Circuit)
		}
	}
}

// TestPoorAnswerThatDiffersFromTwoAlikeIsTheInstances: when two
// instances answer a query poorly the same way (its engines fail on it)
// and a third answers another query's results, the third opinion blames
// only the odd one.
func TestPoorAnswerThatDiffersFromTwoAlikeIsTheInstances(t *testing.T) {
	e := newEnv(t, Config{},
		sim.InstanceConfig{Behaviour: sim.OffTopic, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	res, err := e.search(t, "engineerror crashes every engine")
	if err != nil || res.Soft != string(detect.EnginesDown) || res.Attempts != 3 {
		t.Fatalf("%v %+v, want the engines-down answer after three opinions", err, res)
	}
	e.settled(t)
	e.blamed(t, 0, 0, 1, 0)
	e.blamed(t, 1, 0, 0, 1)
	e.blamed(t, 2, 0, 0, 1)
}

// TestNotFoundEverywhereIsBlamedOnlyWhereOthersAnswer: an instance that
// answers 404 to every search is charged for it, since the others answer
// the same queries; a query that every instance answers 404 is the
// query's.
func TestNotFoundEverywhereIsBlamedOnlyWhereOthersAnswer(t *testing.T) {
	t.Run("one instance", func(t *testing.T) {
		e := newEnv(t, Config{},
			sim.InstanceConfig{Behaviour: sim.NotFound404, Latency: -1, JSON: true},
			sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
			sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
		for _, q := range []string{"first question", "second question", "third question"} {
			if _, err := e.search(t, q); err != nil {
				t.Fatalf("%q: %v", q, err)
			}
		}
		e.settled(t)
		st := e.proxy.pool.Stats(e.urls[0])
		if st.Failures == 0 || st.Excused != 0 || st.Health >= 100 || st.LastReason != pool.Reason(detect.ClientError) {
			t.Fatalf("the 404 instance: %d failures, %d excused, health %d, last %s; want its 404s charged",
				st.Failures, st.Excused, st.Health, st.LastReason)
		}
	})
	t.Run("every instance", func(t *testing.T) {
		e := newEnv(t, Config{},
			sim.InstanceConfig{Behaviour: sim.NotFound404, Latency: -1, JSON: true},
			sim.InstanceConfig{Behaviour: sim.NotFound404, Latency: -1, JSON: true},
			sim.InstanceConfig{Behaviour: sim.NotFound404, Latency: -1, JSON: true})
		for _, q := range []string{"first question", "second question", "third question"} {
			var na *NoAnswerError
			if _, err := e.search(t, q); !errors.As(err, &na) || na.Why != "query" || len(na.Tried) != 2 {
				t.Fatalf("%q: %v, want the query's error after two 404s", q, err)
			}
		}
		e.settled(t)
		for i := range e.urls {
			if st := e.blamed(t, i, 0, 0, 0); st.Circuit != pool.Closed {
				t.Errorf("instance %d: circuit %s", i, st.Circuit)
			}
		}
	})
}

// slowUpstream is a proxy over one hanging instance whose every request
// takes 3 s of the proxy's clock, cut in real time by a short deadline.
func slowUpstream(t *testing.T, maxInFlight int) *testEnv {
	t.Helper()
	const deadline = 300 * time.Millisecond
	return newEnvPool(t, envStart, envPool{maxInFlight: maxInFlight}, Config{Clock: &testClock{timers: quietTimers, upstreamTakes: 3 * time.Second},
		Deadline: deadline, MaxAttempts: 1, Budget: []Window{}},
		sim.InstanceConfig{Behaviour: sim.Hang, HangFor: time.Minute, JSON: true})
}

// searchTimedOut fails the test unless err is a search whose one attempt timed
// out.
func searchTimedOut(t *testing.T, err error) {
	t.Helper()
	var na *NoAnswerError
	if !errors.As(err, &na) || len(na.Tried) != 1 || na.Tried[0].Reason != pool.Reason(detect.Timeout) {
		t.Fatalf("%v, want its one attempt timed out", err)
	}
}

// TestTimeoutTheQueryAskedForIsTheQuerys: "<6" asks SearXNG to wait 6 s
// for its engines; cut by searxgate's shorter deadline, the timeout is
// the query's. The same timeout without the syntax is the instance's.
func TestTimeoutTheQueryAskedForIsTheQuerys(t *testing.T) {
	e := slowUpstream(t, 0)
	_, err := e.search(t, "<6 slowbackend")
	searchTimedOut(t, err)
	if na := (*NoAnswerError)(nil); !errors.As(err, &na) || na.Why != "query_timeout" {
		t.Errorf("%v, want it said the query's timeout is longer than the deadline", err)
	}
	e.settled(t)
	e.blamed(t, 0, 0, 0, 1)

	_, err = e.search(t, "slowbackend")
	searchTimedOut(t, err)
	e.settled(t)
	e.blamed(t, 0, 1, 0, 1) // the control: this one is its own
}

// TestTimeoutAfterAQueueWaitIsSearxgates: a search that waited in the
// queue and was cut by its deadline lost that time to searxgate; its
// instance is not charged. The same timeout without a wait is the
// instance's.
func TestTimeoutAfterAQueueWaitIsSearxgates(t *testing.T) {
	e := slowUpstream(t, 1)
	held, ok := e.proxy.checkout(context.Background(), "", nil, e.clock.Now(), false)
	if !ok {
		t.Fatal("no slot")
	}
	done := make(chan error, 1)
	go func() { _, err := e.search(t, "waits first"); done <- err }()
	waitFor(t, "the search queued", func() bool { return e.proxy.Metrics().QueueDepth() == 1 })
	e.free(held)
	searchTimedOut(t, <-done)
	e.settled(t)
	e.blamed(t, 0, 0, 0, 1)

	_, err := e.search(t, "sent at once")
	searchTimedOut(t, err)
	e.settled(t)
	e.blamed(t, 0, 1, 0, 1) // the control: this one is its own
}

// TestTimeoutBeforeItsFairChanceIsSearxgates: an instance whose answers
// usually take 5 s, cut by searxgate's deadline after 3 s, had no fair
// chance (twice its usual latency): the timeout is searxgate's, as a late
// hedge's is. The control: the same cut on a fast instance is its own.
func TestTimeoutBeforeItsFairChanceIsSearxgates(t *testing.T) {
	e := slowUpstream(t, 0)
	for range 8 { // its usual latency: about 5 s
		l, ok := e.proxy.checkout(context.Background(), "", nil, e.clock.Now(), false)
		if !ok {
			t.Fatal("no slot")
		}
		e.proxy.pool.Record(l.lease, pool.Outcome{Kind: pool.OK, Hits: 10}, 5*time.Second)
		l.release()
	}
	if lat, _ := e.proxy.usual(e.urls[0]); lat < 2*time.Second {
		t.Fatalf("usual latency %s, want over 2 s: the cut would be fair", lat)
	}
	_, err := e.search(t, "usually slow")
	searchTimedOut(t, err)
	e.settled(t)
	if st := e.blamed(t, 0, 0, 0, 1); st.Circuit != pool.Closed || st.ConsecutiveFailures != 0 {
		t.Errorf("circuit %s, %d failures in a row; want closed, none", st.Circuit, st.ConsecutiveFailures)
	}

	fast := slowUpstream(t, 0)
	_, err = fast.search(t, "usually fast")
	searchTimedOut(t, err)
	fast.settled(t)
	fast.blamed(t, 0, 1, 0, 0) // the control: its own
}

// TestShareable: only a circuit this searxgate opened on the instance's
// own outcome goes to the other replicas; one heard from them
// (pool.SourceShared), one already open, a closing and the operator's
// changes do not.
func TestShareable(t *testing.T) {
	opened := pool.Event{Instance: "https://a.example/", Owner: pool.OwnerInstance, From: pool.Closed, To: pool.Open,
		Reason: pool.Reason(detect.RateLimited)}
	if !Shareable(opened) {
		t.Error("a local opening is not shared")
	}
	heard := opened
	heard.Source, heard.Reason = pool.SourceShared, pool.ReasonShared+opened.Reason
	reopened := opened
	reopened.From = pool.Open
	closed := opened
	closed.From, closed.To = pool.HalfOpen, pool.Closed
	removed := pool.Event{Instance: opened.Instance, From: pool.Closed, To: pool.Closed, Reason: pool.ReasonRemoved}
	for name, e := range map[string]pool.Event{"heard": heard, "reopened": reopened, "closed": closed, "removed": removed} {
		if Shareable(e) {
			t.Errorf("%s: shared", name)
		}
	}
}
