package polite

import (
	"sync"
	"time"
)

// Fair keeps one client from spending every public instance's budget:
// within each politeness window, a client may make at most its share of
// the searches the public pool allows. The share counts only the clients
// active now: those that searched within the shortest window (the
// current one), so capacity nobody is using goes to whoever asks, and a
// client alone after others stopped gets what they left, not a share of
// clients long gone. Among n active clients a short window's share is
// capacity / n, or more when the others leave it unused: all but a
// reserve (fairReserve, a third) and what the others took. The longest
// window's share is capacity / (n + 1), or half of it less what the
// others took: the +1 keeps part of it free for a client that has not
// searched yet, so a newcomer is never left waiting minutes behind one
// busy client. A client alone may take, of a short window, all but the
// reserve: it is for whoever comes next, and is released to the lone
// client late in its window (fairRelease, the last quarter), when nobody
// else came. So a greedy client that spends what it can in a burst
// leaves a third of every instance's window to the next client. The
// operator's own instances are not shared out: a client over its share
// is still served by them.
//
// Usage is counted per client in buckets (a tenth of a window each), and
// for all clients together in the same buckets, so a client costs a few
// hundred bytes whatever its rate; the count of clients is bounded
// (maxFairClients), the idlest dropped first.
type Fair struct {
	base    time.Time
	windows []Window
	longest time.Duration // the longest window's span
	// capacity returns the number of public instances now: a window's
	// capacity is that times its Max.
	capacity func() int

	shortest time.Duration // the shortest window's span: a client that searched within it is active

	mu       sync.Mutex // guards clients, all and the active count
	clients  map[string]*clientUse
	all      clientUse // every client's searches together (its last is unused)
	active   int       // clients that searched within the shortest window, as of activeAt
	activeAt int64     // when active was counted; it is counted again after a second
}

// fairReserve is the part of a short window a client alone may not take
// until late in its window (fairRelease of the window after its oldest
// search there).
const (
	fairReserve = 3 // a third
	fairRelease = 3 // of 4: the reserve is released in the window's last quarter
)

// maxFairClients bounds the clients whose usage is kept.
const maxFairClients = 10_000

// fairBuckets is the number of buckets a window is kept in.
const fairBuckets = 10

type clientUse struct {
	last int64 // nanoseconds since base of its last search
	// per window: counts by bucket, and the bucket number each count is of
	counts [][fairBuckets]int32
	starts [][fairBuckets]int64
}

// NewFair shares out the public budget windows (those with a positive Max
// and Per) among the clients; capacity returns the number of public
// instances now. A nil *Fair allows everything.
func NewFair(windows []Window, capacity func() int) *Fair {
	var ws []Window
	var longest, shortest time.Duration
	for _, w := range windows {
		if w.Max > 0 && w.Per > 0 {
			ws = append(ws, w)
			longest = max(longest, w.Per)
			if shortest == 0 || w.Per < shortest {
				shortest = w.Per
			}
		}
	}
	return &Fair{base: time.Now(), windows: ws, longest: longest, shortest: shortest, capacity: capacity,
		clients: make(map[string]*clientUse), all: newClientUse(len(ws))}
}

// WithBase counts f's buckets from base, the caller's clock reading now
// (default: time.Now when f was made), and returns f. Call it before f is
// used.
func (f *Fair) WithBase(base time.Time) *Fair {
	f.base = base
	return f
}

// used returns the client's searches within window i at t, the time its
// oldest counted bucket leaves the window, and when that bucket began.
func (f *Fair) used(u *clientUse, i int, t int64) (n int, frees, first int64) {
	w := f.windows[i]
	width := int64(w.Per) / fairBuckets
	oldest := t - int64(w.Per)
	frees, first = -1, -1
	for b := range fairBuckets {
		if s := u.starts[i][b]; u.counts[i][b] > 0 && s+width > oldest {
			n += int(u.counts[i][b])
			if end := s + width + int64(w.Per); frees < 0 || end < frees {
				frees, first = end, s
			}
		}
	}
	return n, frees, first
}

// activeLocked counts the clients that searched within the shortest
// window, at most once a second (the count walks every client).
func (f *Fair) activeLocked(t int64) int {
	if f.activeAt != 0 && t-f.activeAt < int64(time.Second) && t >= f.activeAt {
		return f.active
	}
	n := countActive(f.clients, t, int64(f.shortest))
	f.active, f.activeAt = n, t
	return n
}

