package pool

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/searxgate/searxgate/internal/clock"
)

// EWMA weights: the weight of the newest sample.
const (
	// latencyAlpha: a new latency moves the average 30% of the way, so an
	// instance that turned slow is trusted less within 2-3 searches. The
	// first measured latency replaces the prior outright.
	latencyAlpha = 0.3
	// failureAlpha: one refusal or failure lifts a clean instance's
	// failure EWMA to 0.25 (score x1.75 at the default penalty); each
	// good answer keeps 75% of it.
	failureAlpha = 0.25
	// minLatencyMS floors the latency in the score, so a 0 ms sample
	// cannot cancel the failure penalty.
	minLatencyMS = 1.0
)

// never is the mono time of something that did not happen.
const never = math.MinInt64

// instance is what the pool knows about one candidate beyond its slot.
// Every field is guarded by Pool.mu.
type instance struct {
	url string
	// seq orders instances by addition: ties in score, export order, and
	// the operator's order under PrimaryBackup.
	seq uint64
	// idx is the instance's index in Pool.list and Pool.slots; -1 once
	// removed.
	idx  int
	tier Tier
	// epoch changes whenever the circuit opens or the learned state is
	// replaced; a lease taken in an older epoch is stale: its outcome
	// feeds the averages and counters but not the circuit or the streaks.
	epoch uint32

	priorMS   float64
	seededAt  int64 // mono
	measured  bool
	latencyMS float64
	failure   float64

	successes, failures, refusals, softs, cancelled, excused uint64

	consecFail, consecSoft int
	trips                  int
	cooldown               time.Duration
	hasOutcome             bool
	lastOutcome            Kind
	lastReason             Reason

	// q is what its answers taught of their quality (nil: nothing yet);
	// thinMS the score's thin term computed from it at the last Learn or
	// Sweep.
	q      *quality
	thinMS float64
}

// slot is the part of an instance that ranking reads, kept in one compact
// array so that a Checkout over thousands of candidates stays in cache.
// Every field is guarded by Pool.mu.
type slot struct {
	score    float64 // latency * (1 + penalty*failure), lower is better
	until    int64   // mono end of the cooldown, while circuit is Open
	used     int64   // mono time of the last checkout; never if none
	seq      uint64  // instance.seq
	inFlight int32
	maxIF    int32 // leases allowed out at once: Config.MaxInFlight, or OwnMaxInFlight for an own instance
	circuit  Circuit
	disabled bool
	trialOut bool // HalfOpen only: the one trial lease is out
	own      bool
}

// Pool is the learned state of every candidate instance: ranking, circuit
// breakers, leases and events. It is safe for concurrent use.
type Pool struct {
	cfg     Config
	clock   clock.Clock
	onEvent func(Event)
	onFree  atomic.Pointer[func()] // SetOnFree's; nil: none
	maxIF   int32                  // a public instance's cap on leases out at once (MaxInt32 = unlimited)
	ownIF   int32                  // an own instance's
	// epoch is the pool's zero of mono time: internal times are
	// nanoseconds since epoch (monotonic when the clock gives a monotonic
	// reading), wall-clock only at the edges.
	epoch time.Time

	// mu guards list, slots, byURL, removed, nextSeq and every instance's
	// and lease's mutable fields.
	mu      sync.RWMutex
	list    []*instance
	slots   []slot
	byURL   map[string]*instance
	removed map[string]struct{} // operator removals Seed must not undo
	nextSeq uint64

	// randMu guards rnd (a *rand.Rand is not safe for concurrent use);
	// taken after mu, never before it.
	randMu sync.Mutex
	rnd    *rand.Rand

	// checkoutHook, set by tests only, sees every instance Checkout is
	// about to reserve, under mu, before it is reserved.
	checkoutHook func(in *instance, s *slot, nowM int64)
}

// New returns an empty pool tuned by cfg (zero fields mean defaults).
func New(cfg Config) *Pool {
	cfg = cfg.withDefaults()
	p := &Pool{
		cfg:     cfg,
		clock:   cfg.Clock,
		onEvent: cfg.OnEvent,
		rnd:     cfg.Rand,
		byURL:   make(map[string]*instance),
		removed: make(map[string]struct{}),
	}
	p.maxIF, p.ownIF = math.MaxInt32, math.MaxInt32
	if cfg.MaxInFlight > 0 {
		p.maxIF = int32(cfg.MaxInFlight)
	}
	if cfg.OwnMaxInFlight > 0 {
		p.ownIF = int32(cfg.OwnMaxInFlight)
	}
	p.epoch = p.clock.Now()
	return p
}

