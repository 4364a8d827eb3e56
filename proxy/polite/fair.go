package polite

import (
	"slices"
	"sync"
	"time"
)

// Fair shares each politeness window of the public pool among the
// clients active now: those that asked for a public search or made one
// within the shortest window. In a window whose capacity c is the public
// instances times its Max, among n active clients (the asker counted):
//   - a seat of c/(3n), at least 1, is kept free for a client that has
//     not come yet: a third of the window, shared by the active clients;
//   - each one's share is the rest split evenly, (c-seat)/n, at least 1;
//   - a client's first search in the window always goes, so a newcomer
//     is never turned away while the window has room;
//   - any other search goes only if it leaves free, after it, what each
//     less served active client needs to reach the asker's new level (up
//     to the share: max-min; of a tie, one goes first), and the seat;
//   - the seat is lent once the window's oldest counted search leaves it
//     within lend (a quarter of the shortest window unless WithLend says
//     less): a newcomer then waits at most that long for room, and what
//     frees goes first to the least served.
//
// So no number of clients takes an active client's way to its share, and
// the window keeps room for the next one whatever they do, until it
// frees. A refused client is told the earliest time these rules let it
// in, as the others' use stands now. The operator's own instances are not
// shared out: a client over its share is still served by them. Fair knows
// no instance: whether a search it allows fits an instance's own window
// is the Politeness's to say.
//
// Usage is counted per client in buckets (a tenth of a window each), and
// for all clients together in the same buckets, so a client costs a few
// hundred bytes whatever its rate; a bucket leaves the window when its
// last search does, so the share frees when the instances' windows do; the count of clients is bounded
// (maxFairClients), the idlest dropped first. The others' use is read
// again only after a search, a new list of active clients or a bucket's
// end, so a check costs the active clients' count once per search.
type Fair struct {
	base     time.Time
	windows  []Window
	longest  time.Duration // the longest window's span
	shortest time.Duration // the shortest window's span: a client that searched within it is active
	lend     time.Duration // the seat is lent when the window starts to free within it
	// capacity returns the number of public instances now: a window's
	// capacity is that times its Max.
	capacity func() int

	mu      sync.Mutex // guards clients, all, active, gen, listed, listedAt, version and levels
	clients map[string]*clientUse
	all     clientUse // every client's searches together (its last and gen are unused)
	// active lists the clients that searched within the shortest window
	// as of listedAt (listed again after a second) and those that
	// searched since; a client in it carries gen.
	active   []*clientUse
	gen      uint64
	listed   bool
	listedAt int64
	version  uint64   // counts Takes: levels are of one version
	levels   []levels // per window: the active clients' use
}

// levels is what the active clients have used of one window, sorted, as
// of a version of Fair, a generation of its active list and a bucket.
type levels struct {
	ok           bool
	version, gen uint64
	tick         int64
	until        int64 // the earliest time a counted bucket of theirs leaves (-1: none)
	used         []int
}

// maxFairClients bounds the clients whose usage is kept.
const maxFairClients = 10_000

// fairBuckets is the number of buckets a window is cut in; a bucket
// leaves the window when its end does, so a window overlaps one more
// (fairSlots are kept).
const (
	fairBuckets = 10
	fairSlots   = fairBuckets + 1
)

type clientUse struct {
	last int64  // nanoseconds since base of its last search or ask
	gen  uint64 // the active list's generation it is in
	// per window: counts by bucket, the start of the bucket each count is
	// of, and the time of its last search (the bucket leaves the window
	// when that search does)
	counts [][fairSlots]int32
	starts [][fairSlots]int64
	lasts  [][fairSlots]int64
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
	return &Fair{base: time.Now(), windows: ws, longest: longest, shortest: shortest, lend: shortest / 4,
		capacity: capacity, clients: make(map[string]*clientUse), all: newClientUse(len(ws)),
		gen: 1, levels: make([]levels, len(ws))}
}

