package main

import (
	"encoding/json"
	"fmt"
	"go/build"
	"io"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/searxgate/searxgate/internal/redistest"
	"github.com/searxgate/searxgate/redis"
	"github.com/searxgate/searxgate/sim"
)

// TestOnlyRedisImportsTheRedisClient: the wiring reaches Redis only
// through package redis.
func TestOnlyRedisImportsTheRedisClient(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if strings.HasPrefix(imp, "github.com/redis/") {
			t.Fatalf("cmd/searxgate imports %s; go through package redis", imp)
		}
	}
	if !slices.Contains(pkg.Imports, "github.com/searxgate/searxgate/redis") {
		t.Fatal("cmd/searxgate does not import redis: this test checks nothing")
	}
}

func TestSharedFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // in the error; "" = valid
	}{
		{[]string{"--redis", "redis://127.0.0.1:6379/0", "--secret", testSecret}, ""},
		{[]string{"--redis", "rediss://user:pw@cache.example:6380/1", "--egress", "eu-1", "--secret-file", "/run/secrets/searxgate"}, ""},
		{[]string{"--redis", "unix:///run/redis/redis.sock", "--secret", testSecret}, ""},
		{[]string{"--redis", "http://user:s3cretpw@127.0.0.1:6379", "--secret", testSecret}, "--redis (SEARXGATE_REDIS)"},
		// Replicas sharing Redis need the operator's secret.
		{[]string{"--redis", "redis://127.0.0.1:6379/0"}, "--secret (SEARXGATE_SECRET): is required with --redis"},
		{[]string{"--redis", "redis://127.0.0.1:6379/0", "--secret", "short"}, "--secret (SEARXGATE_SECRET)"},
		{[]string{"--secret", testSecret, "--secret-file", "/run/secrets/searxgate"}, "--secret (SEARXGATE_SECRET)"},
		{[]string{"--egress", "has space"}, "--egress (SEARXGATE_EGRESS)"},
		{[]string{"--egress", ""}, "--egress (SEARXGATE_EGRESS)"},
		{[]string{"--redis-timeout", "5s"}, "--redis-timeout (SEARXGATE_REDIS_TIMEOUT)"},
	} {
		_, err := parseConfig(c.args, func(string) string { return "" }, io.Discard)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.args, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: error %v, want one naming %s", c.args, err, c.want)
		case err != nil && (strings.Contains(err.Error(), "s3cretpw") || strings.Contains(err.Error(), testSecret) || strings.Contains(err.Error(), "short")):
			t.Errorf("%v: the error shows the password or the secret: %v", c.args, err)
		}
	}
}

// testSecret is the operator's secret of the tests' replicas.
const testSecret = "the tests' secret, 32 bytes long"

// TestReplicasThroughRedis: three searxgates with --redis on one fleet,
// load spread over them: no instance gets more than its budget in 20 s,
// only answers or honest 503s, and a query answered by one is answered
// by another from the shared cache.
func TestReplicasThroughRedis(t *testing.T) {
	t.Parallel() // it waits on real time: see parallelWaits
	srv := redistest.Start(t)
	fleet, dir := startFleet(t, 11, []sim.InstanceConfig{
		{Behaviour: sim.Fast, Latency: -1, JSON: true},
		{Behaviour: sim.Fast, Latency: -1, JSON: true},
	})
	var gws []*gateway
	for range 3 {
		gws = append(gws, startGatewayWith(t, &failResolver{}, dir, "",
			"--redis", srv.URL(), "--secret", testSecret, "--egress", "test", "--redis-timeout", "500ms", "--client-rate", "0"))
	}
	for i, g := range gws {
		if st, ok := sharedStatus(g.app); !ok || !st.Shared || st.Group != "test" {
			t.Fatalf("gateway %d shared status %+v", i, st)
		}
	}
	// A query one replica answered is a cache hit on another: no
	// instance is asked again.
	if a := gws[0].get(t, "/search?format=json&q=shared+cache", nil); a.status != 200 {
		t.Fatalf("first ask: %d %s", a.status, a.body)
	}
	waitAnswerInRedis(t, srv)
	before := totalSearches(fleet)
	if a := gws[1].get(t, "/search?format=json&q=shared+cache", nil); a.status != 200 || !onTopic(a.body, "shared cache") {
		t.Fatalf("second replica: %d %s", a.status, a.body)
	}
	if after := totalSearches(fleet); after != before {
		t.Fatalf("the other replica asked an instance again (%d -> %d searches)", before, after)
	}
	fleet.ResetTruth()

	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for i := range 45 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := gws[i%3].get(t, "/search?format=json&q="+url.QueryEscape(fmt.Sprintf("replica load %d", i)), nil)
			mu.Lock()
			statuses[a.status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if time.Since(start) > 15*time.Second {
		t.Fatalf("the load took %v: the totals no longer prove the 20 s window", time.Since(start))
	}
	for _, in := range fleet.Instances() {
		if n := in.Truth().Searches; n > 10 {
			t.Errorf("instance %s got %d searches within 20 s from three replicas, want at most 10", in.ID(), n)
		}
	}
	for s, n := range statuses {
		if s != 200 && s != 503 {
			t.Errorf("%d answers with status %d; want only 200 and honest 503s", n, s)
		}
	}
	if statuses[200] < 15 {
		t.Errorf("statuses %v: too few answers (20 fit the budget)", statuses)
	}

}

// waitAnswerInRedis waits until an answer is kept in Redis (its write is
// queued after the search returns).
func waitAnswerInRedis(t *testing.T, srv *redistest.Server) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		if keys, _ := srv.Keys("searxgate:c:a:*"); len(keys) > 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("no answer appeared in Redis within 2 s")
}

