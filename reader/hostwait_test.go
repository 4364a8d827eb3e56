package reader

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/searxgate/searxgate/internal/clock"
)

// waitSite serves /page?n=… at once, and /slow?n=… once gate is closed,
// counting the requests it serves at once.
type waitSite struct {
	gate    chan struct{}
	entered chan struct{}

	mu            sync.Mutex
	now, most, ok int
}

func newWaitSite(t *testing.T) (*waitSite, *httptest.Server) {
	ws := &waitSite{gate: make(chan struct{}), entered: make(chan struct{}, 16)}
	mux := http.NewServeMux()
	serve := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "page %s", r.URL.Query().Get("n"))
	}
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		ws.mu.Lock()
		ws.ok++
		ws.mu.Unlock()
		serve(w, r)
	})
	mux.HandleFunc("/hop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/page?n=hop", http.StatusFound)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		ws.mu.Lock()
		ws.now++
		ws.most = max(ws.most, ws.now)
		ws.mu.Unlock()
		ws.entered <- struct{}{}
		select {
		case <-ws.gate:
		case <-r.Context().Done():
		}
		ws.mu.Lock()
		ws.now--
		ws.mu.Unlock()
		serve(w, r)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return ws, srv
}

func (ws *waitSite) served() int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.ok
}

// blockUntil is clk.BlockUntil(n), failing the test instead of hanging
// when the reads never come to wait (a watchdog, not a pace).
func blockUntil(t *testing.T, clk *clock.Fake, n int) []time.Duration {
	t.Helper()
	c := make(chan []time.Duration, 1)
	go func() { c <- clk.BlockUntil(n) }()
	select {
	case p := <-c:
		return p
	case <-time.After(time.Minute):
		t.Fatalf("no %d reads came to wait; waiting: %v", n, clk.Pending())
		return nil
	}
}

type readOut struct {
	res *Result
	err error
}

func readAsync(ctx context.Context, r *Reader, url string) <-chan readOut {
	c := make(chan readOut, 1)
	go func() {
		res, err := r.Read(ctx, Request{URL: url})
		c <- readOut{res, err}
	}()
	return c
}

// TestQuickReadsWait: with the default limits (a burst of 6, then one
// request every 2 s), seven quick reads of one site in a row all succeed;
// the seventh waits for its turn and says so.
func TestQuickReadsWait(t *testing.T) {
	ws, srv := newWaitSite(t)
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	r, base := publicReader(t, srv, func(c *Config) { c.Clock = clk })
	for i := 1; i <= 6; i++ {
		res, err := r.Read(context.Background(), Request{URL: fmt.Sprintf("%s/page?n=%d", base, i)})
		if err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
		if res.Waited != "" {
			t.Errorf("read %d waited %q within the burst", i, res.Waited)
		}
	}
	out := readAsync(context.Background(), r, base+"/page?n=7")
	if p := blockUntil(t, clk, 1); !slices.Equal(p, []time.Duration{2 * time.Second}) {
		t.Fatalf("the seventh read waits %v, want its turn in 2 s", p)
	}
	if ws.served() != 6 {
		t.Errorf("%d requests before the seventh's turn, want 6", ws.served())
	}
	clk.Advance(2 * time.Second)
	o := <-out
	if o.err != nil {
		t.Fatal(o.err)
	}
	if o.res.Content != "page 7" || o.res.Waited != "2.0 s for public.test's turn" {
		t.Errorf("content %q, waited %q", o.res.Content, o.res.Waited)
	}
}