// WithBase counts f's buckets from base, the caller's clock reading now
// (default: time.Now when f was made), and returns f. Call it before f is
// used.
func (f *Fair) WithBase(base time.Time) *Fair {
	f.base = base
	return f
}

// WithLend lends the newcomer's seat once a window starts to free within
// d (at most a quarter of the shortest window, the default; 0 never
// lends it), and returns f. A caller whose searches wait for a slot at
// most some time passes less than that: a newcomer is then served in
// time. Call it before f is used.
func (f *Fair) WithLend(d time.Duration) *Fair {
	f.lend = max(min(d, f.shortest/4), 0)
	return f
}

// used returns the client's searches within window i at t, and the
// earliest time one of its counted buckets leaves the window (-1 when
// none is counted). A bucket leaves when its last search does: never
// before the instances free that search, and with it when the bucket's
// searches came at once.
func (f *Fair) used(u *clientUse, i int, t int64) (n int, frees int64) {
	per := int64(f.windows[i].Per)
	frees = -1
	for b := range fairSlots {
		if end := u.lasts[i][b] + per; u.counts[i][b] > 0 && end > t {
			n += int(u.counts[i][b])
			if frees < 0 || end < frees {
				frees = end
			}
		}
	}
	return n, frees
}

// activeLocked lists the clients that searched within the shortest
// window again when the list is a second old (listing walks every
// client), and returns how many it holds.
func (f *Fair) activeLocked(t int64) int {
	if f.listed && t-f.listedAt < int64(time.Second) && t >= f.listedAt {
		return len(f.active)
	}
	f.gen++
	clear(f.active)
	f.active = f.active[:0]
	for _, u := range f.clients {
		if t-u.last < int64(f.shortest) {
			u.gen = f.gen
			f.active = append(f.active, u)
		}
	}
	f.listed, f.listedAt = true, t
	return len(f.active)
}

// levelsLocked brings f.levels up to t: for each window, the use of
// every active client, sorted. It is read again from every client only
// after a new list of active clients, a bucket's end or one leaving; a
// search or a newcomer changes it in place (changeLocked).
func (f *Fair) levelsLocked(t int64) {
	for i, w := range f.windows {
		lv := &f.levels[i]
		if f.current(i, t) {
			continue
		}
		lv.used, lv.until = lv.used[:0], -1
		for _, u := range f.active {
			n, frees := f.used(u, i, t)
			lv.used = append(lv.used, n)
			lv.until = earlier(lv.until, frees)
		}
		slices.Sort(lv.used)
		lv.ok, lv.version, lv.gen, lv.tick = true, f.version, f.gen, floorDiv(t, int64(w.Per)/fairBuckets)
	}
}

// owed is what the clients whose sorted uses are used, those below mine,
// need to reach level (those at mine or above are not overtaken by a
// client at mine: one of a tie goes first).
func owed(used []int, mine, level int) (n int) {
	for _, u := range used {
		if u >= mine || u >= level {
			break
		}
		n += level - u
	}
	return n
}

// seatAndShare are a window's seat for a newcomer and each active
// client's share, for capacity c among n active clients: a third of the
// window shared by the active clients, at least 1, and the rest split
// evenly, at least 1.
func seatAndShare(c, n int) (seat, share int) {
	seat = max(c/(3*n), 1)
	return seat, max((c-seat)/n, 1)
}

// Allowed reports whether client may take one more public search at now;
// when not, it returns the earliest time the rules let it in, as the
// others' use stands now.
func (f *Fair) Allowed(client string, now time.Time) (bool, time.Time) {
	if f == nil || client == "" || len(f.windows) == 0 {
		return true, now
	}
	pub := f.capacity() // before the lock: it may ask the pool
	t := int64(now.Sub(f.base))
	f.mu.Lock()
	defer f.mu.Unlock()
	u, n, ok := f.allowedLocked(client, t, pub)
	if ok {
		return true, now
	}
	return false, now.Add(time.Duration(f.nextLocked(u, t, n, pub) - t))
}

