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

// TestOwnerOf: the owner one answer tells by itself, for every kind of
// outcome searxgate records (the table in owner.go).
func TestOwnerOf(t *testing.T) {
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
		o := ownerOf(tc.v, tc.err, tc.format)
		if o.Kind != tc.kind || o.Owner != tc.owner || ambiguous(o) != tc.ambiguous {
			t.Errorf("%s: %s/%s ambiguous %v, want %s/%s ambiguous %v", tc.name, o.Kind, o.Owner, ambiguous(o), tc.kind, tc.owner, tc.ambiguous)
		}
	}
}

// TestJudge: the owner of an outcome that cannot tell by itself, from
// what the rest of its search saw.
func TestJudge(t *testing.T) {
	p := &Proxy{cfg: Config{HedgeFloor: 800 * time.Millisecond}}
	soft := pool.Outcome{Kind: pool.Soft, Reason: string(detect.EnginesDown)}
	timeout := pool.Outcome{Kind: pool.Failed, Reason: string(detect.Timeout)}
	dns := pool.Outcome{Kind: pool.Failed, Reason: string(detect.DNS)}
	server := pool.Outcome{Kind: pool.Failed, Reason: string(detect.ServerError)}
	client := pool.Outcome{Kind: pool.Failed, Reason: string(detect.ClientError)}
	cases := []struct {
		name string
		op   opinions
		h    heldOutcome
		want pool.Owner
	}{
		{name: "poor where another answered", op: opinions{answeredIn: 200 * time.Millisecond}, h: heldOutcome{o: soft}, want: pool.OwnerInstance},
		{name: "poor where none answered", op: opinions{asked: 2}, h: heldOutcome{o: soft}, want: pool.OwnerQuery},
		{name: "poor, two different poor answers", op: opinions{asked: 2}, h: heldOutcome{o: soft}, want: pool.OwnerQuery},
		{name: "poor, differs from two alike", op: opinions{asked: 3, own: map[string]bool{"odd": true}},
			h: heldOutcome{l: leased{inst: "odd"}, o: soft}, want: pool.OwnerInstance},
		{name: "poor, one of two alike", op: opinions{asked: 3, own: map[string]bool{"odd": true}},
			h: heldOutcome{l: leased{inst: "alike"}, o: soft}, want: pool.OwnerQuery},
		{name: "5xx where another answered", op: opinions{answeredIn: time.Second, alike: map[detect.Reason]int{detect.ServerError: 1}}, h: heldOutcome{o: server}, want: pool.OwnerInstance},
		{name: "5xx on two instances", op: opinions{asked: 2, alike: map[detect.Reason]int{detect.ServerError: 2}}, h: heldOutcome{o: server}, want: pool.OwnerQuery},
		{name: "5xx, no second opinion", op: opinions{asked: 2, alike: map[detect.Reason]int{detect.ServerError: 1}}, h: heldOutcome{o: server}, want: pool.OwnerInstance},
		{name: "4xx where another answered", op: opinions{answeredIn: time.Second, alike: map[detect.Reason]int{detect.ClientError: 1}}, h: heldOutcome{o: client}, want: pool.OwnerInstance},
		{name: "4xx on two instances", op: opinions{asked: 2, alike: map[detect.Reason]int{detect.ClientError: 2}}, h: heldOutcome{o: client}, want: pool.OwnerQuery},
		{name: "4xx, no second opinion", op: opinions{asked: 1, alike: map[detect.Reason]int{detect.ClientError: 1}}, h: heldOutcome{o: client}, want: pool.OwnerClient},
		{name: "dns where another answered", op: opinions{answeredIn: time.Second}, h: heldOutcome{o: dns}, want: pool.OwnerInstance},
		{name: "dns everywhere", op: opinions{asked: 3}, h: heldOutcome{o: dns}, want: pool.OwnerGateway},
		{name: "timeout well past another's answer", op: opinions{answeredIn: 100 * time.Millisecond, asked: 2},
			h: heldOutcome{o: timeout, elapsed: 3 * time.Second, fair: 800 * time.Millisecond}, want: pool.OwnerInstance},
		{name: "timeout cut before twice another's answer", op: opinions{answeredIn: 2 * time.Second, asked: 2},
			h: heldOutcome{o: timeout, elapsed: 3 * time.Second, fair: 800 * time.Millisecond}, want: pool.OwnerGateway},
		{name: "timeout cut before its fair time (queued late)", op: opinions{asked: 1},
			h: heldOutcome{o: timeout, elapsed: 500 * time.Millisecond, fair: 3200 * time.Millisecond}, want: pool.OwnerGateway},
		{name: "timeout on every instance asked", op: opinions{asked: 2},
			h: heldOutcome{o: timeout, elapsed: 4 * time.Second, fair: 800 * time.Millisecond}, want: pool.OwnerQuery},
		{name: "timeout on the only instance, after its fair time", op: opinions{asked: 1},
			h: heldOutcome{o: timeout, elapsed: 4 * time.Second, fair: 800 * time.Millisecond}, want: pool.OwnerInstance},
		{name: "timeout after a wait in the queue", op: opinions{asked: 1},
			h: heldOutcome{l: leased{queued: true}, o: timeout, elapsed: 4 * time.Second, fair: 800 * time.Millisecond}, want: pool.OwnerGateway},
		{name: "timeout before the query's own <6", op: opinions{asked: 1, limit: 6 * time.Second},
			h: heldOutcome{o: timeout, elapsed: 4 * time.Second, fair: 800 * time.Millisecond}, want: pool.OwnerQuery},
		{name: "timeout past the query's own <2", op: opinions{asked: 1, limit: 2 * time.Second},
			h: heldOutcome{o: timeout, elapsed: 4 * time.Second, fair: 800 * time.Millisecond}, want: pool.OwnerInstance},
	}
	for i := range cases {
		tc := &cases[i]
		tc.op.p = p
		if got := tc.op.judge(tc.h); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
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
	if st := e.pool.Stats(bad); st.Failures != 1 || st.LastReason != string(detect.BadBody) {
		t.Fatalf("the panicking answer was recorded %s/%s (%d failures), want failed/bad_body", st.LastOutcome, st.LastReason, st.Failures)
	}
	if _, err := e.search(t, "and again"); err != nil && !errors.Is(err, ErrNoAnswer) {
		t.Fatal(err)
	}
}

// TestClientGoneBlamesNoInstance: a client that leaves while its search is
// at an instance does not end the search (others may have joined it, see
// lead), and the instance's answer is judged as its own (here good),
// never as its failure.
func TestClientGoneBlamesNoInstance(t *testing.T) {
	e := newEnv(t, Config{}, sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	ctx, leave := context.WithCancel(context.Background())
	e.proxy.classify = func(a detect.Answer) detect.Verdict {
		leave() // the client leaves while the answer is being read
		return detect.Classify(a)
	}
	if _, err := e.proxy.Search(ctx, Request{Query: "client leaves", PageNo: 1, Format: FormatJSON}); err != nil {
		t.Fatalf("search: %v, want the answer (the search goes on without its client)", err)
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