// Allowed reports whether client may take one more public search at now;
// when not, it returns when its share frees.
func (f *Fair) Allowed(client string, now time.Time) (bool, time.Time) {
	if f == nil || client == "" || len(f.windows) == 0 {
		return true, now
	}
	t := int64(now.Sub(f.base))
	f.mu.Lock()
	defer f.mu.Unlock()
	u := f.clients[client]
	if u == nil {
		return true, now
	}
	active := f.activeLocked(t)
	if t-u.last >= int64(f.shortest) {
		active++ // it is about to be active again
	}
	pub := f.capacity()
	ok, free := true, t
	for i, w := range f.windows {
		c := pub * w.Max
		used, frees, first := f.used(u, i, t)
		all, _, _ := f.used(&f.all, i, t)
		share, alone := fairShare(c, max(active, 1), all-used, w.Per == f.longest)
		if used < share {
			continue
		}
		if alone {
			// Alone, the reserve is released late in the window: the
			// politeness budget says when the whole window frees.
			release := first + int64(w.Per)*fairRelease/4
			if t >= release {
				continue
			}
			frees = min(frees, release)
		}
		ok = false
		free = max(free, frees)
	}
	return ok, now.Add(time.Duration(free - t))
}

// fairShare is a client's share of a window whose capacity is c, among n
// active clients (itself included) whose others took others of it; alone
// reports a short window's share of a client alone, whose reserve is
// released late in the window.
func fairShare(c, n, others int, longest bool) (share int, alone bool) {
	switch {
	case longest:
		share = max(c/(n+1), c/2-others)
	case n == 1:
		share, alone = c-c/fairReserve, true
	default:
		share = max(c/n, c-c/fairReserve-others)
	}
	return max(share, 1), alone
}

// Take counts one public search of client at now.
func (f *Fair) Take(client string, now time.Time) {
	if f == nil || client == "" || len(f.windows) == 0 {
		return
	}
	t := int64(now.Sub(f.base))
	f.mu.Lock()
	defer f.mu.Unlock()
	u := f.clients[client]
	if u == nil {
		if len(f.clients) >= maxFairClients {
			f.evictLocked(t)
		}
		u = new(clientUse)
		*u = newClientUse(len(f.windows))
		f.clients[client] = u
	}
	u.last = t
	f.count(u, t)
	f.count(&f.all, t)
}

func newClientUse(windows int) clientUse {
	return clientUse{counts: make([][fairBuckets]int32, windows), starts: make([][fairBuckets]int64, windows)}
}

// count adds one search at t to u's buckets.
func (f *Fair) count(u *clientUse, t int64) {
	for i, w := range f.windows {
		width := int64(w.Per) / fairBuckets
		q := t / width
		if t%width < 0 {
			q--
		}
		b := int((q%fairBuckets + fairBuckets) % fairBuckets)
		if s := q * width; u.starts[i][b] != s {
			u.starts[i][b], u.counts[i][b] = s, 0
		}
		u.counts[i][b]++
	}
}

// evictLocked drops every client idle for the longest window, and when
// none is, the idlest one.
func (f *Fair) evictLocked(t int64) { evictIdle(f.clients, t, int64(f.longest)) }

// lastSearcher is a client's usage, which knows when it last searched.
type lastSearcher interface{ lastAt() int64 }

func (u *clientUse) lastAt() int64 { return u.last }

// evictIdle drops from clients every one idle for idleFor at t, and when
// that leaves maxFairClients or more, the idlest one: what Fair and
// ExtraBudget keep per client stays bounded.
func evictIdle[T lastSearcher](clients map[string]T, t, idleFor int64) {
	var idlest string
	idle := int64(-1)
	for c, u := range clients {
		if t-u.lastAt() >= idleFor {
			delete(clients, c)
			continue
		}
		if t-u.lastAt() > idle {
			idlest, idle = c, t-u.lastAt()
		}
	}
	if len(clients) >= maxFairClients {
		delete(clients, idlest)
	}
}

// countActive counts the clients that searched within span before t.
func countActive[T lastSearcher](clients map[string]T, t, span int64) int {
	n := 0
	for _, u := range clients {
		if t-u.lastAt() < span {
			n++
		}
	}
	return n
}
