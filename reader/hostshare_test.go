package reader

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/searxgate/searxgate/internal/clock"
)

// heldPages serves /slow?n=… when told to (one request for each value
// sent on release) and /page?n=… at once.
func heldPages(t *testing.T) (*httptest.Server, chan struct{}) {
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "slow %s", r.URL.Query().Get("n"))
	})
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "page %s", r.URL.Query().Get("n"))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, release
}

// turns counts, over every server, client's reads holding a slot and
// waiting for one.
func (h *hosts) turns(client string) (running, waiting int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.byHost {
		for _, r := range s.running {
			if r.client == client {
				running++
			}
		}
		for _, w := range s.queue {
			if w.client == client {
				waiting++
			}
		}
	}
	return running, waiting
}

// spinUntil waits for cond, failing after a minute (a watchdog: only
// goroutines have to be scheduled, no time to pass).
func spinUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("never: %s", what)
		}
		runtime.Gosched()
	}
}

// TestHostSharedAmongClients: client A keeps 4 reads of one server in
// flight (2 reading, 2 waiting: the server's 2 at a time); each of B's 6
// reads of that server, queued behind A's 2, takes the first slot that
// frees and is answered without waiting for A's queue.
func TestHostSharedAmongClients(t *testing.T) {
	srv, release := heldPages(t)
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	r, base := publicReader(t, srv, func(c *Config) { c.Clock = clk; c.NoCache = true })
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var n sync.Mutex
	next, read := 0, 0 // A's reads started, and read
	var keep func()
	keep = func() { // one of A's 4 reads; when it ends, the next starts
		defer wg.Done()
		n.Lock()
		next++
		url := fmt.Sprintf("%s/slow?n=%d", base, next)
		n.Unlock()
		if _, err := r.Read(ctx, Request{URL: url, Client: "A"}); err == nil {
			n.Lock()
			read++
			n.Unlock()
		}
		if ctx.Err() == nil {
			wg.Add(1)
			go keep()
		}
	}
	for range 4 {
		wg.Add(1)
		go keep()
	}
	t.Cleanup(func() { stop(); wg.Wait() })

	got := 0
	for i := range 6 {
		spinUntil(t, "A holds 2 slots and waits with 2 reads", func() bool {
			running, waiting := r.hosts.turns("A")
			return running == 2 && waiting == 2
		})
		out := make(chan readOut, 1)
		go func() {
			res, err := r.Read(context.Background(), Request{URL: fmt.Sprintf("%s/page?n=B%d", base, i), Client: "B"})
			out <- readOut{res, err}
		}()
		spinUntil(t, "B waits", func() bool { _, waiting := r.hosts.turns("B"); return waiting == 1 })
		n.Lock()
		before := read
		n.Unlock()
		release <- struct{}{} // one of A's reads ends
		spinUntil(t, "A's read ended", func() bool { n.Lock(); defer n.Unlock(); return read > before })
		var o readOut
		spinUntil(t, "B read, or its turn given to A", func() bool {
			select {
			case o = <-out:
				return true
			default:
			}
			running, _ := r.hosts.turns("A")
			_, bWaits := r.hosts.turns("B")
			return running == 2 && bWaits == 1
		})
		switch {
		case o.res == nil && o.err == nil:
			t.Errorf("read %d: the freed slot went to A's queue, B still waits", i)
			clk.Advance(7500 * time.Millisecond) // B gives up
			o = <-out
		case o.err != nil:
			t.Errorf("read %d: %v", i, o.err)
		case o.res.Content != fmt.Sprintf("page B%d", i) || o.res.Waited != "":
			t.Errorf("read %d: %q, waited %q", i, o.res.Content, o.res.Waited)
		default:
			got++
		}
		clk.Advance(4 * time.Second) // the minute gives 2 more requests
	}
	if got < 6 {
		t.Errorf("B read %d of 6 times", got)
	}
}

