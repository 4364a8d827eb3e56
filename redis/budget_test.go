package redis

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/searxgate/searxgate/internal/clock"
	"github.com/searxgate/searxgate/internal/redistest"
	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/proxy/cache"
)

// testTimeout is the tests' OpTimeout: generous, so that a loaded machine
// running -race never falls back by accident.
const testTimeout = 500 * time.Millisecond

// testSecret is the operator's secret of the tests' replicas.
var testSecret = []byte("the tests' secret, 32 bytes long")

// groupSeq gives each Shared of a test a group of its own unless told.
var groupSeq atomic.Int64

// newShared returns a Shared on srv, connected, closed when the test ends.
func newShared(t *testing.T, srv *redistest.Server, opt Options) *Shared {
	t.Helper()
	opt.URL = srv.URL()
	if opt.Group == "" {
		opt.Group = "g" + strconv.FormatInt(groupSeq.Add(1), 10)
	}
	if opt.OpTimeout == 0 {
		opt.OpTimeout = testTimeout
	}
	if opt.Secret == nil {
		opt.Secret = testSecret
	}
	s, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func rawClient(t testing.TB, srv *redistest.Server) *goredis.Client {
	c := goredis.NewClient(&goredis.Options{Addr: srv.Addr(), Protocol: 2})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// redisNow is Redis's clock in µs.
func redisNow(t *testing.T, c *goredis.Client) int64 {
	tm, err := c.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return tm.UnixMicro()
}

// TestTakeWindow: Max searches but one (the margin) are taken, the next
// is refused with the time the oldest leaves the window; both windows
// count; one refused search takes nothing from any window.
func TestTakeWindow(t *testing.T) {
	srv := redistest.Start(t)
	s := newShared(t, srv, Options{Budget: []proxy.Window{{Max: 4, Per: 20 * time.Second}, {Max: 6, Per: 10 * time.Minute}}})
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	for i := range 3 {
		if ok, _ := s.Take(ctx, "https://a.example/", now); !ok {
			t.Fatalf("search %d refused", i)
		}
	}
	ok, until := s.Take(ctx, "https://a.example/", now)
	if ok {
		t.Fatal("a 4th search in 20 s was allowed")
	}
	if d := until.Sub(now); d <= 19*time.Second || d > 20*time.Second {
		t.Fatalf("refused until now+%v, want just under 20 s", d)
	}
	// Another instance has its own windows.
	if ok, _ := s.Take(ctx, "https://b.example/", now); !ok {
		t.Fatal("another instance refused")
	}
	c := rawClient(t, srv)
	keys := s.windowKeys("https://a.example/")
	if n := c.ZCard(ctx, keys[0]).Val(); n != 3 {
		t.Fatalf("the 20 s window holds %d searches, want 3 (a refusal takes nothing)", n)
	}
	if n := c.ZCard(ctx, keys[1]).Val(); n != 3 {
		t.Fatalf("the 10 min window holds %d searches, want 3", n)
	}
	if ttl := c.PTTL(ctx, keys[0]).Val(); ttl <= 0 || ttl > 21*time.Second {
		t.Fatalf("the 20 s window expires in %v", ttl)
	}
}

// TestTakeBoundaries: a search exactly Per old (or older) has left the
// window; one younger than Per is still in it. Searches are placed by
// Redis's clock, with a margin for the time between the two calls.
func TestTakeBoundaries(t *testing.T) {
	srv := redistest.Start(t)
	const per = 20 * time.Second
	s := newShared(t, srv, Options{Budget: []proxy.Window{{Max: 3, Per: per}}}) // 2 and the margin
	c := rawClient(t, srv)
	ctx := context.Background()
	key := s.windowKeys("i")[0]
	now := redisNow(t, c)
	// One search that left the window long ago, one that leaves it just
	// now (Per + 1 ms old), one well inside.
	c.ZAdd(ctx, key, goredis.Z{Score: float64(now - 2*per.Microseconds()), Member: "old"},
		goredis.Z{Score: float64(now - per.Microseconds() - 1000), Member: "edge"},
		goredis.Z{Score: float64(now - per.Microseconds() + 5_000_000), Member: "inside"})
	local := time.Unix(1_800_000_000, 0)
	if ok, _ := s.Take(ctx, "i", local); !ok {
		t.Fatal("refused with one search in the window (two were older than Per)")
	}
	if got := c.ZCard(ctx, key).Val(); got != 2 {
		t.Fatalf("window holds %d, want 2 (the old ones removed)", got)
	}
	ok, until := s.Take(ctx, "i", local)
	if ok {
		t.Fatal("a 3rd search allowed in a window of 2")
	}
	// The oldest inside ("inside") leaves 5 s after the calls began.
	if d := until.Sub(local); d <= 4*time.Second || d > 5*time.Second {
		t.Fatalf("refused until +%v, want just under 5 s", d)
	}
}

// TestTakeClockSkew: replicas whose clocks differ by hours share one
// window, timed by Redis; each is told when it frees on its own clock.
func TestTakeClockSkew(t *testing.T) {
	srv := redistest.Start(t)
	budget := []proxy.Window{{Max: 5, Per: 20 * time.Second}} // 4 and the margin
	a := newShared(t, srv, Options{Group: "skew", Budget: budget})
	b := newShared(t, srv, Options{Group: "skew", Budget: budget})
	ctx := context.Background()
	ta := time.Unix(1_800_000_000, 0)
	tb := ta.Add(-3 * time.Hour) // b's clock is 3 h behind
	taken := 0
	for i := range 6 {
		s, now := a, ta
		if i%2 == 1 {
			s, now = b, tb
		}
		if ok, until := s.Take(ctx, "i", now); ok {
			taken++
		} else if d := until.Sub(now); d <= 19*time.Second || d > 20*time.Second {
			t.Fatalf("replica %d refused until its now+%v, want just under 20 s", i%2, d)
		}
	}
	if taken != 4 {
		t.Fatalf("%d searches taken across two skewed replicas, want 4", taken)
	}
}

// TestTakeConcurrent: replicas racing for one window never take more than
// Max between them (less the margin).
func TestTakeConcurrent(t *testing.T) {
	srv := redistest.Start(t)
	budget := []proxy.Window{{Max: 11, Per: 20 * time.Second}}
	var reps []*Shared
	for range 3 {
		reps = append(reps, newShared(t, srv, Options{Group: "race", Budget: budget}))
	}
	var taken atomic.Int64
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if ok, _ := reps[i%3].Take(context.Background(), "i", time.Now()); ok {
				taken.Add(1)
			}
		}()
	}
	wg.Wait()
	if taken.Load() != 10 {
		t.Fatalf("%d searches taken, want 10", taken.Load())
	}
}

