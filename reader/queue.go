package reader

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrQueueFull is wrapped by *QueueError.
var ErrQueueFull = errors.New("reader queue full")

// QueueError refuses a PDF read at once, before its body is downloaded,
// because the PDFs being read (waiting for a worker or in one) hold as
// much memory as searxgate gives them, for all clients or for this one;
// or later, because no worker was free within its wait. Reason says
// which; a retry after RetryAfter may pass.
type QueueError struct {
	Reason     string
	RetryAfter time.Duration
}

func (e *QueueError) Error() string {
	return fmt.Sprintf("%s: %s; retry in %d s", ErrQueueFull, e.Reason, seconds(e.RetryAfter))
}

func (e *QueueError) Unwrap() error { return ErrQueueFull }

// queued bounds the bytes held by PDFs being read: from the moment their
// body starts to download until their worker is done with it, all
// clients together and each client.
type queued struct {
	total, perClient int64
	retry            time.Duration // what a refusal says to wait: one PDF's time

	mu       sync.Mutex // guards used and byClient
	used     int64
	byClient map[string]int64
}

func newQueued(total, perClient int64, retry time.Duration) *queued {
	return &queued{total: total, perClient: perClient, retry: retry, byClient: map[string]int64{}}
}

// hold is one read's share of queued; its methods are safe on nil.
type hold struct {
	q      *queued
	client string
	n      int64
}

// take holds n bytes for client, or refuses with a *QueueError.
func (q *queued) take(client string, n int64) (*hold, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.byClient[client]+n > q.perClient:
		return nil, &QueueError{RetryAfter: q.retry, Reason: fmt.Sprintf(
			"the PDFs this client is having read already hold %s of the %s searxgate holds for one client's PDFs",
			mib(q.byClient[client]), mib(q.perClient))}
	case q.used+n > q.total:
		return nil, &QueueError{RetryAfter: q.retry, Reason: fmt.Sprintf(
			"the PDFs being read for all clients already hold %s of the %s searxgate holds for them",
			mib(q.used), mib(q.total))}
	}
	q.used += n
	q.byClient[client] += n
	return &hold{q: q, client: client, n: n}, nil
}

// resize makes h hold n bytes (n ≤ what it holds: a body smaller than
// it was feared).
func (h *hold) resize(n int64) {
	if h == nil || n >= h.n {
		return
	}
	h.q.mu.Lock()
	defer h.q.mu.Unlock()
	h.q.used -= h.n - n
	h.q.byClient[h.client] -= h.n - n
	h.n = n
}

// release lets go of what h holds (once).
func (h *hold) release() {
	if h == nil || h.q == nil {
		return
	}
	q := h.q
	h.q = nil
	q.mu.Lock()
	defer q.mu.Unlock()
	q.used -= h.n
	if q.byClient[h.client] -= h.n; q.byClient[h.client] <= 0 {
		delete(q.byClient, h.client)
	}
}

// held is what the PDFs being read hold now, all and client's.
func (q *queued) held(client string) (all, own int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.used, q.byClient[client]
}

func mib(n int64) string {
	if n < 1<<20 && n > 0 {
		return fmt.Sprintf("%d KiB", max(1, n>>10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// costs keeps what reads cost their clients beyond the one turn of
// Config.Admit each read takes: a PDF's worker time, one turn for each
// second past the first. It is paid at the client's next read.
type costs struct {
	mu   sync.Mutex // guards owed
	owed map[string]int
}

// maxOwed bounds the clients remembered as owing; past it their debts are
// forgiven rather than the map grown.
const maxOwed = 100_000

// charge notes that a worker read for client for used.
func (c *costs) charge(client string, used time.Duration) {
	extra := int((used - 1) / time.Second)
	if extra <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.owed == nil || len(c.owed) >= maxOwed {
		c.owed = map[string]int{}
	}
	c.owed[client] += extra
}

// admit pays client's debts and takes the read's own turn from admit;
// false and the wait when the limit refuses.
func (c *costs) admit(admit func(string, time.Time) (bool, time.Duration), client string, now time.Time) (bool, time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.owed[client] > 0 {
		ok, wait := admit(client, now)
		if !ok {
			// Roughly one wait per turn still owed, and the read's own.
			return false, wait * time.Duration(c.owed[client]+1)
		}
		if c.owed[client]--; c.owed[client] == 0 {
			delete(c.owed, client)
		}
	}
	return admit(client, now)
}