// TestHostMinuteSharedAmongClients: A has used the server's burst and
// waits with 4 more reads for the minute's next requests; B's one read,
// asked after them, takes the next request (2 s on), not the fifth.
func TestHostMinuteSharedAmongClients(t *testing.T) {
	srv, _ := heldPages(t)
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	r, base := publicReader(t, srv, func(c *Config) { c.Clock = clk; c.NoCache = true })
	for i := range 6 {
		if _, err := r.Read(context.Background(), Request{URL: fmt.Sprintf("%s/page?n=A%d", base, i), Client: "A"}); err != nil {
			t.Fatal(err)
		}
	}
	outs := map[string]chan readOut{}
	for _, name := range []string{"A6", "A7", "A8", "A9", "B0"} {
		c := make(chan readOut, 1)
		outs[name] = c
		go func() {
			res, err := r.Read(context.Background(), Request{URL: base + "/page?n=" + name, Client: name[:1]})
			c <- readOut{res, err}
		}()
		blockUntil(t, clk, len(outs))
	}
	clk.Advance(2 * time.Second)
	var o readOut
	spinUntil(t, "B read, or the request given to A", func() bool {
		select {
		case o = <-outs["B0"]:
			return true
		default:
		}
		_, waiting := r.hosts.turns("A")
		return waiting < 4
	})
	if o.res == nil && o.err == nil {
		t.Fatal("the minute's next request went to A, not B")
	}
	if o.err != nil || o.res.Waited != "2.0 s for public.test's turn" {
		t.Fatalf("B: %v %+v, want read after 2 s", o.err, o.res)
	}
	running, waiting := r.hosts.turns("A")
	if running != 0 || waiting != 4 {
		t.Errorf("A: %d reading, %d waiting; want its 4 still waiting", running, waiting)
	}
	clk.Advance(10 * time.Second) // A's reads are read, or give up
	for _, name := range []string{"A6", "A7", "A8", "A9"} {
		if o := <-outs[name]; o.err != nil {
			var busy *BusyError
			if !errors.As(o.err, &busy) {
				t.Errorf("%s: %v", name, o.err)
			}
		}
	}
}

// TestSlotFreedBeforeTheMinute: a slot that frees while the minute has no
// request to give goes out when the request comes, not when the waiting
// read gives up.
func TestSlotFreedBeforeTheMinute(t *testing.T) {
	srv, release := heldPages(t)
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	r, base := publicReader(t, srv, func(c *Config) { c.Clock = clk; c.NoCache = true; c.PerHostInFlight = 1 })
	for i := range 5 { // 5 of the burst of 6
		if _, err := r.Read(context.Background(), Request{URL: fmt.Sprintf("%s/page?n=%d", base, i), Client: "A"}); err != nil {
			t.Fatal(err)
		}
	}
	held := make(chan readOut, 1)
	go func() {
		res, err := r.Read(context.Background(), Request{URL: base + "/slow?n=1", Client: "A"})
		held <- readOut{res, err}
	}()
	spinUntil(t, "A's slow read holds the slot", func() bool { running, _ := r.hosts.turns("A"); return running == 1 })
	out := make(chan readOut, 1)
	go func() {
		res, err := r.Read(context.Background(), Request{URL: base + "/page?n=B", Client: "B"})
		out <- readOut{res, err}
	}()
	blockUntil(t, clk, 1)
	release <- struct{}{} // the slot frees; the minute's next request is 2 s away
	if o := <-held; o.err != nil {
		t.Fatal(o.err)
	}
	clk.Advance(2 * time.Second)
	var o readOut
	select {
	case o = <-out:
	case <-time.After(time.Minute): // a watchdog: no time has to pass
		t.Fatal("B still waits, 2 s on, with the slot free and the minute's request come")
	}
	if o.err != nil || o.res.Waited != "2.0 s for public.test's turn" {
		t.Fatalf("B: %v %+v, want read 2 s on", o.err, o.res)
	}
}
