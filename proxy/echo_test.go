package proxy

import (
	"testing"

	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/sim"
)

// TestEchoSpamIsTheInstancesOwn: an instance whose results only echo the
// query's words back (spam generated from the query, each result worded
// differently) is off topic: its answer is never served, the next
// instance's is, and the strike is the spam instance's own since others
// answered the same queries well.
func TestEchoSpamIsTheInstancesOwn(t *testing.T) {
	e := newEnv(t, Config{},
		sim.InstanceConfig{Behaviour: sim.EchoSpam, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	for _, q := range []string{"rust borrow checker", "weather tomorrow", "a third question"} {
		res, err := e.search(t, q)
		if err != nil || res.Instance == e.urls[0] || res.Soft != "" {
			t.Fatalf("%q: %v, answered by %s (soft %q); want a good instance's answer", q, err, res.Instance, res.Soft)
		}
	}
	asked := e.searches(0)
	if asked == 0 {
		t.Fatal("the spam instance (ranked first) was never asked")
	}
	e.settled(t)
	if st := e.blamed(t, 0, 0, asked, 0); st.LastReason != pool.Reason(detect.OffTopic) {
		t.Errorf("the spam instance: last %s, want off_topic", st.LastReason)
	}
	e.blamed(t, 1, 0, 0, 0)
	e.blamed(t, 2, 0, 0, 0)
}