// waitFor polls cond every 20 ms for up to d (heartbeats run every 2 s).
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestReplicasThroughRedisOutage: Redis stops while three searxgates
// serve: they keep answering (200, or an honest 503), each within 1/3 of
// every budget, and share again when it is back.
func TestReplicasThroughRedisOutage(t *testing.T) {
	srv := redistest.Start(t)
	fleet, dir := startFleet(t, 12, []sim.InstanceConfig{
		{Behaviour: sim.Fast, Latency: -1, JSON: true},
		{Behaviour: sim.Fast, Latency: -1, JSON: true},
	})
	var gws []*gateway
	for range 3 {
		gws = append(gws, startReplica(t, srv, dir)) // a quick heartbeat: the outage is seen at once
	}
	waitFor(t, 10*time.Second, "every replica sees three", func() bool {
		for _, g := range gws {
			if st, _ := sharedStatus(g.app); !st.Shared || st.Replicas != 3 {
				return false
			}
		}
		return true
	})
	srv.Stop()
	start := time.Now()
	statuses := map[int]int{}
	for i := range 36 {
		a := gws[i%3].get(t, "/search?format=json&q="+url.QueryEscape(fmt.Sprintf("outage %d", i)), nil)
		statuses[a.status]++
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("36 searches took %v without Redis", d)
	}
	for s, n := range statuses {
		if s != 200 && s != 503 {
			t.Errorf("%d answers with status %d without Redis; want 200 or an honest 503", n, s)
		}
	}
	for _, in := range fleet.Instances() {
		if n := in.Truth().Searches; n > 9 {
			t.Errorf("instance %s got %d searches without Redis, want at most 9 (3 per replica)", in.ID(), n)
		}
	}
	if statuses[200] < 12 {
		t.Errorf("statuses %v: too few answers without Redis (18 fit)", statuses)
	}
	waitFor(t, 10*time.Second, "every replica on its own", func() bool {
		for _, g := range gws {
			if st, _ := sharedStatus(g.app); st.Shared || st.LastError == "" {
				return false
			}
		}
		return true
	})
	if m := string(gws[0].get(t, "/metrics", nil).body); !strings.Contains(m, "\nsearxgate_replicas_shared 0\n") {
		t.Error("/metrics does not say the replica is alone")
	}
	srv.Start()
	waitFor(t, 10*time.Second, "every replica shared again", func() bool {
		for _, g := range gws {
			if st, _ := sharedStatus(g.app); !st.Shared {
				return false
			}
		}
		return true
	})
}

// TestSharedStateReachesTheProxy: web reads the shared state through the
// proxy; without --redis there is none.
func TestSharedStateReachesTheProxy(t *testing.T) {
	srv := redistest.Start(t)
	_, dir := startFleet(t, 13, []sim.InstanceConfig{{Behaviour: sim.Fast, Latency: -1, JSON: true}})
	g := startGatewayWith(t, &failResolver{}, dir, "", "--redis", srv.URL(), "--secret", testSecret, "--egress", "eu-1", "--redis-timeout", "500ms")
	st, ok := g.app.proxy.Replicas().State()
	if !ok || !st.Shared || st.Group != "eu-1" || st.Replicas != 1 {
		t.Fatalf("shared state %+v, %v", st, ok)
	}
	var report struct {
		Replicas *struct {
			Shared   bool   `json:"shared"`
			Group    string `json:"group"`
			Replicas int    `json:"replicas"`
		} `json:"replicas"`
	}
	if err := json.Unmarshal(g.get(t, "/status.json", nil).body, &report); err != nil || report.Replicas == nil ||
		!report.Replicas.Shared || report.Replicas.Group != "eu-1" || report.Replicas.Replicas != 1 {
		t.Fatalf("/status.json replicas %+v (%v)", report.Replicas, err)
	}
	if page := string(g.get(t, "/status", nil).body); !strings.Contains(page, "Replicas (eu-1)") {
		t.Fatal("/status does not show the replicas")
	}
	if m := string(g.get(t, "/metrics", nil).body); !strings.Contains(m, "\nsearxgate_replicas_shared 1\n") || !strings.Contains(m, "\nsearxgate_replicas_seen 1\n") {
		t.Fatal("/metrics does not say the replica shares")
	}
	alone := startGatewayWith(t, &failResolver{}, dir, "")
	if st, ok := alone.app.proxy.Replicas().State(); ok {
		t.Fatalf("a lone searxgate reports shared state %+v", st)
	}
	if m := string(alone.get(t, "/metrics", nil).body); strings.Contains(m, "searxgate_replicas_shared") {
		t.Fatal("a lone searxgate's /metrics speaks of replicas")
	}
}

// sharedStatus is the shared state as the replica a sees it; ok is false
// without --redis.
func sharedStatus(a *App) (redis.Status, bool) {
	if a.shared == nil {
		return redis.Status{}, false
	}
	return a.shared.Status(), true
}
