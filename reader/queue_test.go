package reader

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/searxgate/searxgate/reader/pdf"
)

// heldSite serves /doc.pdf as a PDF of size bytes, announced, sending
// the first kilobyte at once and the rest once gate is closed.
func heldSite(t *testing.T, size int) (string, chan struct{}) {
	gate := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		w.Header().Set("Content-Length", strconv.Itoa(size))
		body := []byte("%PDF-1.4\n" + strings.Repeat("x", size-9))
		_, _ = w.Write(body[:1024])
		w.(http.Flusher).Flush()
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
		_, _ = w.Write(body[1024:])
	}))
	t.Cleanup(srv.Close)
	return srv.URL, gate
}

// untilHeld waits for the PDFs being read to hold all bytes.
func untilHeld(t *testing.T, r *Reader, all int64) {
	t.Helper()
	spinUntil(t, fmt.Sprintf("the PDFs being read hold %d bytes", all), func() bool {
		now, _ := r.queued.held("")
		return now == all
	})
}

// TestQueueBytesBound: the bytes of PDFs being read are held from the
// moment their body starts to come; a client past its share, or any
// client past the whole bound, is refused at once, before its body is
// read, with a retryable error that names which bound; all is let go
// of when the reads end.
func TestQueueBytesBound(t *testing.T) {
	const size = 3 << 19 // 1.5 MiB
	site, gate := heldSite(t, size)
	r := New(Config{AllowPrivate: true, NoCache: true, PerHostInFlight: 10, PerHostPerMinute: 600,
		QueueBytes: 4 << 20, ClientQueueBytes: 2 << 20})
	done := make(chan error, 2)
	read := func(client string) {
		_, err := r.Read(context.Background(), Request{URL: site + "/doc.pdf?c=" + client, Client: client})
		done <- err
	}
	go read("A")
	untilHeld(t, r, size)
	go read("B")
	untilHeld(t, r, 2*size)

	cases := []struct{ client, why string }{
		{"A", "the PDFs this client is having read already hold 1.5 MiB of the 2.0 MiB searxgate holds for one client's PDFs"},
		{"C", "the PDFs being read for all clients already hold 3.0 MiB of the 4.0 MiB searxgate holds for them"},
	}
	for _, c := range cases {
		_, err := r.Read(context.Background(), Request{URL: site + "/doc.pdf?again=" + c.client, Client: c.client})
		var qe *QueueError
		if !errors.As(err, &qe) || !errors.Is(err, ErrQueueFull) || qe.RetryAfter != 5*time.Second {
			t.Fatalf("%s: %v, want a *QueueError", c.client, err)
		}
		if want := "reader queue full: " + c.why + "; retry in 5 s"; err.Error() != want {
			t.Errorf("%s:\n got %s\nwant %s", c.client, err, want)
		}
	}
	close(gate)
	for range 2 {
		if err := <-done; err == nil || errors.Is(err, ErrQueueFull) {
			t.Errorf("a read let through: %v, want the PDF refused as unreadable", err)
		}
	}
	if all, own := r.queued.held("A"); all != 0 || own != 0 {
		t.Errorf("after the reads: %d bytes held, %d of them A's", all, own)
	}
}

// TestWorkerTimeCharged: a read whose worker ran 5 s costs its client
// five turns of the limit (its own and four more at the next read); a
// client that cannot pay is refused, and owes what it could not pay.
func TestWorkerTimeCharged(t *testing.T) {
	tokens := map[string]int{"A": 4, "B": 4}
	admit := func(client string, now time.Time) (bool, time.Duration) {
		if tokens[client] == 0 {
			return false, 2 * time.Second
		}
		tokens[client]--
		return true, 0
	}
	var c costs
	now := time.Unix(0, 0)
	if ok, _ := c.admit(admit, "A", now); !ok {
		t.Fatal("A's first read refused")
	}
	c.charge("A", 5*time.Second)
	c.charge("B", 900*time.Millisecond) // under a second: its own turn pays
	ok, wait := c.admit(admit, "A", now)
	if ok || tokens["A"] != 0 || c.owed["A"] != 1 {
		t.Fatalf("A's next read: %v (tokens left %d, owed %d), want refused owing 1", ok, tokens["A"], c.owed["A"])
	}
	if wait != 4*time.Second {
		t.Errorf("A told to wait %s, want 4s (the turn owed and its own)", wait)
	}
	tokens["A"] = 2
	if ok, _ := c.admit(admit, "A", now); !ok || tokens["A"] != 0 || len(c.owed) != 0 {
		t.Errorf("A after a refill: %v, tokens %d, owed %v", ok, tokens["A"], c.owed)
	}
	if ok, _ := c.admit(admit, "B", now); !ok || tokens["B"] != 3 {
		t.Errorf("B: %v, tokens %d: a cheap read costs one turn", ok, tokens["B"])
	}
}

