package pool

import (
	"math"
	"slices"
	"time"
)

// cand is one candidate in a ranking: ordered by major, then minor, then
// seq (the order of addition), lowest first.
type cand struct {
	major uint8
	minor float64
	seq   uint64
	idx   int
}

func (a cand) less(b cand) bool {
	if a.major != b.major {
		return a.major < b.major
	}
	if a.minor != b.minor {
		return a.minor < b.minor
	}
	return a.seq < b.seq
}

func cmpCand(a, b cand) int {
	switch {
	case a.less(b):
		return -1
	case b.less(a):
		return 1
	}
	return 0
}

// Ranking classes (cand.major); majorOwn is used under PrimaryBackup only.
const (
	majorOwn    = 0 // PrimaryBackup: the operator's instances, in order
	majorRested = 2 // ranked by score
	majorRecent = 3 // used within MinInterval: least recently used first
	majorClosed = 8 // Snapshot only: added to the unavailable ones
)

// insertionLimit is the largest count ranked by insertion into a small
// sorted buffer; larger ones collect every candidate and sort.
const insertionLimit = 32

// Why says why the pool would not hand an instance out now: its own part
// of whether a search may go there. The proxy adds its terms and budget.
type Why uint8

// The pool's reasons, the lasting one first.
const (
	WhyNone        Why = iota // it may be handed out
	WhyDisabled               // the operator disabled it
	WhyCircuitOpen            // its circuit is open and cooling down
	WhyTrialOut               // half open, its one trial lease out
	WhyInFlight               // closed, as many leases out as it may have
)

// why is the pool's one rule for handing s out at nowM: Checkout, Rank,
// FreeAt, Snapshot and Stats all ask it. An open circuit whose cooldown
// ended has its trial free.
func (s *slot) why(nowM int64) Why {
	if s.disabled {
		return WhyDisabled
	}
	switch s.circuit {
	case Closed:
		if s.inFlight >= s.maxIF {
			return WhyInFlight
		}
	case Open:
		if nowM < s.until {
			return WhyCircuitOpen
		}
	default: // HalfOpen
		if s.trialOut {
			return WhyTrialOut
		}
	}
	return WhyNone
}

// available reports whether s may be handed out at nowM.
func (p *Pool) available(s *slot, nowM int64) bool { return s.why(nowM) == WhyNone }

// baseKey is s's ranking key without jitter.
func (p *Pool) baseKey(s *slot, nowM int64, i int) cand {
	c := cand{major: majorRested, minor: s.score, seq: s.seq, idx: i}
	if s.own && p.cfg.Strategy == PrimaryBackup {
		c.major, c.minor = majorOwn, 0
		return c
	}
	if mi := int64(p.cfg.MinInterval); mi > 0 && s.used != never && nowM-s.used < mi {
		c.major, c.minor = majorRecent, float64(s.used)
	}
	return c
}

// pick ranks the available candidates at nowM and returns up to count of
// them (all when count <= 0), best first, in buf's storage. skip is asked
// only about candidates that would make the cut. mu must be held (read is
// enough: pick changes nothing but the random source).
//
// This loop is the hot path of every search: it reads one compact slot
// per candidate and rejects most of them on one float comparison against
// the current cut.
func (p *Pool) pick(nowM int64, count int, skip func(string) bool, buf []cand) []cand {
	buf = buf[:0]
	jitter := p.cfg.Jitter
	if jitter == 0 && p.cfg.MinInterval == 0 && p.cfg.Strategy == EWMA && count > 0 && count <= insertionLimit {
		return p.pickByScore(nowM, count, skip, buf)
	}
	if jitter > 0 {
		p.randMu.Lock()
		defer p.randMu.Unlock()
	}
	all := count <= 0 || count > insertionLimit
	primary := p.cfg.Strategy == PrimaryBackup
	recentAfter := int64(math.MaxInt64) // used later than this: recent
	if mi := int64(p.cfg.MinInterval); mi > 0 {
		recentAfter = nowM - mi
	}
	lo := 1 - jitter // a rested score times lo: the best it can draw
	// The worst kept, once full: anything not better is rejected on the
	// key alone, before its availability is looked at.
	cutMajor, cutMinor, cutSeq := uint8(math.MaxUint8), math.Inf(1), uint64(math.MaxUint64)
	slots := p.slots
	for i := range slots {
		s := &slots[i]
		major, minor := uint8(majorRested), s.score
		if primary && s.own {
			major, minor = majorOwn, 0
		} else if s.used > recentAfter {
			major, minor = majorRecent, float64(s.used)
		}
		if major > cutMajor {
			continue
		}
		if major == cutMajor {
			m := minor
			if major == majorRested {
				m *= lo
			}
			if m > cutMinor || (m == cutMinor && s.seq > cutSeq) {
				continue
			}
		}
		buf = p.consider(buf, count, all, i, major, minor, nowM, skip)
		if !all && len(buf) == count {
			c := &buf[count-1]
			cutMajor, cutMinor, cutSeq = c.major, c.minor, c.seq
		}
	}
	if all {
		slices.SortFunc(buf, cmpCand)
		if count > 0 && len(buf) > count {
			buf = buf[:count]
		}
	}
	return buf
}

