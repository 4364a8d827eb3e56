package redis

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/searxgate/searxgate/internal/deptest"
	"github.com/searxgate/searxgate/internal/redistest"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/sim"
)

// TestImports keeps redis to what the design allows it: the interfaces of
// proxy and its cache, and the Redis client.
func TestImports(t *testing.T) {
	deptest.Check(t, ".", "github.com/searxgate/searxgate/proxy", "github.com/searxgate/searxgate/proxy/cache",
		"github.com/redis/go-redis/v9", "github.com/redis/go-redis/v9/")
}

// replica is one searxgate of a group, in-process: its pool, its proxy,
// its shared state.
type replica struct {
	pool   *pool.Pool
	proxy  *proxy.Proxy
	shared *Shared
	opened chan string // instances whose circuit another replica opened here
}

// newReplicas starts n replicas of one egress group over fleet, sharing
// srv. They run on the real clock: the shared windows count on Redis's.
func newReplicas(t *testing.T, srv *redistest.Server, fleet *sim.Fleet, n int, opt Options) []*replica {
	t.Helper()
	if opt.Group == "" {
		opt.Group = fmt.Sprintf("r%d", groupSeq.Add(1))
	}
	urls := fleet.URLs()
	var reps []*replica
	for i := range n {
		r := &replica{opened: make(chan string, 16)}
		r.pool = pool.New(pool.Config{OnEvent: func(e pool.Event) {
			if e.To == pool.Open && e.From != pool.Open && len(e.Reason) > 0 && e.Source != pool.SourceShared {
				r.shared.Opened(e.Instance, e.At.Add(e.Cooldown), string(e.Reason))
			}
		}})
		var priors []pool.Prior
		for j, u := range urls {
			priors = append(priors, pool.Prior{URL: u, Prior: time.Duration(j+1) * 100 * time.Millisecond})
		}
		r.pool.Seed(priors)
		o := opt
		o.Replica = fmt.Sprintf("replica-%d-%d", i, groupSeq.Add(1))
		o.OnOpen = func(inst string, until time.Time, reason string) {
			if r.pool.OpenUntil(inst, until, pool.Reason(reason)) {
				r.opened <- inst
			}
		}
		r.shared = newShared(t, srv, o)
		p, err := proxy.New(proxy.Config{
			Pool:     r.pool,
			Upstream: proxy.UpstreamConfig{UserAgent: "searxgate-test/1", Dial: fleet.Dial},
			Shared:   proxy.Shared{Budget: r.shared, Cache: r.shared, Trials: r.shared},
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		r.proxy = p
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { r.shared.Run(ctx); close(done) }()
		t.Cleanup(func() { cancel(); <-done })
		reps = append(reps, r)
	}
	for _, r := range reps { // every replica has seen the others
		if err := r.shared.heartbeat(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return reps
}

func startFleet(t *testing.T, instances ...sim.InstanceConfig) *sim.Fleet {
	t.Helper()
	fleet, err := sim.Start(sim.Config{InMemory: true, Seed: 1, Instances: instances})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fleet.Close() })
	return fleet
}

func search(r *replica, q string) (*proxy.Response, error) {
	return r.proxy.Search(context.Background(), proxy.Request{Query: q, PageNo: 1, Format: proxy.FormatJSON})
}

// spread runs queries over the replicas, round robin, a few at a time,
// and returns how many were answered; any error but an honest "no
// answer" (a 503) fails the test.
func spread(t *testing.T, reps []*replica, queries []string) int {
	t.Helper()
	var mu sync.Mutex
	answered := 0
	var wg sync.WaitGroup
	sem := make(chan struct{}, 6)
	for i, q := range queries {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			_, err := search(reps[i%len(reps)], q)
			var na *proxy.NoAnswerError
			switch {
			case err == nil:
				mu.Lock()
				answered++
				mu.Unlock()
			case errors.As(err, &na):
			default:
				t.Errorf("search %q: %v (want an answer or an honest no-answer)", q, err)
			}
		}()
	}
	wg.Wait()
	return answered
}

func fast(n int) []sim.InstanceConfig {
	ics := make([]sim.InstanceConfig, n)
	for i := range ics {
		ics[i] = sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true}
	}
	return ics
}