// capOf is the in-flight cap of an own or a public instance.
func (p *Pool) capOf(own bool) int32 {
	if own {
		return p.ownIF
	}
	return p.maxIF
}

// Config returns the pool's configuration with its defaults filled in.
func (p *Pool) Config() Config { return p.cfg }

// Len returns the number of candidates.
func (p *Pool) Len() int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return len(p.list)
}

// PublicLen returns the number of public instances that are not
// disabled: what the politeness budgets of the public pool add up over.
func (p *Pool) PublicLen() int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	n := 0
	for i := range p.slots {
		if s := &p.slots[i]; !s.own && !s.disabled {
			n++
		}
	}
	return n
}

// mono converts a clock time to nanoseconds since the pool's epoch.
func (p *Pool) mono(t time.Time) int64 {
	if t.IsZero() {
		return never
	}
	d := int64(t.Sub(p.epoch))
	if d == never {
		d++ // saturated far past: still a time, not "never"
	}
	return d
}

// wall converts a mono time back to a wall-clock time without a monotonic
// reading; never becomes the zero time.
func (p *Pool) wall(m int64) time.Time {
	if m == never {
		return time.Time{}
	}
	return p.epoch.Add(time.Duration(m)).Round(0)
}

func (p *Pool) emit(evs []Event) {
	if p.onEvent == nil {
		return
	}
	for i := range evs {
		p.onEvent(evs[i])
	}
}

// add creates a candidate; mu must be held for writing.
func (p *Pool) add(url string, tier Tier) *instance {
	p.nextSeq++
	in := &instance{url: url, seq: p.nextSeq, idx: len(p.list), tier: tier, priorMS: durMS(p.cfg.Prior), seededAt: never}
	p.list = append(p.list, in)
	p.slots = append(p.slots, slot{used: never, seq: in.seq, own: tier == Own, maxIF: p.capOf(tier == Own)})
	p.byURL[url] = in
	p.rescore(in)
	return in
}

// drop removes a candidate; mu must be held for writing. Leases still out
// on it become no-ops.
func (p *Pool) drop(in *instance) {
	last := len(p.list) - 1
	if in.idx != last {
		moved := p.list[last]
		p.list[in.idx] = moved
		p.slots[in.idx] = p.slots[last]
		moved.idx = in.idx
	}
	p.list[last] = nil
	p.list = p.list[:last]
	p.slots = p.slots[:last]
	delete(p.byURL, in.url)
	in.idx = -1
}

// rescore recomputes the instance's score (doc.go, "Ranking"); mu must be
// held for writing.
func (p *Pool) rescore(in *instance) {
	lat := in.priorMS
	if in.measured {
		lat = in.latencyMS
	}
	if !(lat >= minLatencyMS) { // also catches NaN
		lat = minLatencyMS
	}
	p.slots[in.idx].score = lat*(1+p.cfg.FailurePenalty*in.failure) + in.thinMS
}

// Add makes url a candidate of the given tier. It is idempotent; adding an
// existing public instance as Own makes it the operator's (last in the
// operator's order) and never demotes an Own one. It also lifts an earlier
// Remove of url. An empty url is ignored.
func (p *Pool) Add(url string, tier Tier) {
	if url == "" {
		return
	}
	if tier > Own {
		tier = Public
	}
	now := p.clock.Now()
	var evs [1]Event
	n := 0
	p.mu.Lock()
	delete(p.removed, url)
	in := p.byURL[url]
	switch {
	case in == nil:
		p.add(url, tier)
		evs[0] = Event{Instance: url, At: now, Reason: ReasonAdded}
		n = 1
	case tier == Own && in.tier != Own:
		in.tier = Own
		p.nextSeq++
		in.seq = p.nextSeq
		s := &p.slots[in.idx]
		s.seq, s.own, s.maxIF = in.seq, true, p.ownIF
		c := p.circuitAt(s, p.mono(now))
		evs[0] = Event{Instance: url, From: c, To: c, At: now, Reason: ReasonAdded}
		n = 1
	}
	p.mu.Unlock()
	p.emit(evs[:n])
}

// Remove forgets url and everything learned about it, and keeps Seed from
// adding it back until Add. Leases still out on it become no-ops. It
// reports whether url was a candidate.
func (p *Pool) Remove(url string) bool {
	now := p.clock.Now()
	p.mu.Lock()
	p.removed[url] = struct{}{}
	in := p.byURL[url]
	var c Circuit
	if in != nil {
		c = p.circuitAt(&p.slots[in.idx], p.mono(now))
		p.drop(in)
	}
	p.mu.Unlock()
	if in == nil {
		return false
	}
	p.emit([]Event{{Instance: url, From: c, To: c, At: now, Reason: ReasonRemoved}})
	return true
}

