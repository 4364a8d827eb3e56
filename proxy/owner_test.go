package proxy

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy/upstream"
	"github.com/searxgate/searxgate/sim"
)

// TestOutcomeOf: the owner one answer tells by itself, for every kind of
// outcome searxgate records (the table in blame.go), row by row.
func TestOutcomeOf(t *testing.T) {
	v := func(k detect.Kind, r detect.Reason) detect.Verdict { return detect.Verdict{Kind: k, Reason: r} }
	cases := []struct {
		name      string
		v         detect.Verdict
		err       error
		format    string
		kind      pool.Kind
		owner     pool.Owner
		ambiguous bool
	}{
		{"ok", v(detect.OK, ""), nil, FormatJSON, pool.OK, pool.OwnerInstance, false},
		{"rate limited", v(detect.Refused, detect.RateLimited), nil, FormatHTML, pool.Refused, pool.OwnerInstance, false},
		{"limiter redirect", v(detect.Refused, detect.LimiterRedirect), nil, FormatHTML, pool.Refused, pool.OwnerInstance, false},
		{"challenge", v(detect.Refused, detect.BotChallenge), nil, FormatHTML, pool.Refused, pool.OwnerInstance, false},
		{"forbidden", v(detect.Refused, detect.Forbidden), nil, FormatHTML, pool.Refused, pool.OwnerInstance, false},
		{"unavailable", v(detect.Refused, detect.Unavailable), nil, FormatHTML, pool.Refused, pool.OwnerInstance, false},
		{"server error", v(detect.Failed, detect.ServerError), nil, FormatJSON, pool.Failed, pool.OwnerInstance, true},
		{"unreadable", v(detect.Failed, detect.BadBody), nil, FormatJSON, pool.Failed, pool.OwnerInstance, false},
		{"too large", v(detect.Failed, detect.TooLarge), nil, FormatJSON, pool.Failed, pool.OwnerInstance, false},
		{"reset", v(detect.Failed, detect.Reset), nil, FormatJSON, pool.Failed, pool.OwnerInstance, false},
		{"conn refused", v(detect.Failed, detect.ConnRefused), nil, FormatJSON, pool.Failed, pool.OwnerInstance, false},
		{"tls", v(detect.Failed, detect.TLS), nil, FormatJSON, pool.Failed, pool.OwnerInstance, false},
		{"external bang", v(detect.Redirect, detect.ExternalBang), nil, FormatJSON, pool.OK, pool.OwnerQuery, false},
		{"feeling lucky", v(detect.Redirect, detect.FeelingLucky), nil, FormatHTML, pool.OK, pool.OwnerQuery, false},
		{"client error", v(detect.Failed, detect.ClientError), nil, FormatJSON, pool.Failed, pool.OwnerInstance, true},
		{"json disabled", v(detect.Refused, detect.FormatDisabled), nil, FormatJSON, pool.Cancelled, pool.OwnerInstance, false},
		{"busy", v(detect.Failed, detect.Transport), upstream.ErrBusy, FormatJSON, pool.Failed, pool.OwnerGateway, false},
		{"engines down", v(detect.Soft, detect.EnginesDown), nil, FormatJSON, pool.Soft, pool.OwnerInstance, true},
		{"off topic", v(detect.Soft, detect.OffTopic), nil, FormatJSON, pool.Soft, pool.OwnerInstance, true},
		{"timeout", v(detect.Failed, detect.Timeout), upstream.ErrTimeout, FormatJSON, pool.Failed, pool.OwnerInstance, true},
		{"dns", v(detect.Failed, detect.DNS), upstream.ErrDNS, FormatJSON, pool.Failed, pool.OwnerInstance, true},
	}
	for _, tc := range cases {
		o := outcomeOf(tc.v, tc.err, tc.format)
		if o.Kind != tc.kind || o.Owner != tc.owner || held(o) != tc.ambiguous {
			t.Errorf("%s: %s/%s held %v, want %s/%s held %v", tc.name, o.Kind, o.Owner, held(o), tc.kind, tc.owner, tc.ambiguous)
		}
	}
	// The rows decided outside a search's answer.
	if o := passIPOutcome(v(detect.Refused, detect.LimiterRedirect)); o.Owner != pool.OwnerGateway || o.Kind != pool.Refused || held(o) {
		t.Errorf("an own instance's limiter refusing searxgate's address: %+v, want searxgate's refusal", o)
	}
	if o := suggestionOutcome(&detect.Verdict{Kind: detect.Refused, Reason: detect.RateLimited}); o.Owner != pool.OwnerInstance || o.Kind != pool.Refused {
		t.Errorf("autocompletion refused: %+v, want the instance's refusal", o)
	}
	for _, sv := range []*detect.Verdict{nil, {Kind: detect.Failed, Reason: detect.ServerError}} {
		if o := suggestionOutcome(sv); o.Kind != pool.Cancelled || o.Reason != ReasonAutocomplete || held(o) {
			t.Errorf("autocompletion %+v: %+v, want cancelled, nobody's", sv, o)
		}
	}
}