// TestReplicasShareOneBudget: three replicas under load spread over them
// never send any instance more than 10 searches in 20 s (the test runs in
// far less than 20 s: the totals are the windows).
func TestReplicasShareOneBudget(t *testing.T) {
	srv := redistest.Start(t)
	fleet := startFleet(t, fast(3)...)
	reps := newReplicas(t, srv, fleet, 3, Options{})
	var qs []string
	for i := range 90 {
		qs = append(qs, fmt.Sprintf("budget query %d", i))
	}
	start := time.Now()
	answered := spread(t, reps, qs)
	if time.Since(start) > 15*time.Second {
		t.Fatalf("the load took %v: the totals no longer prove the 20 s window", time.Since(start))
	}
	for _, in := range fleet.Instances() {
		if n := in.Truth().Searches; n > 10 {
			t.Errorf("instance %s got %d searches within 20 s, want at most 10", in.ID(), n)
		}
	}
	if answered < 25 {
		t.Errorf("only %d of 90 searches answered; 30 fit the budget", answered)
	}
	var refused uint64
	for _, r := range reps {
		refused += r.proxy.Metrics().SharedRefused()
	}
	t.Logf("answered %d, leases given back on the shared budget's word %d", answered, refused)
}

// TestReplicasShareRefusals: a Retry-After one replica is given is
// honoured by the others, who never send that instance a search inside it.
func TestReplicasShareRefusals(t *testing.T) {
	srv := redistest.Start(t)
	fleet := startFleet(t,
		sim.InstanceConfig{Behaviour: sim.RateLimitSeconds, RateBurst: 1, RetryAfter: 10 * time.Minute, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	reps := newReplicas(t, srv, fleet, 3, Options{})
	limited := fleet.URLs()[0]
	if _, err := search(reps[0], "refusal one"); err != nil { // the limiter's one free search
		t.Fatal(err)
	}
	if _, err := search(reps[0], "refusal two"); err != nil { // refused (429, Retry-After), answered by the other
		t.Fatal(err)
	}
	if st := reps[0].pool.Stats(limited); st.Circuit != pool.Open {
		t.Fatalf("the refused replica's circuit is %v", st.Circuit)
	}
	for i, r := range reps[1:] {
		select {
		case inst := <-r.opened:
			if inst != limited {
				t.Fatalf("replica %d opened %s", i+1, inst)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("replica %d did not hear of the refusal within 2 s", i+1)
		}
		until := r.pool.Stats(limited).CooldownUntil
		if d := time.Until(until); d < 9*time.Minute || d > 10*time.Minute+2*time.Second {
			t.Fatalf("replica %d holds the instance for %v, want the 10 min Retry-After", i+1, d)
		}
	}
	// A replica that starts now learns it too: the opening is kept in
	// Redis for its time.
	late := newReplicas(t, srv, fleet, 1, Options{Group: reps[0].shared.opt.Group})[0]
	select {
	case inst := <-late.opened:
		if inst != limited {
			t.Fatalf("the late replica opened %s", inst)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("a replica that started later did not learn of the refusal within 2 s")
	}
	reps = append(reps, late)
	for i := range 6 {
		if _, err := search(reps[1+i%3], fmt.Sprintf("refusal after %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if tr := fleet.Instances()[0].Truth(); tr.InsideRetryAfter != 0 || tr.Searches != 2 {
		t.Fatalf("the limited instance got %d searches (%d inside its Retry-After), want 2 and 0", tr.Searches, tr.InsideRetryAfter)
	}
}

// TestReplicasShareAnswers: a query answered on one replica is a cache
// hit on another; one in flight on one replica is joined by another.
func TestReplicasShareAnswers(t *testing.T) {
	srv := redistest.Start(t)
	fleet := startFleet(t, sim.InstanceConfig{Behaviour: sim.Fast, Latency: 300 * time.Millisecond, JSON: true})
	reps := newReplicas(t, srv, fleet, 2, Options{})
	a, b := reps[0], reps[1]
	if _, err := search(a, "shared answer"); err != nil {
		t.Fatal(err)
	}
	// The answer's write is queued: wait until it is in Redis.
	waitKey(t, srv, a.shared.cache+"a:*")
	res, err := search(b, "shared answer")
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cached || res.Instance != fleet.URLs()[0] {
		t.Fatalf("the other replica answered %+v, want a cache hit", res)
	}
	if n := fleet.Instances()[0].Truth().Searches; n != 1 {
		t.Fatalf("the instance got %d searches for one query on two replicas, want 1", n)
	}

	// In flight: a starts, b asks the same once a's lock is there.
	fleet.ResetTruth()
	done := make(chan error, 1)
	go func() { _, err := search(a, "joined answer"); done <- err }()
	waitKey(t, srv, a.shared.cache+"l:*")
	rb, err := search(b, "joined answer")
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !rb.Coalesced || rb.Cached {
		t.Fatalf("the second replica's answer %+v, want one joined from the first", rb)
	}
	if n := fleet.Instances()[0].Truth().Searches; n != 1 {
		t.Fatalf("the instance got %d searches for one query in flight on two replicas, want 1", n)
	}
	if b.proxy.Metrics().SharedJoined() != 1 {
		t.Fatalf("SharedJoined = %d", b.proxy.Metrics().SharedJoined())
	}
	// Nothing in Redis holds the query text.
	c := rawClient(t, srv)
	keys, _ := c.Keys(context.Background(), "*").Result()
	for _, k := range keys {
		v, _ := c.Dump(context.Background(), k).Result()
		for _, q := range []string{"joined", "shared answer"} {
			if contains(k, q) || contains(v, q) {
				t.Fatalf("key %q holds the query %q in clear", k, q)
			}
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// waitKey waits until a key matching pattern exists in Redis.
func waitKey(t *testing.T, srv *redistest.Server, pattern string) {
	t.Helper()
	c := rawClient(t, srv)
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		if keys, _ := c.Keys(context.Background(), pattern).Result(); len(keys) > 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("no key %s appeared within 2 s", pattern)
}

// TestReplicasWithoutRedis: Redis stops mid-run; the replicas keep
// answering, each within 1/N of every budget, with no error but an honest
// no-answer, and no search waits on Redis; when Redis is back they share
// again, the searches made meanwhile counted.
func TestReplicasWithoutRedis(t *testing.T) {
	srv := redistest.Start(t)
	fleet := startFleet(t, fast(2)...)
	reps := newReplicas(t, srv, fleet, 3, Options{Failures: 1, Recover: 1})
	for _, r := range reps {
		if st := r.shared.Status(); !st.Shared || st.Replicas != 3 {
			t.Fatalf("status %+v, want shared among 3", st)
		}
	}
	srv.Stop()
	var qs []string
	for i := range 60 {
		qs = append(qs, fmt.Sprintf("no redis %d", i))
	}
	start := time.Now()
	answered := spread(t, reps, qs)
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("60 searches took %v without Redis", d)
	}
	for _, in := range fleet.Instances() {
		// 10 per 20 s among 3: 3 each, 9 in all.
		if n := in.Truth().Searches; n > 9 {
			t.Errorf("instance %s got %d searches without Redis, want at most 9 (3 per replica)", in.ID(), n)
		}
	}
	if answered < 12 {
		t.Errorf("only %d answered without Redis; 18 fit the replicas' shares", answered)
	}
	for i, r := range reps {
		if st := r.shared.Status(); st.Shared || st.LastError == "" {
			t.Fatalf("replica %d status %+v, want local with its error", i, st)
		}
	}

	srv.Start()
	for i, r := range reps {
		if err := r.shared.heartbeat(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !r.shared.Status().Shared {
			t.Fatalf("replica %d not shared again", i)
		}
	}
	// What they searched meanwhile is in the shared windows: the group
	// has at most one more search per instance in this window.
	before := uint64(0)
	for _, in := range fleet.Instances() {
		before += in.Truth().Searches
	}
	var more []string
	for i := range 30 {
		more = append(more, fmt.Sprintf("redis back %d", i))
	}
	spread(t, reps, more)
	for _, in := range fleet.Instances() {
		if n := in.Truth().Searches; n > 10 {
			t.Errorf("instance %s got %d searches within 20 s across the outage, want at most 10", in.ID(), n)
		}
	}
}