// Enable lets url be checked out again: it clears the disabled flag and any
// cooldown, and closes the circuit; the outcomes of leases already out
// still count but no longer move the circuit. It reports whether url is a
// candidate.
func (p *Pool) Enable(url string) bool {
	return p.change(url, ReasonEnabled, func(in *instance, s *slot, nowM int64) (from, to Circuit) {
		from = p.circuitAt(s, nowM)
		s.disabled = false
		s.circuit, s.until, s.trialOut = Closed, 0, false
		in.trips, in.consecFail, in.consecSoft, in.cooldown = 0, 0, 0, 0
		in.epoch++ // the operator's word: leases out no longer move the circuit
		return from, Closed
	})
}

// Disable keeps url from being checked out, keeping what was learned about
// it. Leases already out still record. It reports whether url is a
// candidate.
func (p *Pool) Disable(url string) bool {
	return p.change(url, ReasonDisabled, func(_ *instance, s *slot, nowM int64) (from, to Circuit) {
		s.disabled = true
		c := p.circuitAt(s, nowM)
		return c, c
	})
}

// change applies an operator's change to url's instance under the lock and
// reports it as an event with reason; f returns the circuit before and
// after. It reports whether url is a candidate.
func (p *Pool) change(url string, reason Reason, f func(in *instance, s *slot, nowM int64) (from, to Circuit)) bool {
	now := p.clock.Now()
	p.mu.Lock()
	in := p.byURL[url]
	if in == nil {
		p.mu.Unlock()
		return false
	}
	from, to := f(in, &p.slots[in.idx], p.mono(now))
	p.mu.Unlock()
	p.emit([]Event{{Instance: url, From: from, To: to, At: now, Reason: reason}})
	return true
}

// Seed makes priors the directory's candidate set: it adds the new ones as
// Public, sets the prior of every listed instance not measured yet (0 means
// Config.Prior), stamps them seeded now, and removes the Public instances
// absent from the list, except disabled ones (the operator's word is kept).
// Own instances and the learned state of those that stay are untouched.
// URLs the operator removed are not added. An empty list therefore removes
// every public instance: do not seed from a failed fetch.
func (p *Pool) Seed(priors []Prior) {
	now := p.clock.Now()
	nowM := p.mono(now)
	var evs []Event
	p.mu.Lock()
	listed := make(map[string]struct{}, len(priors))
	for _, pr := range priors {
		if pr.URL == "" {
			continue
		}
		if _, gone := p.removed[pr.URL]; gone {
			continue
		}
		listed[pr.URL] = struct{}{}
		in := p.byURL[pr.URL]
		if in == nil {
			in = p.add(pr.URL, Public)
			evs = append(evs, Event{Instance: pr.URL, At: now, Reason: ReasonSeeded})
		}
		in.seededAt = nowM
		if !in.measured {
			in.priorMS = durMS(p.cfg.Prior)
			if pr.Prior > 0 {
				in.priorMS = durMS(pr.Prior)
			}
			p.rescore(in)
		}
	}
	for i := 0; i < len(p.list); {
		in := p.list[i]
		s := &p.slots[i]
		if _, ok := listed[in.url]; ok || in.tier == Own || s.disabled {
			i++
			continue
		}
		c := p.circuitAt(s, nowM)
		evs = append(evs, Event{Instance: in.url, From: c, To: c, At: now, Reason: ReasonUnlisted})
		p.drop(in) // moves the last one to i: look at i again
	}
	p.mu.Unlock()
	p.emit(evs)
}

// forget clears what was learned about in (not its totals unless
// counters); mu must be held for writing. It returns the circuit before.
func (p *Pool) forget(in *instance, nowM int64, counters bool) Circuit {
	s := &p.slots[in.idx]
	from := p.circuitAt(s, nowM)
	in.epoch++
	in.measured, in.latencyMS, in.failure = false, 0, 0
	in.consecFail, in.consecSoft, in.trips, in.cooldown = 0, 0, 0, 0
	in.hasOutcome, in.lastOutcome, in.lastReason = false, 0, ""
	in.q, in.thinMS = nil, 0
	if counters {
		in.successes, in.failures, in.refusals, in.softs, in.cancelled, in.excused = 0, 0, 0, 0, 0, 0
	}
	s.circuit, s.until, s.trialOut, s.used = Closed, 0, false, never
	p.rescore(in)
	return from
}