// TestShare: a replica's part of a window among n.
func TestShare(t *testing.T) {
	for _, c := range []struct {
		w     proxy.Window
		n     int
		limit int
		span  time.Duration
	}{
		// One search of each window is the margin.
		{proxy.Window{Max: 11, Per: 20 * time.Second}, 1, 10, 20 * time.Second},
		{proxy.Window{Max: 10, Per: 20 * time.Second}, 3, 3, 20 * time.Second},
		{proxy.Window{Max: 100, Per: 10 * time.Minute}, 3, 33, 10 * time.Minute},
		{proxy.Window{Max: 11, Per: 20 * time.Second}, 10, 1, 20 * time.Second},
		{proxy.Window{Max: 11, Per: 20 * time.Second}, 25, 1, 50 * time.Second},
		{proxy.Window{Max: 1, Per: 20 * time.Second}, 1, 1, 20 * time.Second},
	} {
		if l, s := share(c.w, c.n); l != c.limit || s != c.span {
			t.Errorf("share(%v, %d) = %d per %v, want %d per %v", c.w, c.n, l, s, c.limit, c.span)
		}
	}
}

// TestFallbackAndReplay: with Redis gone, a replica keeps to 1/N of each
// window, counting the searches it made while shared too, on its own
// clock; when Redis is back (empty, restarted), its searches are written
// back into the shared windows before searches use them.
func TestFallbackAndReplay(t *testing.T) {
	srv := redistest.Start(t)
	clk := clock.NewFake(time.Unix(1_800_000_000, 0))
	budget := []proxy.Window{{Max: 10, Per: 20 * time.Second}}
	var reps []*Shared
	for range 3 {
		reps = append(reps, newShared(t, srv, Options{Group: "fb", Budget: budget, Clock: clk, Failures: 1, Recover: 1}))
	}
	for _, r := range reps { // each has seen all three
		if err := r.heartbeat(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	s := reps[0]
	if st := s.Status(); !st.Shared || st.Replicas != 3 {
		t.Fatalf("status %+v, want shared among 3", st)
	}
	ctx := context.Background()
	if ok, _ := s.Take(ctx, "i", clk.Now()); !ok { // one while shared
		t.Fatal("refused")
	}
	srv.Stop()
	// The first take finds Redis gone, and the fallback decides: 1/3 of
	// 10 is 3, one of which was made while shared.
	got := 0
	for range 5 {
		start := time.Now()
		if ok, _ := s.Take(ctx, "i", clk.Now()); ok {
			got++
		}
		if d := time.Since(start); d > testTimeout {
			t.Fatalf("a take waited %v with Redis gone", d)
		}
	}
	if got != 2 {
		t.Fatalf("%d searches allowed with Redis gone, want 2 (3 per replica, 1 made before)", got)
	}
	st := s.Status()
	if st.Shared || st.LastError == "" || st.LocalTakes != 5 {
		t.Fatalf("status %+v, want local, with the error", st)
	}
	ok, until := s.Take(ctx, "i", clk.Now())
	if ok || until.Sub(clk.Now()) != 20*time.Second {
		t.Fatalf("refused until +%v, want +20s", until.Sub(clk.Now()))
	}
	clk.Advance(20 * time.Second)
	if ok, _ := s.Take(ctx, "i", clk.Now()); !ok {
		t.Fatal("still refused once the window moved on")
	}

	srv.Start() // empty: nothing was saved
	if err := s.heartbeat(ctx); err != nil {
		t.Fatal(err)
	}
	if !s.Status().Shared {
		t.Fatal("not shared again after a heartbeat answered")
	}
	c := rawClient(t, srv)
	// What s made within the last 20 s (its clock): the search just made.
	if n := c.ZCard(ctx, s.windowKeys("i")[0]).Val(); n != 1 {
		t.Fatalf("the window holds %d searches after the replay, want 1", n)
	}
}

// TestHungRedis: a Redis that stops answering (its process paused) costs
// one search OpTimeout once: that timeout opens the circuit, and from
// then on searches do not wait on it at all.
func TestHungRedis(t *testing.T) {
	srv := redistest.Start(t)
	const timeout = 20 * time.Millisecond
	s := newShared(t, srv, Options{OpTimeout: timeout, Failures: 3, Budget: []proxy.Window{{Max: 10, Per: 20 * time.Second}}})
	ctx := context.Background()
	if ok, _ := s.Take(ctx, "i", time.Now()); !ok {
		t.Fatal("refused")
	}
	srv.Pause()
	defer srv.Resume()
	var slow int
	for i := range 10 {
		start := time.Now()
		s.Take(ctx, "i", time.Now())
		s.Get(ctx, string(make([]byte, cache.KeyLen)))
		d := time.Since(start)
		if d > 2*timeout+200*time.Millisecond { // two bounded calls, and a loaded machine
			t.Fatalf("call %d waited %v on a hung Redis", i, d)
		}
		if d >= timeout {
			slow++
		}
	}
	if slow > 1 { // the first timeout opens the circuit
		t.Fatalf("%d calls waited for the timeout, want one before the circuit opened", slow)
	}
	if st := s.Status(); st.Shared {
		t.Fatalf("status %+v, want local", st)
	}
	srv.Resume()
	// Back only once Recover heartbeats in a row answered in time.
	for i := range s.opt.Recover {
		if s.Status().Shared {
			t.Fatalf("shared again after %d heartbeats, want %d", i, s.opt.Recover)
		}
		if err := s.heartbeat(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if !s.Status().Shared {
		t.Fatal("not shared again once Redis answered")
	}
}

// TestTrial: one replica of a group at a time takes a half-open
// instance's trial; another is told when the claim ends.
func TestTrial(t *testing.T) {
	srv := redistest.Start(t)
	a := newShared(t, srv, Options{Group: "trial"})
	b := newShared(t, srv, Options{Group: "trial"})
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	if ok, _ := a.Trial(ctx, "i", now.Add(5*time.Second), now); !ok {
		t.Fatal("the first claim was refused")
	}
	ok, retry := b.Trial(ctx, "i", now.Add(5*time.Second), now)
	if ok {
		t.Fatal("a second replica took the same trial")
	}
	if d := retry.Sub(now); d <= 4*time.Second || d > 5*time.Second {
		t.Fatalf("retry in %v, want just under 5 s", d)
	}
	if ok, _ := b.Trial(ctx, "j", now.Add(5*time.Second), now); !ok {
		t.Fatal("another instance's trial refused")
	}
}

// TestCacheDrop: dropping an instance's answers drops them from Redis,
// and a purge drops every answer.
func TestCacheDrop(t *testing.T) {
	srv := redistest.Start(t)
	s := newShared(t, srv, Options{})
	c := rawClient(t, srv)
	ctx := context.Background()
	now := time.Now()
	for i, inst := range []string{"https://a.example/", "https://b.example/", "https://a.example/"} {
		id := fmt.Sprintf("id-%d", i)
		rec := s.encode(id, cache.Entry{Instance: inst, StoredAt: now, Expires: now.Add(time.Hour)}, []byte("sealed"))
		c.Set(ctx, s.answerKey(id), rec, time.Hour)
	}
	n, err := s.CacheDropInstance("https://a.example/")
	if err != nil || n != 2 {
		t.Fatalf("dropped %d, %v; want 2", n, err)
	}
	if keys := c.Keys(ctx, s.cache+"a:*").Val(); len(keys) != 1 {
		t.Fatalf("%d answers left, want b's", len(keys))
	}
	if n, err := s.CachePurge(); err != nil || n != 1 {
		t.Fatalf("purged %d, %v; want 1", n, err)
	}
}

// TestNewHidesThePassword: a URL that cannot be read is refused without
// repeating it.
func TestNewHidesThePassword(t *testing.T) {
	for _, u := range []string{"redis://user:s3cret pw@host:6379/0", "redis://user:s3cret@host:6379/notadb", "ftp://user:s3cret@host"} {
		_, err := New(Options{URL: u, Secret: testSecret})
		if err == nil {
			t.Fatalf("%q accepted", u)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Fatalf("the error shows the password: %v", err)
		}
	}
}
