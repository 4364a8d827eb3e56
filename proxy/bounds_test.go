package proxy

import (
	"testing"
	"time"

	"github.com/searxgate/searxgate/results"
	"github.com/searxgate/searxgate/sim"
)

// hostileResults is how many results the hostile instance sends: as many
// as fit its HTML page under the upstream's 4 MiB cap.
const hostileResults = 4_000

// TestHostileAnswerIsBounded: an instance answering thousands of results
// (its HTML page about 4 MB) is served and cached with results.MaxResults of them, the
// rest counted; the cached answer stays small.
func TestHostileAnswerIsBounded(t *testing.T) {
	for _, json := range []bool{true, false} {
		// Reading a 4 MB page under the race detector on a loaded machine
		// takes seconds: the deadline is not what this test is about.
		e := newEnv(t, Config{Deadline: time.Minute}, sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: json, Results: hostileResults})
		for _, want := range []bool{false, true} { // a miss, then a cache hit
			res, err := e.search(t, "hello world")
			if err != nil {
				if na, ok := err.(*NoAnswerError); ok {
					t.Fatalf("%v: %+v", err, na.Tried)
				}
				t.Fatal(err)
			}
			if res.Cached != want {
				t.Fatalf("json %v: cached %v, want %v", json, res.Cached, want)
			}
			r, err := res.Results()
			if err != nil || len(r.Results) == 0 || len(r.Results) > results.MaxResults {
				t.Fatalf("json %v: %d results kept (%v), want 1..%d", json, len(r.Results), err, results.MaxResults)
			}
			if limit := results.MaxAnswerBytes + results.MaxResults*512; len(res.JSON) > limit {
				t.Fatalf("json %v: the answer's JSON is %d bytes, want ≤ %d", json, len(res.JSON), limit)
			}
		}
		if got := e.proxy.Metrics().ResultsDropped(); got != hostileResults-results.MaxResults {
			t.Fatalf("json %v: %d results counted dropped, want %d", json, got, hostileResults-results.MaxResults)
		}
	}
}