// allowedLocked is Allowed's rule at t, with pub public instances: client's
// usage, the number of active clients and whether it may take one more.
func (f *Fair) allowedLocked(client string, t int64, pub int) (u *clientUse, n int, ok bool) {
	u = f.seenLocked(client, t)
	n = f.activeLocked(t)
	f.levelsLocked(t)
	return u, n, f.allows(u, t, n, pub)
}

// allows reports whether u may take one more search at t, among n active
// clients, with pub public instances; the others' use is f.levels.
func (f *Fair) allows(u *clientUse, t int64, n, pub int) bool {
	for i, w := range f.windows {
		c := pub * w.Max
		if c <= 0 {
			continue
		}
		seat, share := seatAndShare(c, n)
		mine, _ := f.used(u, i, t)
		// f.levels holds u too, at its use then or more: never below mine.
		need := owed(f.levels[i].used, mine, min(share, mine+1))
		all, frees := f.used(&f.all, i, t)
		if mine > 0 && (frees < 0 || frees-t > int64(f.lend)) {
			need += seat // not lent
		}
		if need > 0 && c-all-1 < need {
			return false
		}
	}
	return true
}

// nextLocked is the earliest time after t at which u may take a search,
// as the others' use stands at t: the rules change only when a bucket
// (u's or everyone's) leaves a window, or lend before.
func (f *Fair) nextLocked(u *clientUse, t int64, n, pub int) int64 {
	var buf [2 * 2 * 2 * fairSlots]int64 // two windows' times, on the stack
	at := buf[:0]
	for i, w := range f.windows {
		for _, x := range []*clientUse{u, &f.all} {
			for b := range fairSlots {
				if x.counts[i][b] == 0 {
					continue
				}
				end := x.lasts[i][b] + int64(w.Per)
				for _, c := range []int64{end, end - int64(f.lend)} {
					if c > t {
						at = append(at, c)
					}
				}
			}
		}
	}
	slices.Sort(at)
	for _, c := range slices.Compact(at) {
		if f.allows(u, c, n, pub) {
			return c
		}
	}
	// Past every bucket it has used nothing: nothing holds it then.
	return t + int64(f.longest) + int64(f.longest)/fairBuckets
}

// Take counts one public search of client at now.
func (f *Fair) Take(client string, now time.Time) {
	if f == nil || client == "" || len(f.windows) == 0 {
		return
	}
	t := int64(now.Sub(f.base))
	f.mu.Lock()
	defer f.mu.Unlock()
	f.takeLocked(f.seenLocked(client, t), t)
}

// TakeIfAllowed counts one public search of client at now when Allowed
// would say yes, in one step: concurrent searches of one client cannot all
// pass the check before any is counted. It reports whether it counted.
func (f *Fair) TakeIfAllowed(client string, now time.Time) bool {
	if f == nil || client == "" || len(f.windows) == 0 {
		return true
	}
	pub := f.capacity() // before the lock: it may ask the pool
	t := int64(now.Sub(f.base))
	f.mu.Lock()
	defer f.mu.Unlock()
	u, _, ok := f.allowedLocked(client, t, pub)
	if ok {
		f.takeLocked(u, t)
	}
	return ok
}

// Untake gives back a search TakeIfAllowed (or Take) counted at taken,
// which was not sent after all (the shared budget refused it).
func (f *Fair) Untake(client string, taken time.Time) {
	if f == nil || client == "" || len(f.windows) == 0 {
		return
	}
	t := int64(taken.Sub(f.base))
	f.mu.Lock()
	defer f.mu.Unlock()
	u := f.clients[client]
	if u == nil { // evicted since: nothing of it left to give back
		return
	}
	f.changeLocked(u, t, true, func() {
		f.uncount(u, t)
		f.uncount(&f.all, t)
	})
}

func (f *Fair) takeLocked(u *clientUse, t int64) {
	f.changeLocked(u, t, true, func() {
		f.count(u, t)
		f.count(&f.all, t)
	})
}