// TestBlame: the owner and the rule of an outcome that cannot tell by
// itself, from what the rest of its search saw: the table in blame.go,
// row by row, every rule once at least.
func TestBlame(t *testing.T) {
	soft := pool.Outcome{Kind: pool.Soft, Reason: pool.Reason(detect.EnginesDown)}
	timeout := pool.Outcome{Kind: pool.Failed, Reason: pool.Reason(detect.Timeout)}
	dns := pool.Outcome{Kind: pool.Failed, Reason: pool.Reason(detect.DNS)}
	server := pool.Outcome{Kind: pool.Failed, Reason: pool.Reason(detect.ServerError)}
	client := pool.Outcome{Kind: pool.Failed, Reason: pool.Reason(detect.ClientError)}
	fair := 800 * time.Millisecond
	cases := []struct {
		name string
		o    pool.Outcome
		ev   evidence
		want Blame
	}{
		{"poor where another answered", soft, evidence{answeredIn: 200 * time.Millisecond}, Blame{pool.OwnerInstance, RuleAnsweredElse}},
		{"poor where none answered", soft, evidence{asked: 2}, Blame{pool.OwnerQuery, RulePoorAlike}},
		{"poor, differs from two alike", soft, evidence{asked: 3, ownPoor: true}, Blame{pool.OwnerInstance, RuleOwnPoor}},
		{"5xx where another answered", server, evidence{answeredIn: time.Second, alike: 1}, Blame{pool.OwnerInstance, RuleAnsweredElse}},
		{"5xx on two instances", server, evidence{asked: 2, alike: 2}, Blame{pool.OwnerQuery, RuleFailedAlike}},
		{"5xx on two instances, no slot for a third", server, evidence{asked: 2, alike: 2, noSecond: true}, Blame{pool.OwnerQuery, RuleFailedAlike}},
		{"5xx, no other instance", server, evidence{asked: 1, alike: 1}, Blame{pool.OwnerInstance, RuleServerAlone}},
		{"5xx, second opinion found no slot", server, evidence{asked: 1, alike: 1, noSecond: true}, Blame{pool.OwnerGateway, RuleNoSecond}},
		{"4xx where another answered", client, evidence{answeredIn: time.Second, alike: 1}, Blame{pool.OwnerInstance, RuleAnsweredElse}},
		{"4xx on two instances", client, evidence{asked: 2, alike: 2}, Blame{pool.OwnerQuery, RuleFailedAlike}},
		{"4xx, no other instance", client, evidence{asked: 1, alike: 1}, Blame{pool.OwnerClient, RuleOddQuery}},
		{"4xx, second opinion found no slot", client, evidence{asked: 1, alike: 1, noSecond: true}, Blame{pool.OwnerGateway, RuleNoSecond}},
		{"dns where another answered", dns, evidence{answeredIn: time.Second}, Blame{pool.OwnerInstance, RuleAnsweredElse}},
		{"dns everywhere", dns, evidence{asked: 3}, Blame{pool.OwnerGateway, RuleOffline}},
		{"timeout well past another's answer", timeout, evidence{answeredIn: 100 * time.Millisecond, asked: 2, elapsed: 3 * time.Second, fair: fair},
			Blame{pool.OwnerInstance, RuleAnsweredElse}},
		{"timeout cut before twice another's answer", timeout, evidence{answeredIn: 2 * time.Second, asked: 2, elapsed: 3 * time.Second, fair: fair},
			Blame{pool.OwnerGateway, RuleCutEarly}},
		{"timeout cut before its fair time (sent late)", timeout, evidence{asked: 1, elapsed: 500 * time.Millisecond, fair: 3200 * time.Millisecond},
			Blame{pool.OwnerGateway, RuleCutEarly}},
		{"timeout on every instance asked", timeout, evidence{asked: 2, elapsed: 4 * time.Second, fair: fair}, Blame{pool.OwnerQuery, RuleSlowEverywhere}},
		{"timeout on the only instance, after its fair time", timeout, evidence{asked: 1, elapsed: 4 * time.Second, fair: fair},
			Blame{pool.OwnerInstance, RuleOnlySlow}},
		{"timeout after a wait in the queue", timeout, evidence{asked: 1, queued: true, elapsed: 4 * time.Second, fair: fair},
			Blame{pool.OwnerGateway, RuleQueued}},
		{"timeout before the query's own <6", timeout, evidence{asked: 1, limit: 6 * time.Second, elapsed: 4 * time.Second, fair: fair},
			Blame{pool.OwnerQuery, RuleQuerySyntaxTime}},
		{"timeout past the query's own <2", timeout, evidence{asked: 1, limit: 2 * time.Second, elapsed: 4 * time.Second, fair: fair},
			Blame{pool.OwnerInstance, RuleOnlySlow}},
	}
	seen := map[Rule]bool{}
	for _, tc := range cases {
		got := blame(tc.o, tc.ev)
		if got != tc.want {
			t.Errorf("%s: %s (%s), want %s (%s)", tc.name, got.Owner, got.Rule, tc.want.Owner, tc.want.Rule)
		}
		seen[got.Rule] = true
	}
	for r := RuleAnsweredElse; r <= RuleOnlySlow; r++ {
		if !seen[r] || r.String() == "unknown" {
			t.Errorf("rule %d (%s) has no row", r, r)
		}
	}
}

