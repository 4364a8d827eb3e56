package pool

import (
	"math"
	"slices"
	"time"
)

// Health score references: a latency at or under healthFastMS counts as
// fully fast, at or over healthSlowMS as not fast at all.
const (
	healthFastMS = 500.0
	healthSlowMS = 5000.0
)

// health is the 0-100 score for people (see doc.go):
//
//	speed  = clamp((5000 - latency_ms) / 4500, 0, 1)
//	health = round(100 * (0.4*speed + 0.6*(1 - failure_rate)))
//
// halved while half-open, 0 while open or disabled.
func health(latencyMS, failure float64, c Circuit, disabled bool) int {
	if disabled || c == Open {
		return 0
	}
	speed := (healthSlowMS - latencyMS) / (healthSlowMS - healthFastMS)
	speed = min(max(speed, 0), 1)
	f := min(max(failure, 0), 1)
	h := 100 * (0.4*speed + 0.6*(1-f))
	if c == HalfOpen {
		h /= 2
	}
	if math.IsNaN(h) {
		return 0
	}
	return int(math.Round(h))
}

// record is a copy of one instance taken under the read lock, so that
// Snapshot builds its answer after letting go of the lock.
type record struct {
	in instance
	s  slot
	q  QualityState
}

// records copies every instance under the read lock: all that Snapshot
// makes writers wait for.
func (p *Pool) records() []record {
	// Allocate before taking the lock: zeroing the memory is half the cost.
	recs := make([]record, 0, p.Len()+16)
	p.mu.RLock()
	defer p.mu.RUnlock()
	nowM := p.mono(p.clock.Now())
	for i, in := range p.list {
		recs = append(recs, record{in: *in, s: p.slots[i], q: p.qualityState(in.q, nowM)})
	}
	return recs
}

// statsOf is in's stats at nowM with its quality q (qualityState's,
// taken under the lock).
func (p *Pool) statsOf(in *instance, s *slot, q QualityState, nowM int64) Stats {
	c := p.circuitAt(s, nowM)
	st := Stats{
		URL:                 in.url,
		Tier:                in.tier,
		Disabled:            s.disabled,
		Circuit:             c,
		LatencyMS:           in.latency(),
		FailureRate:         in.failure,
		Successes:           in.successes,
		Failures:            in.failures,
		Refusals:            in.refusals,
		Softs:               in.softs,
		Cancelled:           in.cancelled,
		Excused:             in.excused,
		ConsecutiveFailures: in.consecFail,
		ConsecutiveSoft:     in.consecSoft,
		InFlight:            int(s.inFlight),
		TrialOut:            c == HalfOpen && s.trialOut,
		LastReason:          in.lastReason,
		LastUsedAt:          p.wall(s.used),
		PriorMS:             in.priorMS,
		SeededAt:            p.wall(in.seededAt),
		Measured:            in.measured,
		PoolWhy:             s.why(nowM),
		Quality:             q,
		Thin:                q.Fullness < ThinBelow,
	}
	if in.hasOutcome {
		st.LastOutcome = in.lastOutcome.String()
	}
	if s.maxIF != math.MaxInt32 && s.maxIF > 0 {
		st.MaxInFlight = int(s.maxIF)
	}
	if s.circuit != Closed {
		st.CooldownUntil = p.wall(s.until)
	}
	st.Health = health(st.LatencyMS, st.FailureRate, c, s.disabled)
	return st
}

// Stats returns what the pool knows about url; for an unknown url, the
// stats of a fresh candidate.
func (p *Pool) Stats(url string) Stats {
	nowM := p.mono(p.clock.Now())
	p.mu.RLock()
	if in := p.byURL[url]; in != nil {
		st := p.statsOf(in, &p.slots[in.idx], p.qualityState(in.q, nowM), nowM)
		p.mu.RUnlock()
		return st
	}
	p.mu.RUnlock()
	in := instance{url: url, priorMS: durMS(p.cfg.Prior), seededAt: never}
	s := slot{used: never, maxIF: math.MaxInt32}
	return p.statsOf(&in, &s, p.qualityState(nil, nowM), nowM)
}

// Latency is url's latency average and whether an answer measured it
// (false for a url the pool does not hold): Stats' LatencyMS and
// Measured, without copying the rest.
func (p *Pool) Latency(url string) (time.Duration, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	in := p.byURL[url]
	if in == nil || !in.measured {
		return 0, false
	}
	return time.Duration(in.latencyMS * float64(time.Millisecond)), true
}

// Snapshot returns every instance's stats, best first: the available ones
// in the order Rank gives them without jitter, then the unavailable ones
// (full, trial out, open, disabled) by score. It holds the read lock only
// to copy the records.
func (p *Pool) Snapshot() []Stats {
	nowM := p.mono(p.clock.Now())
	recs := p.records()
	keys := make([]cand, len(recs))
	for i := range recs {
		s := &recs[i].s
		k := p.baseKey(s, nowM, i)
		if !p.available(s, nowM) {
			k.major += majorClosed
		}
		keys[i] = k
	}
	slices.SortFunc(keys, cmpCand)
	out := make([]Stats, len(keys))
	for i, k := range keys {
		r := &recs[k.idx]
		out[i] = p.statsOf(&r.in, &r.s, r.q, nowM)
	}
	return out
}