// TestConcurrentReadsTakeTurns: seven reads of one site at once all
// succeed, never more than two at the server; the five past the first two
// wait their turn, first come first served.
func TestConcurrentReadsTakeTurns(t *testing.T) {
	ws, srv := newWaitSite(t)
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	r, base := publicReader(t, srv, func(c *Config) { c.Clock = clk })
	var outs []<-chan readOut
	for i := range 7 {
		outs = append(outs, readAsync(context.Background(), r, fmt.Sprintf("%s/slow?n=%d", base, i)))
	}
	<-ws.entered
	<-ws.entered
	// Five wait for a slot (until half the 15 s Timeout); the minute's
	// request is taken with the slot, and by then (2 s on) the seventh's
	// has come.
	want := []time.Duration{7500 * time.Millisecond, 7500 * time.Millisecond, 7500 * time.Millisecond, 7500 * time.Millisecond, 7500 * time.Millisecond}
	if p := blockUntil(t, clk, 5); !slices.Equal(p, want) {
		t.Fatalf("waiting %v, want %v", p, want)
	}
	clk.Advance(2 * time.Second)
	close(ws.gate)
	waited := 0
	for i, c := range outs {
		o := <-c
		if o.err != nil {
			t.Fatalf("read %d: %v", i, o.err)
		}
		if o.res.Content != fmt.Sprintf("page %d", i) {
			t.Errorf("read %d: %q", i, o.res.Content)
		}
		switch o.res.Waited {
		case "":
		case "2.0 s for public.test's turn":
			waited++
		default:
			t.Errorf("read %d waited %q", i, o.res.Waited)
		}
	}
	if waited != 5 || ws.most != 2 {
		t.Errorf("%d reads waited (want 5), %d at the server at once (want 2)", waited, ws.most)
	}
}

// TestTurnTooLate: a read whose turn comes later than half its Timeout is
// refused at once, saying when the turn comes.
func TestTurnTooLate(t *testing.T) {
	ws, srv := newWaitSite(t)
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	r, base := publicReader(t, srv, func(c *Config) { c.Clock = clk; c.Timeout = 3 * time.Second })
	for i := 1; i <= 6; i++ {
		if _, err := r.Read(context.Background(), Request{URL: fmt.Sprintf("%s/page?n=%d", base, i)}); err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
	}
	_, err := r.Read(context.Background(), Request{URL: base + "/page?n=7"})
	var busy *BusyError
	if !errors.As(err, &busy) || busy.RetryAfter != 2*time.Second || busy.Waited != 0 || busy.Host != "public.test" ||
		!strings.Contains(err.Error(), "retry in 2 s") {
		t.Fatalf("%v (%+v), want refused with its turn in 2 s", err, busy)
	}
	if p := clk.Pending(); len(p) != 0 || ws.served() != 6 {
		t.Errorf("the refused read waited (%v) or was sent (%d requests)", p, ws.served())
	}
	// Refused, it promised nothing: the next read's turn is still in 2 s.
	clk.Advance(2 * time.Second)
	if res, err := r.Read(context.Background(), Request{URL: base + "/page?n=7"}); err != nil || res.Waited != "" {
		t.Errorf("%v, %+v", err, res)
	}
}

// TestSlotTooLate: a read that finds every slot of its host taken waits
// half its Timeout for one, then is refused, saying when the reads that
// hold them must have ended.
func TestSlotTooLate(t *testing.T) {
	ws, srv := newWaitSite(t)
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	r, base := publicReader(t, srv, func(c *Config) { c.Clock = clk; c.PerHostInFlight = 1 })
	first := readAsync(context.Background(), r, base+"/slow?n=1")
	<-ws.entered
	second := readAsync(context.Background(), r, base+"/page?n=2")
	if p := blockUntil(t, clk, 1); !slices.Equal(p, []time.Duration{7500 * time.Millisecond}) {
		t.Fatalf("waiting %v", p)
	}
	clk.Advance(7500 * time.Millisecond)
	o := <-second
	var busy *BusyError
	if !errors.As(o.err, &busy) || busy.Waited != 7500*time.Millisecond || busy.RetryAfter != 7500*time.Millisecond ||
		!strings.Contains(o.err.Error(), "did not come in the 7.5 s this read waited; retry in 8 s") {
		t.Fatalf("%v (%+v)", o.err, busy)
	}
	close(ws.gate)
	if o := <-first; o.err != nil {
		t.Fatal(o.err)
	}
	// The slot is free again, and the refused read gave its request back.
	res, err := r.Read(context.Background(), Request{URL: base + "/page?n=2"})
	if err != nil || res.Waited != "" {
		t.Fatalf("%v %+v", err, res)
	}
}

