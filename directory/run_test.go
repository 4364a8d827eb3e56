package directory

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/searxgate/searxgate/internal/clock"
)

// wait is the wait Run is in on clk, once it is in one: Run makes its next
// timer only after a refresh is done, so a wait seen after an Advance is
// the test's "refresh finished".
func wait(t *testing.T, clk *clock.Fake) time.Duration {
	t.Helper()
	w := clk.BlockUntil(1)
	if len(w) != 1 {
		t.Fatalf("Run waits on %d timers", len(w))
	}
	return w[0]
}

// TestRunRefreshes runs the refresh loop against a list server that
// changes: a refresh delivers the updated list, a bad or failed fetch
// delivers nothing (the caller keeps what it had), and Run stops with its
// context. It runs with and without a Cache: without one a failed refresh
// falls back to the embedded snapshot, which must not be delivered either.
func TestRunRefreshes(t *testing.T) {
	for _, withCache := range []bool{true, false} {
		name := "no cache"
		if withCache {
			name = "cache"
		}
		t.Run(name, func(t *testing.T) {
			fixture := readFixture(t, "instances.json")
			srv := newListServer(t, fixture, `"v1"`)
			clk := clock.NewFake(t0)
			var (
				mu    sync.Mutex // guards lists
				lists []List
			)
			delivered := func() []List {
				mu.Lock()
				defer mu.Unlock()
				return append([]List(nil), lists...)
			}
			src := &Source{
				Location: srv.URL + "/data/instances.json",
				Fetcher:  NewHTTPFetcher(5*time.Second, 1<<20, "searxgate/test"),
				Filter:   DefaultFilter(),
				Clock:    clk,
			}
			if withCache {
				src.Cache = &memCache{}
			}
			jitter := Jitter(rand.New(rand.NewPCG(3, 4)).Float64, 0.1)
			wantJitter := Jitter(rand.New(rand.NewPCG(3, 4)).Float64, 0.1)

			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				src.Run(ctx, 6*time.Hour, jitter, func(l List) {
					mu.Lock()
					lists = append(lists, l)
					mu.Unlock()
				})
			}()

			// tick ends the wait and waits until the refresh is done (Run
			// waits again), checking the wait it asked for.
			tick := func() {
				t.Helper()
				clk.Advance(wait(t, clk))
				if d := wait(t, clk); d != wantJitter(6*time.Hour) {
					t.Fatalf("wait %v, not the jittered 6 h", d)
				}
			}
			if d := wait(t, clk); d != wantJitter(6*time.Hour) {
				t.Fatalf("first wait %v, not the jittered 6 h", d)
			}
			if n, _ := srv.seen(); n != 0 {
				t.Fatalf("Run fetched %d times before its first tick", n)
			}

			// 1: the first refresh delivers the fixture.
			tick()
			got := delivered()
			if len(got) != 1 || got[0].From != FromFetched || !reflect.DeepEqual(urlsOf(got[0].Entries), urlsOf(mustParse(t, fixture))) {
				t.Fatalf("after refresh 1: %+v", got)
			}

			// 2: searx.space publishes a new list; the refresh delivers it.
			srv.set(http.StatusOK, []byte(small), `"v2"`)
			tick()
			got = delivered()
			if len(got) != 2 || got[1].From != FromFetched || !got[1].FetchedAt.Equal(clk.Now()) ||
				!reflect.DeepEqual(urlsOf(got[1].Entries), []string{"https://fresh.example.org/"}) {
				t.Fatalf("after refresh 2: %+v", got)
			}

			// 3 and 4: a challenge page, then an outage: nothing new delivered.
			srv.set(http.StatusOK, []byte("<html>Just a moment...</html>"), `"v3"`)
			tick()
			srv.set(http.StatusServiceUnavailable, nil, "")
			tick()
			if got = delivered(); len(got) != 2 {
				t.Fatalf("a bad refresh delivered a list: %+v", got[2:])
			}

			// 5: the list is back, unchanged: a 304 confirms it only when a
			// copy is saved; either way the caller gets the current list.
			srv.set(http.StatusOK, []byte(small), `"v2"`)
			tick()
			got = delivered()
			wantFrom := FromFetched
			if withCache {
				wantFrom = FromNotModified
			}
			if len(got) != 3 || got[2].From != wantFrom || !reflect.DeepEqual(urlsOf(got[2].Entries), []string{"https://fresh.example.org/"}) {
				t.Fatalf("after refresh 5: %+v", got)
			}
			if n, _ := srv.seen(); n != 5 {
				t.Fatalf("server saw %d fetches, want 5", n)
			}

			cancel()
			<-done
		})
	}
}

func TestRunDefaults(t *testing.T) {
	clk := clock.NewFake(t0)
	src := &Source{Location: "", Filter: DefaultFilter(), Clock: clk}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		src.Run(ctx, 0, func(time.Duration) time.Duration { return -1 }, func(List) {
			t.Error("a refresh from the embedded snapshot was delivered")
		})
	}()
	if d := wait(t, clk); d != DefaultRefresh {
		t.Fatalf("wait %v, want DefaultRefresh (interval 0, jitter gave a negative)", d)
	}
	clk.Advance(DefaultRefresh)
	wait(t, clk)
	cancel()
	<-done
}

func TestJitter(t *testing.T) {
	for _, tt := range []struct {
		r, spread float64
		want      time.Duration
	}{
		{0, 0.1, 54 * time.Minute},
		{0.5, 0.1, time.Hour},
		{0.75, 0.2, 66 * time.Minute},
		{0.3, 0, time.Hour},
		{0, 5, 0}, // spread clamped to 1
	} {
		r := tt.r
		if got := Jitter(func() float64 { return r }, tt.spread)(time.Hour); !approx(got, tt.want, time.Millisecond) {
			t.Errorf("Jitter(r=%v, spread=%v)(1h) = %v, want %v", tt.r, tt.spread, got, tt.want)
		}
	}
}

// TestRunNone: with no list there is nothing to refresh; a file that goes
// bad is logged and the caller keeps what it has.
func TestRunNone(t *testing.T) {
	clk := &noTimers{Fake: clock.NewFake(t0), t: t}
	src := &Source{Location: "none", Filter: DefaultFilter(), Clock: clk}
	src.Run(context.Background(), time.Hour, nil, func(List) { t.Error("a list was delivered for none") })
}

// noTimers is a clock on which making a timer fails the test.
type noTimers struct {
	*clock.Fake
	t *testing.T
}

func (c *noTimers) NewTimer(d time.Duration) (<-chan time.Time, func() bool) {
	c.t.Error("Run waited to refresh no list")
	return c.Fake.NewTimer(0)
}

func TestRunFileGoneKeepsTheList(t *testing.T) {
	clk := clock.NewFake(t0)
	sink := &logSink{}
	src := &Source{Location: filepath.Join(t.TempDir(), "gone.json"), Filter: DefaultFilter(), Clock: clk, Logger: slog.New(sink)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		src.Run(ctx, time.Hour, nil, func(List) { t.Error("a list was delivered from a missing file") })
	}()
	clk.Advance(wait(t, clk))
	wait(t, clk) // the next wait: the refresh has ended
	cancel()
	<-done
	if !sink.has("gone.json") {
		t.Errorf("the log does not name the missing file: %v", sink.msgs)
	}
}