// TestNoWorkerFree: a PDF whose turn for a worker does not come within
// the worker's wait is refused as the queue being full, naming the wait,
// and its memory is let go of.
func TestNoWorkerFree(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the stand-in worker is a shell script")
	}
	started := filepath.Join(t.TempDir(), "started")
	w := pdf.NewWorker(pdf.WorkerConfig{Command: []string{"/bin/sh", "-c", ": > " + started + "; exec /bin/sleep 60"},
		Workers: 1, Wait: 50 * time.Millisecond})
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "application/pdf")
		_, _ = rw.Write([]byte("%PDF-1.4\n"))
	}))
	t.Cleanup(srv.Close)
	r := New(Config{AllowPrivate: true, NoCache: true, PDFWorker: w})
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		_, err := r.Read(ctx, Request{URL: srv.URL + "/a.pdf", Client: "A"})
		first <- err
	}()
	spinUntil(t, "A's PDF in the worker", func() bool { _, err := os.Stat(started); return err == nil })
	_, err := r.Read(context.Background(), Request{URL: srv.URL + "/b.pdf", Client: "B"})
	var qe *QueueError
	if !errors.As(err, &qe) || !strings.Contains(err.Error(), "no PDF worker was free for "+srv.URL+"/b.pdf within 0.1 s") ||
		!strings.HasSuffix(err.Error(), "; retry in 5 s") {
		t.Errorf("B: %v, want refused for want of a worker", err)
	}
	cancel()
	if err := <-first; !errors.Is(err, ErrTimeout) {
		t.Errorf("A, gone: %v", err)
	}
	if all, _ := r.queued.held(""); all != 0 {
		t.Errorf("%d bytes still held", all)
	}
}

// TestQueueShareLeavesAnotherRoom: a greedy client asks to hold PDFs
// until it is refused, at its own share; a modest client that comes
// after it still holds its own, and the whole bound is never passed.
// Once the greedy client's reads end, nothing of it is kept.
func TestQueueShareLeavesAnotherRoom(t *testing.T) {
	const mb = 1 << 20
	q := newQueued(5*mb, 2*mb, 5*time.Second)
	var greedy []*hold
	for {
		h, err := q.take("greedy", mb)
		if err != nil {
			if !errors.Is(err, ErrQueueFull) || !strings.Contains(err.Error(), "for one client's PDFs") {
				t.Fatalf("greedy refused: %v, want its own share named", err)
			}
			break
		}
		greedy = append(greedy, h)
		if len(greedy) > 5 {
			t.Fatal("the greedy client holds more than all the bound")
		}
	}
	if len(greedy) != 2 {
		t.Errorf("the greedy client holds %d MiB, want its 2", len(greedy))
	}
	for i := range 2 {
		if _, err := q.take("modest", mb); err != nil {
			t.Fatalf("the modest client's PDF %d, beside the greedy one: %v", i, err)
		}
	}
	if all, own := q.held("modest"); all != 4*mb || own != 2*mb {
		t.Errorf("held %d, the modest client's %d", all, own)
	}
	for _, h := range greedy {
		h.release()
		h.release() // once only
	}
	if all, own := q.held("greedy"); all != 2*mb || own != 0 || len(q.byClient) != 1 {
		t.Errorf("after the greedy client's reads: %d held, %d its, clients %v", all, own, q.byClient)
	}
}

// TestGoneClientLetsGoOfItsPDF: a client that goes while its PDF's body
// is still coming stops the download, and what the PDF held is let go
// of at once, not when the server would have finished.
func TestGoneClientLetsGoOfItsPDF(t *testing.T) {
	const size = 1 << 20
	site, gate := heldSite(t, size)
	defer close(gate)
	r := New(Config{AllowPrivate: true, NoCache: true})
	ctx, gone := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := r.Read(ctx, Request{URL: site + "/doc.pdf", Client: "A"})
		done <- err
	}()
	untilHeld(t, r, size)
	gone()
	if err := <-done; err == nil {
		t.Fatal("the read went on after its client went")
	}
	if all, own := r.queued.held("A"); all != 0 || own != 0 || len(r.queued.byClient) != 0 {
		t.Errorf("after A went: %d bytes held, %d of them A's, clients kept %v", all, own, r.queued.byClient)
	}
}