// TestCancelledWaitStops: a read whose caller gives up stops waiting, and
// its turn goes to the next read.
func TestCancelledWaitStops(t *testing.T) {
	ws, srv := newWaitSite(t)
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	r, base := publicReader(t, srv, func(c *Config) { c.Clock = clk })
	for i := 1; i <= 6; i++ {
		if _, err := r.Read(context.Background(), Request{URL: fmt.Sprintf("%s/page?n=%d", base, i)}); err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := readAsync(ctx, r, base+"/page?n=7")
	blockUntil(t, clk, 1)
	cancel()
	o := <-out
	if !errors.Is(o.err, context.Canceled) || !errors.Is(o.err, ErrTimeout) || ws.served() != 6 {
		t.Fatalf("%v, %d requests", o.err, ws.served())
	}
	if p := clk.Pending(); len(p) != 0 {
		t.Errorf("timers left behind: %v", p)
	}
	// Its turn was given back: the next read waits 2 s, not 4.
	next := readAsync(context.Background(), r, base+"/page?n=8")
	if p := blockUntil(t, clk, 1); !slices.Equal(p, []time.Duration{2 * time.Second}) {
		t.Fatalf("the next read waits %v, want 2 s", p)
	}
	clk.Advance(2 * time.Second)
	if o := <-next; o.err != nil || o.res.Waited != "2.0 s for public.test's turn" {
		t.Fatalf("%v %+v", o.err, o.res)
	}
}

// TestCancelledSlotWait: a caller that gives up while its read waits for a
// slot stops waiting, and the slot later goes to the read after it.
func TestCancelledSlotWait(t *testing.T) {
	ws, srv := newWaitSite(t)
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	r, base := publicReader(t, srv, func(c *Config) { c.Clock = clk; c.PerHostInFlight = 1 })
	first := readAsync(context.Background(), r, base+"/slow?n=1")
	<-ws.entered
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := readAsync(ctx, r, base+"/page?n=2")
	blockUntil(t, clk, 1)
	third := readAsync(context.Background(), r, base+"/page?n=3")
	blockUntil(t, clk, 2)
	cancel()
	if o := <-gaveUp; !errors.Is(o.err, context.Canceled) {
		t.Fatalf("%v", o.err)
	}
	close(ws.gate)
	if o := <-first; o.err != nil {
		t.Fatal(o.err)
	}
	if o := <-third; o.err != nil || o.res.Content != "page 3" {
		t.Fatalf("%v %+v", o.err, o.res)
	}
	if ws.served() != 1 {
		t.Errorf("%d quick pages served, want the third's only", ws.served())
	}
}

// TestRedirectWaits: a redirect followed waits for its request's turn
// within what the read waits, and the read says how long.
func TestRedirectWaits(t *testing.T) {
	ws, srv := newWaitSite(t)
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	r, base := publicReader(t, srv, func(c *Config) { c.Clock = clk })
	for i := 1; i <= 5; i++ {
		if _, err := r.Read(context.Background(), Request{URL: fmt.Sprintf("%s/page?n=%d", base, i)}); err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
	}
	out := readAsync(context.Background(), r, base+"/hop")
	if p := blockUntil(t, clk, 1); !slices.Equal(p, []time.Duration{2 * time.Second}) || ws.served() != 5 {
		t.Fatalf("the redirect waits %v after %d pages, want 2 s after 5", p, ws.served())
	}
	clk.Advance(2 * time.Second)
	if o := <-out; o.err != nil || o.res.Content != "page hop" || o.res.Waited != "2.0 s for public.test's turn" {
		t.Fatalf("%v %+v", o.err, o.res)
	}
}

// TestDeadlinePassed: a read whose caller's deadline has passed does not
// wait, and is not told the host is busy.
func TestDeadlinePassed(t *testing.T) {
	_, srv := newWaitSite(t)
	r, base := publicReader(t, srv, nil)
	ctx, cancel := context.WithDeadline(context.Background(), time.Unix(1, 0))
	defer cancel()
	_, err := r.Read(ctx, Request{URL: base + "/page?n=1"})
	var busy *BusyError
	if err == nil || errors.As(err, &busy) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("%v", err)
	}
}
