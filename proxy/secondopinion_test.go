package proxy

import (
	"context"
	"errors"
	"fmt"
	"github.com/searxgate/searxgate/sim"
	"testing"
	"time"

	"github.com/searxgate/searxgate/pool"
)

// TestLoneServerErrorWithoutBudgetIsNotTheInstances: once the extra
// budget is spent, a 5xx whose second opinion could not be asked is held
// to the end of its search and judged searxgate's: however many such
// queries come, no instance is charged and no circuit opens. (With a
// second opinion, two alike make it the query's.)
func TestLoneServerErrorWithoutBudgetIsNotTheInstances(t *testing.T) {
	e := newEnv(t, Config{ExtraRatio: 1e-9, ExtraFloor: 1}, fastFleet(3)...)
	for i := range 8 {
		_, err := e.search(t, fmt.Sprintf("servererror budget %d", i))
		var na *NoAnswerError
		if !errors.As(err, &na) {
			t.Fatalf("search %d: %v, want no answer", i, err)
		}
		if i > 0 && (na.Why != StopBudget || len(na.Tried) != 1) {
			t.Fatalf("search %d: %s after %d, want the budget's refusal after one", i, na.Why, len(na.Tried))
		}
	}
	e.settled(t)
	for i := range e.urls {
		if st := e.blamed(t, i, 0, 0, 0); st.Circuit != pool.Closed {
			t.Errorf("instance %d: circuit %s", i, st.Circuit)
		}
	}
}

// TestLoneServerErrorOnTheOnlyInstanceIsItsOwn: the control: with no
// other instance to ask, a lone 5xx is its instance's.
func TestLoneServerErrorOnTheOnlyInstanceIsItsOwn(t *testing.T) {
	e := newEnv(t, Config{}, fastFleet(1)...)
	if _, err := e.search(t, "servererror alone"); err == nil {
		t.Fatal("answered")
	}
	e.settled(t)
	e.blamed(t, 0, 1, 0, 0)
}

// TestExtrasAreChargedToTheClientsRate: a retry after an instance's own
// failure asks AdmitExtra with the client; refused, it is not sent and the
// extra budget is given back.
func TestExtrasAreChargedToTheClientsRate(t *testing.T) {
	for _, allow := range []bool{true, false} {
		var asked []string
		cfg := Config{AdmitExtra: func(client string, _ time.Time) bool {
			asked = append(asked, client)
			return allow
		}}
		e := newEnv(t, cfg,
			sim.InstanceConfig{Behaviour: sim.BrokenJSON, Latency: -1, JSON: true},
			sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
		res, err := e.proxy.Search(context.Background(), Request{Query: "retried", PageNo: 1, Format: FormatJSON, Client: "192.0.2.7"})
		if len(asked) != 1 || asked[0] != "192.0.2.7" {
			t.Fatalf("allow %v: AdmitExtra asked for %q, want once for the client", allow, asked)
		}
		switch {
		case allow && (err != nil || res.Instance != e.urls[1]):
			t.Errorf("extra allowed: %v %+v, want the second instance's answer", err, res)
		case !allow && (err == nil || e.searches(1) != 0):
			t.Errorf("extra refused: %v, %d searches of the second instance; want no answer and none sent", err, e.searches(1))
		}
		if _, extra := e.proxy.extra.Counts(e.clock.Now()); !allow && extra != 0 {
			t.Errorf("extra refused: %d extras counted, want it given back", extra)
		}
	}
}
