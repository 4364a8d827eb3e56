package redis

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/searxgate/searxgate/internal/clock"
	"github.com/searxgate/searxgate/internal/redistest"
	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/proxy/cache"
)

// heard collects what OnOpen was told.
type heard struct {
	mu    sync.Mutex // guards until
	until map[string]time.Time
	ch    chan string
}

func newHeard() *heard { return &heard{until: map[string]time.Time{}, ch: make(chan string, 64)} }

func (h *heard) onOpen(inst string, until time.Time, _ string) {
	h.mu.Lock()
	h.until[inst] = until
	h.mu.Unlock()
	h.ch <- inst
}

func (h *heard) get(inst string) (time.Time, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	u, ok := h.until[inst]
	return u, ok
}

// run runs s's loops until the test ends.
func run(t *testing.T, s *Shared) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// expectHeard waits up to d for inst on h.
func expectHeard(t *testing.T, h *heard, inst string, d time.Duration) {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case got := <-h.ch:
			if got == inst {
				return
			}
		case <-timer.C:
			t.Fatalf("%s was not heard within %v", inst, d)
		}
	}
}

// TestLostStateIsNoticed: FLUSHALL empties Redis under three replicas
// that had used the whole window. The next take notices (the epoch key
// is gone) and is refused until the replicas wrote back; once every replica has
// heartbeat, the shared windows hold their searches again, the circuit
// one of them opened is back in Redis and heard, and no take gets past
// the budget meanwhile.
func TestLostStateIsNoticed(t *testing.T) {
	srv := redistest.Start(t)
	clk := clock.NewFake(time.Unix(1_800_000_000, 0))
	budget := []proxy.Window{{Max: 10, Per: 20 * time.Second}}
	var reps []*Shared
	var hs []*heard
	for range 3 {
		h := newHeard()
		hs = append(hs, h)
		reps = append(reps, newShared(t, srv, Options{Group: "lost", Budget: budget, Clock: clk, OnOpen: h.onOpen}))
	}
	ctx := context.Background()
	for _, r := range reps {
		if err := r.heartbeat(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 9 { // the whole window, less its margin, spread
		if ok, _ := reps[i%3].Take(ctx, "i", clk.Now()); !ok {
			t.Fatalf("take %d refused", i)
		}
	}
	if ok, _ := reps[0].Take(ctx, "i", clk.Now()); ok {
		t.Fatal("a 10th take allowed")
	}
	// Opened queues the write, which no loop runs here: write it now.
	reps[0].Opened("j", clk.Now().Add(5*time.Minute), "refused")
	if err := reps[0].tell(ctx, "j", clk.Now().Add(5*time.Minute), "refused", clk.Now()); err != nil {
		t.Fatal(err)
	}

	if _, err := srv.Do("FLUSHALL"); err != nil {
		t.Fatal(err)
	}
	// Every replica's next take notices and is refused: nobody knows
	// what the others sent.
	for i, r := range reps {
		if ok, _ := r.Take(ctx, "i", clk.Now()); ok {
			t.Fatalf("replica %d took a search right after FLUSHALL", i)
		}
		if !r.lost.Load() {
			t.Fatalf("replica %d did not notice the loss", i)
		}
	}
	for _, r := range reps {
		if err := r.heartbeat(ctx); err != nil {
			t.Fatal(err)
		}
	}
	c := rawClient(t, srv)
	if n := c.ZCard(ctx, reps[0].windowKeys("i")[0]).Val(); n != 9 {
		t.Fatalf("the window holds %d searches after the replicas wrote back, want 9", n)
	}
	if c.Exists(ctx, reps[0].openKey("j")).Val() != 1 {
		t.Fatal("the circuit replica 0 opened is not back in Redis")
	}
	for i, h := range hs[1:] {
		if err := reps[1+i].loadOpens(ctx); err != nil { // the heartbeat loop's part
			t.Fatal(err)
		}
		if _, ok := h.get("j"); !ok {
			t.Fatalf("replica %d did not learn the circuit written back", i+1)
		}
	}
	for i, r := range reps {
		if ok, _ := r.Take(ctx, "i", clk.Now()); ok {
			t.Fatalf("replica %d took a search past the budget after the rebuild", i)
		}
		// The last to write back saw every one had; the others see it
		// at their next heartbeat.
		if want := i < 2; r.lost.Load() || r.rebuilding(clk.Now()) != want {
			t.Fatalf("replica %d: lost %v, rebuilding %v; want rebuilding %v", i, r.lost.Load(), r.rebuilding(clk.Now()), want)
		}
	}
	// Once the window moved on and the rebuild ended, the shared window
	// alone decides again.
	clk.Advance(20 * time.Second)
	if reps[0].rebuilding(clk.Now()) {
		t.Fatal("still rebuilding 20 s later")
	}
	taken := 0
	for i := range 12 {
		if ok, _ := reps[i%3].Take(ctx, "i", clk.Now()); ok {
			taken++
		}
	}
	if taken != 0 { // Redis's clock has not moved: its window is still full
		t.Fatalf("%d taken while Redis's window is full", taken)
	}
}

// TestLossKeepsTheReplicasCounted: after FLUSHALL the first replica to
// notice still counts the three it saw (Redis forgot the others'
// heartbeats too), and sends nothing until every one of them wrote back
// what it remembers, however late the others are: no one knows what the
// others sent. Only when they stay silent past the pause does it decide
// on its third of the budget, never on the whole.
func TestLossKeepsTheReplicasCounted(t *testing.T) {
	for _, late := range []bool{false, true} {
		srv := redistest.Start(t)
		clk := clock.NewFake(time.Unix(1_800_000_000, 0))
		budget := []proxy.Window{{Max: 10, Per: 20 * time.Second}}
		var reps []*Shared
		for range 3 {
			reps = append(reps, newShared(t, srv, Options{Group: "counted", Budget: budget, Clock: clk}))
		}
		ctx := context.Background()
		beat := func(r *Shared) {
			t.Helper()
			if err := r.heartbeat(ctx); err != nil {
				t.Fatal(err)
			}
		}
		takes := func(r *Shared, n int) int {
			got := 0
			for range n {
				if ok, _ := r.Take(ctx, "i", clk.Now()); ok {
					got++
				}
			}
			return got
		}
		for _, r := range reps {
			beat(r)
		}
		for i := range 6 {
			if ok, _ := reps[i%3].Take(ctx, "i", clk.Now()); !ok {
				t.Fatalf("take %d refused", i)
			}
		}
		if _, err := srv.Do("FLUSHALL"); err != nil {
			t.Fatal(err)
		}
		beat(reps[0]) // the first to notice: Redis has only its heartbeat
		if n := reps[0].n.Load(); n != 3 {
			t.Fatalf("the first replica to notice the loss counts %d replicas, want the 3 it saw", n)
		}
		if got := takes(reps[0], 5); got != 0 {
			t.Fatalf("the first replica took %d after the loss, before the others wrote back", got)
		}
		// The others are late, past the time replicas count as seen.
		clk.Advance(10 * time.Second)
		beat(reps[0])
		if got := takes(reps[0], 5); got != 0 || !reps[0].rebuilding(clk.Now()) {
			t.Fatalf("%d taken 10 s later, rebuilding %v; want none before the others wrote back", got, reps[0].rebuilding(clk.Now()))
		}
		if late {
			// They stay silent past the pause: its third (3), less
			// its own 2.
			clk.Advance(3 * time.Second)
			beat(reps[0])
			if got := takes(reps[0], 5); got != 1 {
				t.Fatalf("past the pause the first replica took %d, want 1 (its share of 3, less its 2)", got)
			}
			continue
		}
		beat(reps[1])
		beat(reps[2])
		for _, r := range reps { // each sees it at its next heartbeat
			beat(r)
		}
		for i, r := range reps {
			if r.rebuilding(clk.Now()) {
				t.Fatalf("replica %d still rebuilding once all wrote back", i)
			}
		}
		c := rawClient(t, srv)
		if n := c.ZCard(ctx, reps[0].windowKeys("i")[0]).Val(); n != 6 {
			t.Fatalf("the window holds %d searches once all wrote back, want 6", n)
		}
		if got := takes(reps[0], 5); got != 3 {
			t.Fatalf("once all wrote back, %d taken; want the 3 the window has left", got)
		}
	}
}

// TestOpeningsWrittenBackAfterAnOutage: a circuit opened while Redis was
// unreachable reaches the other replicas once it is back.
func TestOpeningsWrittenBackAfterAnOutage(t *testing.T) {
	srv := redistest.Start(t)
	h := newHeard()
	a := newShared(t, srv, Options{Group: "back", Failures: 1, Recover: 1})
	b := newShared(t, srv, Options{Group: "back", Recover: 1, Heartbeat: 100 * time.Millisecond, OnOpen: h.onOpen})
	run(t, b)
	srv.Stop()
	ctx := context.Background()
	a.Take(ctx, "i", time.Now()) // finds Redis gone
	if a.Status().Shared {
		t.Fatal("still shared with Redis gone")
	}
	a.Opened("https://limited.example/", time.Now().Add(3*time.Minute), "rate_limited")
	srv.Start()
	if err := a.heartbeat(ctx); err != nil {
		t.Fatal(err)
	}
	if !a.Status().Shared {
		t.Fatal("not shared again")
	}
	// b hears it on the channel (if it resubscribed in time) or reads
	// it from its key when it comes back itself.
	expectHeard(t, h, "https://limited.example/", 5*time.Second)
	until, _ := h.get("https://limited.example/")
	if d := time.Until(until); d < 2*time.Minute || d > 3*time.Minute {
		t.Fatalf("b holds it for %v, want about 3 min", d)
	}
}

// TestForgedMessagesAreIgnored: messages and open: keys written by hand,
// or signed with another secret, or replayed, or moved to another
// instance, open nothing; a genuine one does, capped at MaxHeard.
func TestForgedMessagesAreIgnored(t *testing.T) {
	srv := redistest.Start(t)
	h := newHeard()
	a := newShared(t, srv, Options{Group: "forge"})
	b := newShared(t, srv, Options{Group: "forge", OnOpen: h.onOpen})
	run(t, a)
	run(t, b)
	c := rawClient(t, srv)
	ctx := context.Background()
	sub := c.Subscribe(ctx, a.channel()) // a third listener: waitSubscribers counts it
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil { // the subscription's confirmation
		t.Fatal(err)
	}
	// b must be subscribed before anything is published: a genuine
	// message proves it.
	waitSubscribers(t, srv, a.channel(), 3)

	now := time.Now()
	// By hand, in the old unsigned shape.
	plain, _ := json.Marshal(map[string]any{"r": "x", "i": "https://plain.example/", "ms": 1_800_000})
	c.Publish(ctx, a.channel(), plain)
	// Signed with another secret.
	other, err := New(Options{URL: srv.URL(), Group: "forge", Secret: []byte("another secret, another install")})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	c.Publish(ctx, a.channel(), other.seal("refusal", refusal{From: "x", Inst: "https://other.example/", At: now.UnixMilli(), ForMS: 1_800_000}))
	// Genuine but old.
	c.Publish(ctx, a.channel(), a.seal("refusal", refusal{From: a.opt.Replica, Inst: "https://old.example/", At: now.Add(-time.Hour).UnixMilli(), ForMS: 7_200_000}))
	// Tampered: a genuine message with another instance put in.
	good := a.seal("refusal", refusal{From: a.opt.Replica, Inst: "https://genuine.example/", At: now.UnixMilli(), ForMS: 1_800_000, Reason: "rate_limited"})
	c.Publish(ctx, a.channel(), []byte(strings.Replace(string(good), "genuine", "tamperd", 1)))
	// An open: key by hand, and a genuine one copied under another name.
	c.Set(ctx, a.openKey("https://key.example/"), "rate_limited", time.Hour)
	c.Set(ctx, a.openKey("https://moved.example/"), a.seal("open", refusal{From: a.opt.Replica, Inst: "https://genuine.example/", At: now.UnixMilli(), ForMS: 1_800_000}), time.Hour)
	// The genuine message, then the same again (a replay), then another
	// genuine one: once b heard that, it has read the replay.
	c.Publish(ctx, a.channel(), good)
	c.Publish(ctx, a.channel(), good)
	c.Publish(ctx, a.channel(), a.seal("refusal", refusal{From: a.opt.Replica, Inst: "https://last.example/", At: now.UnixMilli(), ForMS: 60_000}))
	expectHeard(t, h, "https://genuine.example/", 2*time.Second)
	expectHeard(t, h, "https://last.example/", 2*time.Second)
	until, _ := h.get("https://genuine.example/")
	if d := time.Until(until); d > b.opt.MaxHeard || d < b.opt.MaxHeard-time.Minute {
		t.Fatalf("a 30 min opening heard is held %v, want it capped at %v", d, b.opt.MaxHeard)
	}
	if err := b.loadOpens(ctx); err != nil {
		t.Fatal(err)
	}
	// The replay is dropped: nothing more arrives, and nothing forged.
	select {
	case inst := <-h.ch:
		t.Fatalf("%s opened by a forged, old or replayed message", inst)
	default:
	}
	for _, inst := range []string{"https://plain.example/", "https://other.example/", "https://old.example/", "https://tamperd.example/", "https://key.example/", "https://moved.example/"} {
		if _, ok := h.get(inst); ok {
			t.Errorf("%s opened by a forged value", inst)
		}
	}
}

// waitSubscribers waits until channel has n subscribers.
func waitSubscribers(t *testing.T, srv *redistest.Server, channel string, n int) {
	t.Helper()
	c := rawClient(t, srv)
	deadline := time.Now().Add(5 * time.Second)
	for {
		m, err := c.PubSubNumSub(context.Background(), channel).Result()
		if err == nil && m[channel] >= int64(n) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has %d subscribers, want %d", channel, m[channel], n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestForgedAnswersAreMisses: a kept answer whose clear header was
// edited (made fresh again) is not believed.
func TestForgedAnswersAreMisses(t *testing.T) {
	srv := redistest.Start(t)
	s := newShared(t, srv, Options{})
	key := cache.NewKeyer([]byte("the cache secret of the replicas")).CacheKey("q")
	id, sealed, err := cache.SealAnswer(key, []byte(`{"results":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	rec := s.encode(id, cache.Entry{Instance: "https://a.example/", StoredAt: now.Add(-2 * time.Hour), Expires: now.Add(-time.Hour)}, sealed)
	c := rawClient(t, srv)
	ctx := context.Background()
	c.Set(ctx, s.answerKey(id), rec, time.Hour)
	if got, ok := s.Get(ctx, key); !ok || got.Expires.After(now) {
		t.Fatalf("the genuine answer: %v, %+v", ok, got)
	}
	forged := append([]byte(nil), rec...)
	forged[9] ^= 0x40 // Expires, years ahead
	c.Set(ctx, s.answerKey(id), forged, time.Hour)
	if got, ok := s.Get(ctx, key); ok {
		t.Fatalf("an answer whose header was edited was served: %+v", got)
	}
}

// TestSlowRedis: a Redis that answers slower than OpTimeout (but well
// within the heartbeats' bound) costs one timeout: the first search to
// wait opens the circuit, the slow heartbeats do not close it again (no
// flapping), and once Redis is quick again a few heartbeats bring the
// searches back.
func TestSlowRedis(t *testing.T) {
	srv := redistest.Start(t)
	px := srv.Delayed()
	const timeout = 100 * time.Millisecond
	s, err := New(Options{URL: px.URL(), Secret: testSecret, Group: "slow", OpTimeout: timeout,
		Heartbeat: 200 * time.Millisecond, Budget: []proxy.Window{{Max: 1000, Per: 20 * time.Second}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	run(t, s)
	px.Set(3 * timeout)
	slow := 0
	flapped := false
	start := time.Now()
	for time.Since(start) < 1500*time.Millisecond { // several slow heartbeats
		t0 := time.Now()
		if ok, _ := s.Take(ctx, "i", t0); !ok {
			t.Fatal("refused")
		}
		if time.Since(t0) >= timeout {
			slow++
		}
		if slow > 0 && s.Status().Shared {
			flapped = true
		}
		time.Sleep(10 * time.Millisecond)
	}
	// One; a second only if this loaded machine stalled a call that long.
	if slow == 0 || slow > 2 {
		t.Fatalf("%d takes waited the timeout on a slow Redis, want 1", slow)
	}
	if flapped {
		t.Fatal("slow heartbeats brought the searches back to a slow Redis")
	}
	st := s.Status()
	if st.Shared || !strings.Contains(st.LastError, "slower than the searches' timeout") {
		t.Fatalf("status %+v, want local, saying Redis is slow", st)
	}
	px.Set(0)
	deadline := time.Now().Add(5 * time.Second)
	for !s.Status().Shared {
		if time.Now().After(deadline) {
			t.Fatalf("not shared again within 5 s of Redis being quick: %+v", s.Status())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestReplicasSeen: a replica that closes leaves N at once; one that dies
// leaves it after SeenFor.
func TestReplicasSeen(t *testing.T) {
	srv := redistest.Start(t)
	opt := Options{Group: "seen", SeenFor: time.Second}
	a := newShared(t, srv, opt)
	b := newShared(t, srv, opt)
	c := newShared(t, srv, opt)
	ctx := context.Background()
	if err := a.heartbeat(ctx); err != nil {
		t.Fatal(err)
	}
	if n := a.Status().Replicas; n != 3 {
		t.Fatalf("a sees %d, want 3", n)
	}
	_ = b.Close()
	if err := a.heartbeat(ctx); err != nil {
		t.Fatal(err)
	}
	if n := a.Status().Replicas; n != 2 {
		t.Fatalf("a sees %d once b closed, want 2", n)
	}
	_ = c // c stops heartbeating: dead
	deadline := time.Now().Add(5 * time.Second)
	for {
		if err := a.heartbeat(ctx); err != nil {
			t.Fatal(err)
		}
		if a.Status().Replicas == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a still sees %d replicas 5 s after c's last heartbeat", a.Status().Replicas)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestErrorsNamed: Redis out of memory and refused credentials are said
// as such, not as "unreachable".
func TestErrorsNamed(t *testing.T) {
	srv := redistest.Start(t)
	s := newShared(t, srv, Options{Group: "named", Failures: 1})
	for _, cmd := range [][]string{{"CONFIG", "SET", "maxmemory-policy", "noeviction"}, {"CONFIG", "SET", "maxmemory", "1"}} {
		if _, err := srv.Do(cmd...); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	// The heartbeat writes first: Redis refuses it. (A script that
	// wrote once may write on, so the windows' script still runs.)
	if err := s.heartbeat(ctx); !errors.Is(err, ErrOOM) {
		t.Fatalf("heartbeat: %v, want ErrOOM", err)
	}
	if st := s.Status(); st.Shared || !strings.Contains(st.LastError, "out of memory") {
		t.Fatalf("status %+v, want local, saying Redis is out of memory", st)
	}
	if _, err := srv.Do("CONFIG", "SET", "maxmemory", "0"); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Do("CONFIG", "SET", "requirepass", "s3cretpw"); err != nil {
		t.Fatal(err)
	}
	n, err := New(Options{URL: srv.URL(), Secret: testSecret, Group: "named"})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := n.Connect(ctx); !errors.Is(err, ErrAuth) {
		t.Fatalf("connect without the password: %v, want ErrAuth", err)
	}
	if st := n.Status(); !strings.Contains(st.LastError, "credentials") {
		t.Fatalf("status %+v, want the credentials named", st)
	}
}

// TestRestamp: a search moved to its send time moves in the shared
// windows too (Redis's time of the move), and in the local history that
// the fallback counts.
func TestRestamp(t *testing.T) {
	srv := redistest.Start(t)
	clk := clock.NewFake(time.Unix(1_800_000_000, 0))
	s := newShared(t, srv, Options{Group: "restamp", Budget: []proxy.Window{{Max: 10, Per: 20 * time.Second}}, Clock: clk})
	run(t, s) // the writer
	ctx := context.Background()
	taken := clk.Now()
	if ok, _ := s.Take(ctx, "i", taken); !ok {
		t.Fatal("refused")
	}
	c := rawClient(t, srv)
	key := s.windowKeys("i")[0]
	s.mu.Lock()
	member := s.hist["i"][0].member
	s.mu.Unlock()
	before := c.ZScore(ctx, key, member).Val()
	clk.Advance(3 * time.Second)
	s.Restamp("i", taken, clk.Now())
	deadline := time.Now().Add(2 * time.Second)
	for c.ZScore(ctx, key, member).Val() == before {
		if time.Now().After(deadline) {
			t.Fatal("the search did not move in the shared window")
		}
		time.Sleep(time.Millisecond)
	}
	s.mu.Lock()
	at := s.hist["i"][0].at
	s.mu.Unlock()
	if !at.Equal(clk.Now()) {
		t.Fatalf("the local history has it at %v, want %v", at, clk.Now())
	}
	if n := c.ZCard(ctx, key).Val(); n != 1 {
		t.Fatalf("the window holds %d, want the one search", n)
	}
}

// TestTakesCountTheReplicas: a replica that last beat before the others
// started counts them at its next take, so that its share, should Redis
// then fail, is a third and not the whole budget.
func TestTakesCountTheReplicas(t *testing.T) {
	srv := redistest.Start(t)
	clk := clock.NewFake(time.Unix(1_800_000_000, 0))
	budget := []proxy.Window{{Max: 10, Per: 20 * time.Second}}
	ctx := context.Background()
	reps := []*Shared{newShared(t, srv, Options{Group: "count", Budget: budget, Clock: clk})}
	if n := reps[0].n.Load(); n != 1 {
		t.Fatalf("the first replica counts %d before the others started, want 1", n)
	}
	for range 2 {
		reps = append(reps, newShared(t, srv, Options{Group: "count", Budget: budget, Clock: clk}))
	}
	if ok, _ := reps[0].Take(ctx, "i", clk.Now()); !ok {
		t.Fatal("take refused")
	}
	if n := reps[0].n.Load(); n != 3 {
		t.Fatalf("after a take the first replica counts %d replicas, want 3", n)
	}
}