// Export returns everything learned about every instance, with wall-clock
// times, in the order of addition, followed by the operator's removals.
func (p *Pool) Export() []InstanceState {
	nowM := p.mono(p.clock.Now())
	p.mu.RLock()
	out := make([]InstanceState, 0, len(p.list)+len(p.removed))
	for i, in := range p.list {
		s := &p.slots[i]
		st := InstanceState{
			URL:                 in.url,
			Tier:                in.tier,
			Disabled:            s.disabled,
			Circuit:             p.circuitAt(s, nowM),
			CooldownMS:          in.cooldown.Milliseconds(),
			Trips:               in.trips,
			Measured:            in.measured,
			LatencyMS:           in.latencyMS,
			FailureRate:         in.failure,
			PriorMS:             in.priorMS,
			Successes:           in.successes,
			Failures:            in.failures,
			Refusals:            in.refusals,
			Softs:               in.softs,
			Cancelled:           in.cancelled,
			Excused:             in.excused,
			ConsecutiveFailures: in.consecFail,
			ConsecutiveSoft:     in.consecSoft,
			LastReason:          in.lastReason,
			LastUsedAt:          p.wall(s.used),
			SeededAt:            p.wall(in.seededAt),
		}
		if in.hasOutcome {
			st.LastOutcome = in.lastOutcome.String()
		}
		if s.circuit != Closed {
			st.CooldownUntil = p.wall(s.until)
		}
		if in.q != nil {
			qs := p.qualityState(in.q, nowM)
			qs.Fullness = in.q.full // as learned: restore fades it from At
			st.Quality = &qs
		}
		out = append(out, st)
	}
	seqs := make([]uint64, len(p.list))
	for i, in := range p.list {
		seqs[i] = in.seq
	}
	removed := make([]string, 0, len(p.removed))
	for u := range p.removed {
		removed = append(removed, u)
	}
	p.mu.RUnlock()

	idx := make([]int, len(out))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		switch {
		case seqs[a] < seqs[b]:
			return -1
		case seqs[a] > seqs[b]:
			return 1
		}
		return 0
	})
	sorted := make([]InstanceState, 0, len(out)+len(removed))
	for _, i := range idx {
		sorted = append(sorted, out[i])
	}
	slices.Sort(removed)
	for _, u := range removed {
		sorted = append(sorted, InstanceState{URL: u, Removed: true})
	}
	return sorted
}

// Import restores what Export gave, in its order: it adds the instances it
// does not know and replaces the learned state of those it does (leases
// still out on them become stale). A cooldown that ended while the gateway
// was down has ended: that circuit is half-open; an open circuit whose
// cooldown is still running stays open until it ends. Values out of range
// (negative, NaN, unknown names) are brought back to sane ones. Import
// fires no events.
func (p *Pool) Import(states []InstanceState) {
	nowM := p.mono(p.clock.Now())
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range states {
		st := &states[i]
		if st.URL == "" {
			continue
		}
		if st.Removed {
			p.removed[st.URL] = struct{}{}
			if in := p.byURL[st.URL]; in != nil {
				p.drop(in)
			}
			continue
		}
		delete(p.removed, st.URL)
		tier := st.Tier
		if tier > Own {
			tier = Public
		}
		in := p.byURL[st.URL]
		if in == nil {
			in = p.add(st.URL, tier)
		} else if tier == Own && in.tier != Own {
			in.tier = Own
			p.nextSeq++
			in.seq = p.nextSeq
			p.slots[in.idx].seq, p.slots[in.idx].own, p.slots[in.idx].maxIF = in.seq, true, p.ownIF
		}
		p.restore(in, st, nowM)
	}
}

// restore sets in's learned state from st; mu must be held for writing.
func (p *Pool) restore(in *instance, st *InstanceState, nowM int64) {
	s := &p.slots[in.idx]
	in.epoch++
	s.disabled = st.Disabled
	in.priorMS = durMS(p.cfg.Prior)
	if finite(st.PriorMS) && st.PriorMS > 0 {
		in.priorMS = min(st.PriorMS, maxLatencyMS)
	}
	in.measured = st.Measured && finite(st.LatencyMS) && st.LatencyMS >= 0
	in.latencyMS = 0
	if in.measured {
		in.latencyMS = min(st.LatencyMS, maxLatencyMS)
	}
	in.failure = 0
	if finite(st.FailureRate) {
		in.failure = min(max(st.FailureRate, 0), 1)
	}
	in.successes, in.failures, in.refusals = st.Successes, st.Failures, st.Refusals
	in.softs, in.cancelled, in.excused = st.Softs, st.Cancelled, st.Excused
	in.consecFail, in.consecSoft, in.trips = max(st.ConsecutiveFailures, 0), max(st.ConsecutiveSoft, 0), max(st.Trips, 0)
	in.cooldown = 0
	if st.CooldownMS > 0 && st.CooldownMS <= p.cfg.MaxCooldown.Milliseconds() {
		in.cooldown = time.Duration(st.CooldownMS) * time.Millisecond
	}
	var k Kind
	in.hasOutcome = k.UnmarshalText([]byte(st.LastOutcome)) == nil && k != Cancelled
	in.lastOutcome, in.lastReason = k, st.LastReason
	if !in.hasOutcome {
		in.lastOutcome, in.lastReason = 0, ""
	}
	s.used = p.mono(st.LastUsedAt)
	in.seededAt = p.mono(st.SeededAt)

	p.restoreQuality(in, st.Quality, nowM)
	s.trialOut = false
	s.circuit, s.until = Closed, 0
	switch st.Circuit {
	case Open, HalfOpen:
		until := p.mono(st.CooldownUntil)
		// A cooldown longer than MaxCooldown from now was not ours to set.
		if limit := nowM + int64(p.cfg.MaxCooldown); until > limit {
			until = limit
		}
		if until > nowM {
			s.circuit, s.until = Open, until
		} else {
			s.circuit, s.until = HalfOpen, until
		}
	}
	p.rescore(in)
}

// maxLatencyMS bounds imported latencies (an hour), so that no score
// overflows.
const maxLatencyMS = 3_600_000.0

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