// TestOpinionsGiveBlameTheirEvidence: what a search's opinions saw
// reaches blame: its answers, its own poor answers, the failures alike,
// a second opinion not asked, the queue and the query's limit.
func TestOpinionsGiveBlameTheirEvidence(t *testing.T) {
	op := &opinions{limit: 6 * time.Second, asked: 2, answeredIn: time.Second, noSecond: true,
		own: map[string]bool{"odd": true}, alike: map[detect.Reason]int{detect.ServerError: 2}}
	h := heldOutcome{l: leased{inst: "odd", queued: true}, o: pool.Outcome{Kind: pool.Failed, Reason: pool.Reason(detect.ServerError)},
		elapsed: 3 * time.Second, fair: time.Second}
	want := evidence{answeredIn: time.Second, ownPoor: true, alike: 2, noSecond: true, asked: 2, limit: 6 * time.Second,
		queued: true, elapsed: 3 * time.Second, fair: time.Second}
	if got := op.evidence(h); got != want {
		t.Errorf("evidence %+v, want %+v", got, want)
	}
	if op.failedAlike() != detect.ServerError {
		t.Errorf("failed alike %q, want the 5xx seen twice", op.failedAlike())
	}
}

// TestOneEnginesDownInstanceAmongGoodOnes: an instance whose engines fail
// where another answers the same query is struck; the good one is not.
func TestOneEnginesDownInstanceAmongGoodOnes(t *testing.T) {
	e := newEnv(t, Config{},
		sim.InstanceConfig{Behaviour: sim.EmptyEnginesDown, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	res, err := e.search(t, "a fine question")
	if err != nil || res.Instance != e.urls[1] {
		t.Fatalf("%+v %v, want the good instance's answer", res, err)
	}
	if st := e.pool.Stats(e.urls[0]); st.Softs != 1 || st.Excused != 0 {
		t.Fatalf("the engines-down instance: softs %d, excused %d; want its own soft strike", st.Softs, st.Excused)
	}
	if st := e.pool.Stats(e.urls[1]); st.Successes != 1 {
		t.Fatalf("the good instance: %+v", st)
	}
}

// TestPanickingParserIsTheInstancesGarbage: a panic while reading an
// answer is that instance's unreadable answer; the search goes on to
// another instance and the proxy keeps serving.
func TestPanickingParserIsTheInstancesGarbage(t *testing.T) {
	e := newEnv(t, Config{},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	bad := e.urls[0]
	e.proxy.classify = func(a detect.Answer) detect.Verdict {
		if a.Instance == bad {
			panic("a parser bug")
		}
		return detect.Classify(a)
	}
	res, err := e.search(t, "survive a panic")
	if err != nil || res.Instance != e.urls[1] {
		t.Fatalf("%+v %v, want the other instance's answer", res, err)
	}
	if st := e.pool.Stats(bad); st.Failures != 1 || st.LastReason != pool.Reason(detect.BadBody) {
		t.Fatalf("the panicking answer was recorded %s/%s (%d failures), want failed/bad_body", st.LastOutcome, st.LastReason, st.Failures)
	}
	if _, err := e.search(t, "and again"); err != nil && !errors.Is(err, ErrNoAnswer) {
		t.Fatal(err)
	}
}

// TestClientGoneBlamesNoInstance: a client that leaves while its search is
// at an instance (the last caller waiting for it, so the search stops: see
// lead) may or may not get the answer already read, but the instance's
// answer is judged as its own (here good), never as its failure.
func TestClientGoneBlamesNoInstance(t *testing.T) {
	e := newEnv(t, Config{}, sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	ctx, leave := context.WithCancel(context.Background())
	e.proxy.classify = func(a detect.Answer) detect.Verdict {
		leave() // the client leaves while the answer is being read
		return detect.Classify(a)
	}
	if _, err := e.proxy.Search(ctx, Request{Query: "client leaves", PageNo: 1, Format: FormatJSON}); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("search: %v, want the answer or the client's cancellation", err)
	}
	if err := e.proxy.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := e.pool.Stats(e.urls[0])
	if e.searches(0) != 1 || st.Failures != 0 || st.Refusals != 0 || st.Circuit != pool.Closed || st.LastOutcome != "ok" {
		t.Fatalf("after the client left: %d searches, %d failures, %d refusals, circuit %s, last %s; want its answer recorded ok",
			e.searches(0), st.Failures, st.Refusals, st.Circuit, st.LastOutcome)
	}
}

// TestClientOverItsLimitBlamesNoInstance: a search its client's own limit
// refuses (Config.Admit) gives the instance it had taken back unasked:
// nothing is sent, nothing is charged to the instance, and the client is
// told when to come back.
func TestClientOverItsLimitBlamesNoInstance(t *testing.T) {
	e := newEnv(t, Config{Clock: timersOf(quietTimers), Admit: func(string, time.Time) (bool, time.Duration) {
		return false, 30 * time.Second
	}}, fastFleet(2)...)
	for _, q := range []string{"over the limit", "still over it"} {
		_, err := e.proxy.Search(context.Background(), Request{Query: q, PageNo: 1, Format: FormatJSON, Client: "203.0.113.9"})
		var limited *LimitedError
		if !errors.As(err, &limited) || limited.RetryAfter != 30*time.Second {
			t.Fatalf("%q: %v, want the client's limit with its Retry-After", q, err)
		}
	}
	e.settled(t)
	for i, u := range e.urls {
		st := e.pool.Stats(u)
		if e.searches(i) != 0 || st.Failures != 0 || st.Refusals != 0 || st.Softs != 0 || st.Excused != 0 ||
			st.FailureRate != 0 || st.Circuit != pool.Closed {
			t.Errorf("instance %d: %d searches, %d failures, %d refusals, %d softs, %d excused, failure %.2f, circuit %s; want untouched",
				i, e.searches(i), st.Failures, st.Refusals, st.Softs, st.Excused, st.FailureRate, st.Circuit)
		}
	}
}