// consider adds slot i to buf when it is available, makes the cut with its
// jitter drawn, and is not skipped; randMu must be held when jitter is on.
func (p *Pool) consider(buf []cand, count int, all bool, i int, major uint8, minor float64, nowM int64, skip func(string) bool) []cand {
	s := &p.slots[i]
	if s.why(nowM) != WhyNone {
		return buf
	}
	if j := p.cfg.Jitter; j > 0 && major == majorRested {
		minor *= 1 + j*(2*p.rnd.Float64()-1)
	}
	c := cand{major: major, minor: minor, seq: s.seq, idx: i}
	if !all && len(buf) == count && !c.less(buf[count-1]) {
		return buf
	}
	if skip != nil && skip(p.list[i].url) {
		return buf
	}
	if all {
		return append(buf, c)
	}
	return insert(buf, count, c)
}

// pickOwn is pick among the own instances only: the operator's order
// under PrimaryBackup, else by score. Own instances are few: no fast path.
func (p *Pool) pickOwn(nowM int64, count int, skip func(string) bool, buf []cand) []cand {
	buf = buf[:0]
	for i := range p.slots {
		s := &p.slots[i]
		if !s.own || !p.available(s, nowM) || (skip != nil && skip(p.list[i].url)) {
			continue
		}
		c := p.baseKey(s, nowM, i)
		if len(buf) < count || c.less(buf[len(buf)-1]) {
			buf = insert(buf, count, c)
		}
	}
	return buf
}

// pickByScore is pick for the default configuration (no jitter, no
// MinInterval, EWMA, a small count), where the key is the score alone (then
// the order of addition): a tighter loop, since every search runs it.
func (p *Pool) pickByScore(nowM int64, count int, skip func(string) bool, buf []cand) []cand {
	cutScore, cutSeq := math.Inf(1), uint64(math.MaxUint64)
	slots := p.slots
	for i := range slots {
		s := &slots[i]
		if s.score > cutScore || (s.score == cutScore && s.seq > cutSeq) {
			continue
		}
		if s.why(nowM) != WhyNone {
			continue
		}
		if skip != nil && skip(p.list[i].url) {
			continue
		}
		buf = insert(buf, count, cand{major: majorRested, minor: s.score, seq: s.seq, idx: i})
		if len(buf) == count {
			cutScore, cutSeq = buf[count-1].minor, buf[count-1].seq
		}
	}
	return buf
}

// insert puts c in order into buf, which holds at most count candidates,
// best first, dropping the worst when full. c must beat the worst of a
// full buf.
func insert(buf []cand, count int, c cand) []cand {
	j := len(buf)
	if j < count {
		buf = append(buf, c)
	} else {
		j = count - 1
	}
	for j > 0 && c.less(buf[j-1]) {
		buf[j] = buf[j-1]
		j--
	}
	buf[j] = c
	return buf
}

// Rank returns the URLs Checkout would hand out now, best first, without
// reserving them: up to count, or every available one when count <= 0.
// With Jitter on, each call draws its own jitter, so two calls (or a Rank
// and a Checkout) may differ. skip must not call the pool.
func (p *Pool) Rank(count int, skip func(url string) bool) []string {
	nowM := p.mono(p.clock.Now())
	var arr [8]cand
	p.mu.RLock()
	cs := p.pick(nowM, count, skip, arr[:])
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = p.list[c.idx].url
	}
	p.mu.RUnlock()
	return out
}

// Free says when one candidate could next be checked out, as far as the
// pool knows: now when it is available, the end of its cooldown when its
// circuit is open, and now too when it is only busy (its in-flight cap is
// full, or its half-open trial is out), since a lease coming back frees it
// at a time nobody knows in advance.
type Free struct {
	URL  string
	At   time.Time
	Own  bool
	Busy bool // full or its trial is out: it frees when a lease comes back
	// Latency is what a search there is expected to take: its latency
	// average; 0 until it is measured (a prior is only a guess).
	Latency time.Duration
}

// FreeAt lists, for every candidate that is not disabled and that skip
// does not rule out, when it could next be checked out (see Free). A
// caller that found no instance available uses it to tell a search that
// may wait for one from a search that cannot be served in time. skip runs
// under the pool's read lock: it must be quick and must not call the pool.
func (p *Pool) FreeAt(skip func(url string) bool) []Free {
	now := p.clock.Now()
	nowM := p.mono(now)
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make([]Free, 0, len(p.slots))
	for i := range p.slots {
		s := &p.slots[i]
		if s.disabled || (skip != nil && skip(p.list[i].url)) {
			continue
		}
		f := Free{URL: p.list[i].url, At: now, Own: s.own}
		if in := p.list[i]; in.measured {
			f.Latency = time.Duration(in.latencyMS * float64(time.Millisecond))
		}
		switch s.why(nowM) {
		case WhyCircuitOpen:
			f.At = p.epoch.Add(time.Duration(s.until)) // keeps the monotonic reading, unlike wall
		case WhyTrialOut, WhyInFlight:
			f.Busy = true
		}
		out = append(out, f)
	}
	return out
}