// Reset forgets everything learned about every instance, counters
// included. The candidates, their tiers, priors and disabled flags, and the
// operator's removals stay; leases out stay counted in in_flight but their
// outcomes no longer move any circuit.
func (p *Pool) Reset() {
	now := p.clock.Now()
	nowM := p.mono(now)
	var evs []Event
	p.mu.Lock()
	for _, in := range p.list {
		if from := p.forget(in, nowM, true); from != Closed {
			evs = append(evs, Event{Instance: in.url, From: from, To: Closed, At: now, Reason: ReasonReset})
		}
	}
	p.mu.Unlock()
	p.emit(evs)
}

// Sweep moves every open circuit whose cooldown ended to half-open, and
// forgets what was learned about Public instances not checked out for
// ForgetAfter (never Own ones, never one with a lease out or a cooldown
// still running). Their counters stay, so metrics stay monotone.
func (p *Pool) Sweep() {
	now := p.clock.Now()
	nowM := p.mono(now)
	forgetAfter := int64(p.cfg.ForgetAfter)
	var evs []Event
	p.mu.Lock()
	for _, in := range p.list {
		s := &p.slots[in.idx]
		if in.q != nil { // thin answers fade: the thin term is recomputed
			in.thinMS = p.thinPenalty(in, nowM)
			p.rescore(in)
		}
		if s.circuit == Open && nowM >= s.until {
			s.circuit, s.trialOut = HalfOpen, false
			evs = append(evs, Event{Instance: in.url, From: Open, To: HalfOpen, At: now, Reason: ReasonCooldownEnded})
		}
		if forgetAfter < 0 || in.tier == Own || s.inFlight > 0 || s.circuit == Open || !learned(in, s) {
			continue
		}
		if s.used != never && nowM-s.used <= forgetAfter {
			continue
		}
		if from := p.forget(in, nowM, false); from != Closed {
			evs = append(evs, Event{Instance: in.url, From: from, To: Closed, At: now, Reason: ReasonForgotten})
		}
	}
	p.mu.Unlock()
	p.emit(evs)
}

// learned reports whether anything about in could be forgotten.
func learned(in *instance, s *slot) bool {
	return in.measured || in.failure != 0 || in.consecFail != 0 || in.consecSoft != 0 || in.q != nil ||
		in.trips != 0 || in.hasOutcome || s.circuit != Closed || s.used != never
}

// Run sweeps every Config().SweepEvery, on a ticker from Config.Clock,
// until ctx ends.
func (p *Pool) Run(ctx context.Context) {
	tick, stop := p.clock.NewTicker(p.cfg.SweepEvery)
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
			p.Sweep()
		}
	}
}

// circuitAt is the circuit as seen at nowM: an Open one whose cooldown
// ended is HalfOpen (the stored state catches up when Checkout or Sweep
// next touches it).
func (p *Pool) circuitAt(s *slot, nowM int64) Circuit {
	if s.circuit == Open && nowM >= s.until {
		return HalfOpen
	}
	return s.circuit
}

func durMS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// ReasonShared prefixes the reason of a circuit opened by OpenUntil, for
// the logs: what another searxgate sharing this one's egress learned (a
// refusal, a failure). Such an event's Source is SourceShared.
const ReasonShared Reason = "shared:"

// OpenUntil opens url's circuit until then, for reason: a refusal another
// searxgate of the same egress met (its Retry-After or cooldown). It
// changes nothing, and reports false, when url is not a candidate, when
// until is not in the future, or when the circuit is already open at
// least that long. Otherwise leases out become stale, as when a refusal
// opens the circuit here; the averages, the streaks and the doubling of
// the local cooldown are not touched (the refusal was not this process's).
// The event's reason is ReasonShared + reason, its source SourceShared.
func (p *Pool) OpenUntil(url string, until time.Time, reason Reason) bool {
	now := p.clock.Now()
	nowM := p.mono(now)
	untilM := nowM + int64(until.Sub(now)) // a wall-clock until, as a span from now
	p.mu.Lock()
	in := p.byURL[url]
	if in == nil || !until.After(now) {
		p.mu.Unlock()
		return false
	}
	s := &p.slots[in.idx]
	from := p.circuitAt(s, nowM)
	if from == Open && s.until >= untilM {
		p.mu.Unlock()
		return false
	}
	openFor(in, s, nowM, min(time.Duration(untilM-nowM), p.cfg.MaxCooldown))
	d := in.cooldown
	p.mu.Unlock()
	p.emit([]Event{{Instance: url, From: from, To: Open, Cooldown: d, At: now, Reason: ReasonShared + reason, Source: SourceShared}})
	return true
}
