package main

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/searxgate/searxgate/internal/redistest"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/sim"
)

// testHeartbeat is the replicas' heartbeat in these tests (2 s in
// production): outages and recoveries then take fractions of a second.
const testHeartbeat = 200 * time.Millisecond

// startReplica runs one searxgate of the test group on srv, with a quick
// heartbeat; more flags may follow.
func startReplica(t *testing.T, srv *redistest.Server, dir string, more ...string) *gateway {
	t.Helper()
	return startReplicaAt(t, srv.URL(), dir, append([]string{"--redis-timeout", "500ms"}, more...)...)
}

// startReplicaAt is startReplica on the Redis at redisURL.
func startReplicaAt(t *testing.T, redisURL, dir string, more ...string) *gateway {
	t.Helper()
	args := append([]string{"--listen", "127.0.0.1:0", "--allow-private", "--directory", dir, "--data", t.TempDir(),
		"--redis", redisURL, "--egress", "test", "--client-rate", "0"}, more...)
	if !slicesHas(more, "--secret-file") {
		args = append(args, "--secret", testSecret)
	}
	cfg, err := parseConfig(args, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.resolver = &failResolver{}
	cfg.redisHeartbeat = testHeartbeat
	g, err := runGateway(t, cfg, testLog())
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func slicesHas(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// startReplicas starts n replicas and waits until each sees them all.
func startReplicas(t *testing.T, srv *redistest.Server, dir string, n int) []*gateway {
	t.Helper()
	var gws []*gateway
	for range n {
		gws = append(gws, startReplica(t, srv, dir))
	}
	waitFor(t, 5*time.Second, "every replica sees the others", func() bool {
		for _, g := range gws {
			if st, _ := sharedStatus(g.app); !st.Shared || st.Replicas != n {
				return false
			}
		}
		return true
	})
	return gws
}

// steadyLoad searches the replicas round robin, one search every pause,
// until stop is closed; it counts the statuses.
type steadyLoad struct {
	mu       sync.Mutex // guards statuses
	statuses map[int]int
	n        atomic.Int64
	stop     chan struct{}
	done     chan struct{}
}

func startSteadyLoad(t *testing.T, gws []*gateway, prefix string, pause time.Duration) *steadyLoad {
	l := &steadyLoad{statuses: map[int]int{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for i := 0; ; i++ {
			select {
			case <-l.stop:
				return
			case <-time.After(pause):
			}
			a := gws[i%len(gws)].get(t, "/search?format=json&q="+url.QueryEscape(fmt.Sprintf("%s %d", prefix, i)), nil)
			l.mu.Lock()
			l.statuses[a.status]++
			l.mu.Unlock()
			l.n.Add(1)
		}
	}()
	return l
}

func (l *steadyLoad) end() map[int]int {
	close(l.stop)
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.statuses
}

// checkStatuses fails on anything but answers and honest 503s.
func checkStatuses(t *testing.T, statuses map[int]int) {
	t.Helper()
	for s, n := range statuses {
		if s != 200 && s != 503 {
			t.Errorf("%d answers with status %d; want only 200 and honest 503s", n, s)
		}
	}
}

// TestReplicasSurviveFlushall: Redis forgets everything twice (FLUSHALL)
// while three replicas serve a steady load: they notice, write back what
// they remember, and no instance gets more than its budget in 20 s.
func TestReplicasSurviveFlushall(t *testing.T) {
	t.Parallel() // it waits on real time: see parallelWaits
	srv := redistest.Start(t)
	fleet, dir := startFleet(t, 21, []sim.InstanceConfig{
		{Behaviour: sim.Fast, Latency: -1, JSON: true},
		{Behaviour: sim.Fast, Latency: -1, JSON: true},
	})
	gws := startReplicas(t, srv, dir, 3)
	start := time.Now()
	// Slow enough that the windows are not full at the first FLUSHALL
	// (a full one holds each replica locally, and Redis is not asked).
	load := startSteadyLoad(t, gws, "flushed", 120*time.Millisecond)
	for _, at := range []time.Duration{1300 * time.Millisecond, 2600 * time.Millisecond} {
		time.Sleep(time.Until(start.Add(at)))
		if _, err := srv.Do("FLUSHALL"); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Until(start.Add(4500 * time.Millisecond)))
	statuses := load.end()
	if d := time.Since(start); d > 15*time.Second {
		t.Fatalf("the load took %v: the totals no longer prove the 20 s window", d)
	}
	checkStatuses(t, statuses)
	for _, in := range fleet.Instances() {
		if n := in.Truth().Searches; n > 10 {
			t.Errorf("instance %s got %d searches within 20 s across two FLUSHALLs, want at most 10", in.ID(), n)
		}
	}
	if statuses[200] < 10 {
		t.Errorf("statuses %v: too few answers (18 fit the budget)", statuses)
	}
	t.Logf("%d searches: %v", load.n.Load(), statuses)
	// A replica that stops cleanly leaves N at once (within a heartbeat).
	if err := gws[2].stop(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*time.Second, "the others count two", func() bool {
		for _, g := range gws[:2] {
			if st, _ := sharedStatus(g.app); st.Replicas != 2 {
				return false
			}
		}
		return true
	})
}

// TestReplicasAfterARedisRestart: Redis restarts empty while three
// replicas serve; within seconds of its return a query one replica
// answered is a shared cache hit on another (one with the secret from a
// file).
func TestReplicasAfterARedisRestart(t *testing.T) {
	srv := redistest.Start(t)
	fleet, dir := startFleet(t, 22, []sim.InstanceConfig{
		{Behaviour: sim.Fast, Latency: -1, JSON: true},
		{Behaviour: sim.Fast, Latency: -1, JSON: true},
		{Behaviour: sim.Fast, Latency: -1, JSON: true},
	})
	secretFile := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secretFile, []byte(testSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	gws := []*gateway{startReplica(t, srv, dir), startReplica(t, srv, dir, "--secret-file", secretFile), startReplica(t, srv, dir)}
	waitFor(t, 5*time.Second, "every replica sees three", func() bool {
		for _, g := range gws {
			if st, _ := sharedStatus(g.app); !st.Shared || st.Replicas != 3 {
				return false
			}
		}
		return true
	})
	load := startSteadyLoad(t, gws, "restarted", 100*time.Millisecond)
	time.Sleep(500 * time.Millisecond)
	srv.Stop()
	waitFor(t, 5*time.Second, "a replica on its own", func() bool {
		st, _ := sharedStatus(gws[0].app)
		return !st.Shared
	})
	srv.Start()
	back := time.Now()
	waitFor(t, 5*time.Second, "every replica shared again", func() bool {
		for _, g := range gws {
			if st, _ := sharedStatus(g.app); !st.Shared {
				return false
			}
		}
		return true
	})
	checkStatuses(t, load.end())
	if a := gws[0].get(t, "/search?format=json&q=after+restart", nil); a.status != 200 {
		t.Fatalf("first ask after the restart: %d %s", a.status, a.body)
	}
	waitAnswerInRedis(t, srv)
	before := totalSearches(fleet)
	a := gws[1].get(t, "/search?format=json&q=after+restart", nil)
	if a.status != 200 || a.header.Get("X-Searxgate-Cache") != "hit" || !onTopic(a.body, "after restart") {
		t.Fatalf("the other replica: %d, cache %q", a.status, a.header.Get("X-Searxgate-Cache"))
	}
	if after := totalSearches(fleet); after != before {
		t.Fatalf("the other replica asked an instance again (%d -> %d searches)", before, after)
	}
	if d := time.Since(back); d > 5*time.Second {
		t.Fatalf("the shared cache hit came %v after Redis was back, want within seconds", d)
	}
	for _, in := range fleet.Instances() {
		if n := in.Truth().Searches; n > 10 {
			t.Errorf("instance %s got %d searches within 20 s across the restart, want at most 10", in.ID(), n)
		}
	}
}

// TestReplicasLearnRefusalsOfAnOutage: a refusal one replica meets while
// Redis is down reaches the others once it is back, and they send that
// instance nothing inside its Retry-After.
func TestReplicasLearnRefusalsOfAnOutage(t *testing.T) {
	srv := redistest.Start(t)
	fleet, dir := startFleet(t, 23, []sim.InstanceConfig{
		{Behaviour: sim.RateLimitSeconds, RateBurst: 1, RetryAfter: 10 * time.Minute, Latency: -1, JSON: true},
		{Behaviour: sim.Fast, Latency: -1, JSON: true},
	})
	limited := fleet.Instances()[0]
	gws := startReplicas(t, srv, dir, 3)
	srv.Stop()
	waitFor(t, 5*time.Second, "every replica on its own", func() bool {
		for _, g := range gws {
			if st, _ := sharedStatus(g.app); st.Shared {
				return false
			}
		}
		return true
	})
	for i := 0; gws[0].app.pool.Stats(limited.URL()).Circuit != pool.Open; i++ {
		if i == 10 {
			t.Fatal("the limited instance never refused replica 0")
		}
		gws[0].get(t, fmt.Sprintf("/search?format=json&q=outage+refusal+%d", i), nil)
	}
	for i, g := range gws[1:] {
		if st := g.app.pool.Stats(limited.URL()); st.Circuit == pool.Open {
			t.Fatalf("replica %d heard of the refusal with Redis down", i+1)
		}
	}
	srv.Start()
	waitFor(t, 5*time.Second, "the others hold the refused instance", func() bool {
		for _, g := range gws[1:] {
			if g.app.pool.Stats(limited.URL()).Circuit != pool.Open {
				return false
			}
		}
		return true
	})
	before := limited.Truth().InsideRetryAfter
	for i := range 6 {
		gws[1+i%2].get(t, fmt.Sprintf("/search?format=json&q=after+outage+%d", i), nil)
	}
	if n := limited.Truth().InsideRetryAfter - before; n != 0 {
		t.Fatalf("the others sent the refused instance %d searches inside its Retry-After", n)
	}
}

// TestReplicasIgnoreForgedRefusals: whoever can write Redis but lacks
// the secret publishes refusals and writes open: keys by hand; no
// replica opens a circuit, and the instances are searched as before.
func TestReplicasIgnoreForgedRefusals(t *testing.T) {
	t.Parallel() // it waits on real time: see parallelWaits
	srv := redistest.Start(t)
	fleet, dir := startFleet(t, 24, []sim.InstanceConfig{{Behaviour: sim.Fast, Latency: -1, JSON: true}})
	inst := fleet.Instances()[0].URL()
	gws := startReplicas(t, srv, dir, 2)
	for _, msg := range []string{
		fmt.Sprintf(`{"r":"intruder","i":%q,"ms":1800000,"why":"rate_limited"}`, inst),
		fmt.Sprintf(`AAAA.{"r":"intruder","i":%q,"t":%d,"ms":1800000}`, inst, time.Now().UnixMilli()),
	} {
		if _, err := srv.Do("PUBLISH", "searxgate:g:test:refusals", msg); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := srv.Do("SET", "searxgate:g:test:open:"+inst, "rate_limited", "PX", "1800000"); err != nil {
		t.Fatal(err)
	}
	late := startReplica(t, srv, dir) // reads the open: keys as it joins
	waitFor(t, 5*time.Second, "the late replica shares", func() bool { st, _ := sharedStatus(late.app); return st.Shared })
	for i, g := range append(gws, late) {
		if st := g.app.pool.Stats(inst); st.Circuit == pool.Open {
			t.Fatalf("replica %d opened the circuit on a forged refusal", i)
		}
		if a := g.get(t, fmt.Sprintf("/search?format=json&q=forged+%d", i), nil); a.status != 200 {
			t.Fatalf("replica %d: %d %s", i, a.status, a.body)
		}
	}
}

// TestReplicasSayCoalesced: an answer another replica was searching at
// that moment says X-Searxgate-Cache: coalesced, not hit.
func TestReplicasSayCoalesced(t *testing.T) {
	t.Parallel() // it waits on real time: see parallelWaits
	srv := redistest.Start(t)
	fleet, dir := startFleet(t, 25, []sim.InstanceConfig{{Behaviour: sim.Fast, Latency: 400 * time.Millisecond, JSON: true}})
	gws := startReplicas(t, srv, dir, 2)
	done := make(chan answer, 1)
	go func() { done <- gws[0].get(t, "/search?format=json&q=joined+search", nil) }()
	waitFor(t, 3*time.Second, "the first replica's search holds its lock", func() bool {
		keys, _ := srv.Keys("searxgate:c:l:*")
		return len(keys) > 0
	})
	b := gws[1].get(t, "/search?format=json&q=joined+search", nil)
	a := <-done
	if a.status != 200 || b.status != 200 {
		t.Fatalf("statuses %d and %d", a.status, b.status)
	}
	if got := b.header.Get("X-Searxgate-Cache"); got != "coalesced" {
		t.Fatalf("the joined answer says X-Searxgate-Cache: %q, want coalesced", got)
	}
	if n := totalSearches(fleet); n != 1 {
		t.Fatalf("%d upstream searches for one query on two replicas, want 1", n)
	}
}

// TestReplicaOnASlowRedis: a Redis whose answers come 300 ms late (a
// proxy holds them), with --redis-timeout 100ms: one search pays the
// timeout, the next ones do not wait on Redis, the slow heartbeats do
// not bring it back, and once Redis is quick again the replica shares
// again.
func TestReplicaOnASlowRedis(t *testing.T) {
	srv := redistest.Start(t)
	slow := srv.Delayed()
	_, dir := startFleet(t, 26, []sim.InstanceConfig{{Behaviour: sim.Fast, Latency: -1, JSON: true}})
	const timeout = 100 * time.Millisecond
	g := startReplicaAt(t, slow.URL(), dir, "--redis-timeout", timeout.String())
	if st, _ := sharedStatus(g.app); !st.Shared {
		t.Fatalf("status %+v, want shared", st)
	}
	slow.Set(3 * timeout)
	waited, flapped := 0, false
	start := time.Now()
	for i := 0; time.Since(start) < 1500*time.Millisecond; i++ { // several slow heartbeats
		t0 := time.Now()
		if a := g.get(t, fmt.Sprintf("/search?format=json&q=slow+redis+%d", i), nil); a.status != 200 && a.status != 503 {
			t.Fatalf("search %d: %d %s", i, a.status, a.body)
		}
		if time.Since(t0) >= timeout {
			waited++
		}
		if st, _ := sharedStatus(g.app); waited > 0 && st.Shared {
			flapped = true
		}
		time.Sleep(20 * time.Millisecond)
	}
	// One; a second only if this loaded machine stalled a search that long.
	if waited == 0 || waited > 2 {
		t.Fatalf("%d searches waited the timeout on a slow Redis, want 1", waited)
	}
	if flapped {
		t.Fatal("slow heartbeats brought the searches back to a slow Redis")
	}
	slow.Set(0)
	waitFor(t, 5*time.Second, "shared again once Redis is quick", func() bool { st, _ := sharedStatus(g.app); return st.Shared })
}