// changeLocked runs change, which changes u's use at t, and counts a new
// version of the others' use: the levels current at t follow u's change
// in place (listed: u was in them), the others are read again when next
// needed.
func (f *Fair) changeLocked(u *clientUse, t int64, listed bool, change func()) {
	var buf [4]int
	from := buf[:0]
	for i := range f.windows {
		n := -2 // not current: left to be read again
		if f.current(i, t) {
			n = -1 // not in them yet
			if listed {
				n, _ = f.used(u, i, t)
			}
		}
		from = append(from, n)
	}
	change()
	f.version++
	for i, n := range from {
		if n == -2 {
			continue
		}
		to, frees := f.used(u, i, t)
		f.levels[i].replace(n, to)
		f.levels[i].until = earlier(f.levels[i].until, frees)
		f.levels[i].version = f.version
	}
}

// current reports whether f.levels[i] holds the active clients' use at t.
func (f *Fair) current(i int, t int64) bool {
	lv := &f.levels[i]
	tick := floorDiv(t, int64(f.windows[i].Per)/fairBuckets)
	return lv.ok && lv.version == f.version && lv.gen == f.gen && lv.tick == tick && (lv.until < 0 || t < lv.until)
}

// earlier is the earlier of two times, -1 standing for none.
func earlier(a, b int64) int64 {
	if a < 0 || (b >= 0 && b < a) {
		return b
	}
	return a
}

// replace changes one use in lv from from (-1: none) to to, kept sorted.
func (lv *levels) replace(from, to int) {
	if i, ok := slices.BinarySearch(lv.used, from); ok && from >= 0 {
		lv.used = slices.Delete(lv.used, i, i+1)
	}
	i, _ := slices.BinarySearch(lv.used, to)
	lv.used = slices.Insert(lv.used, i, to)
}

// seenLocked returns client's usage, made when it has none, and counts it
// active at t: a client that asks is active as one that searched, so
// that a newcomer waiting for its first search is owed its level too.
func (f *Fair) seenLocked(client string, t int64) *clientUse {
	u := f.clients[client]
	if u == nil {
		if len(f.clients) >= maxFairClients {
			f.evictLocked(t)
		}
		u = new(clientUse)
		*u = newClientUse(len(f.windows))
		f.clients[client] = u
	}
	if u.last < t || u.last == 0 {
		u.last = t
	}
	if f.listed && u.gen != f.gen {
		f.changeLocked(u, t, false, func() {
			u.gen = f.gen
			f.active = append(f.active, u)
		})
	}
	return u
}

func newClientUse(windows int) clientUse {
	return clientUse{counts: make([][fairSlots]int32, windows), starts: make([][fairSlots]int64, windows),
		lasts: make([][fairSlots]int64, windows)}
}

// floorDiv is a / b rounded down (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// count adds one search at t to u's buckets.
func (f *Fair) count(u *clientUse, t int64) {
	for i := range f.windows {
		b, s := f.bucket(i, t)
		if u.starts[i][b] != s {
			u.starts[i][b], u.counts[i][b], u.lasts[i][b] = s, 0, t
		}
		u.counts[i][b]++
		u.lasts[i][b] = max(u.lasts[i][b], t)
	}
}

// bucket is the slot of window i's buckets that t falls in, and the start
// of that bucket.
func (f *Fair) bucket(i int, t int64) (slot int, start int64) {
	width := int64(f.windows[i].Per) / fairBuckets
	q := floorDiv(t, width)
	return int((q%fairSlots + fairSlots) % fairSlots), q * width
}

// uncount takes back one search counted at t from u's buckets, if its
// bucket is still the one it was counted in. The bucket's last search
// stays as it was: at worst it leaves the window a little late.
func (f *Fair) uncount(u *clientUse, t int64) {
	for i := range f.windows {
		if b, s := f.bucket(i, t); u.starts[i][b] == s && u.counts[i][b] > 0 {
			u.counts[i][b]--
		}
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
