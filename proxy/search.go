package proxy

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy/cache"
	"github.com/searxgate/searxgate/proxy/polite"
	"github.com/searxgate/searxgate/results"
)

// search is one client search on its way upstream: its attempts, hedges,
// deadline and what came back so far. Its methods run on the goroutine of
// the client search; the attempts send their results on results.
type search struct {
	p        *Proxy
	ctx      context.Context
	req      Request
	key      *cache.Key
	start    time.Time // when the client's search began
	deadline time.Time

	results chan attemptResult
	tried   map[string]bool
	log     []Attempt
	starts  []time.Time    // when each attempt of log started
	best    *attemptResult // the best soft answer so far, served when nothing better comes
	empty   *attemptResult // an honest "nothing found", served unless another instance finds something
	// A poor answer (engines down, off-topic) cannot tell whose fault
	// it is: a second answered the same way makes the query at fault
	// (queryFault).
	queryFault bool
	// poor are the poor answers so far that may be the query's (not
	// another query's echoed); agreed is the first of two that were poor
	// the same way (queryFault), nil until two were.
	poor     []attemptResult
	agreed   *attemptResult
	queued   bool      // the search waited in the slot queue (queue.go)
	op       *opinions // decides the owner of the outcomes that cannot tell
	inflight int
	started  int

	// A fan-out search asks up to fanout instances at once and merges
	// their good answers (answers, in the order they came).
	fanout  int
	asked   int // fan-out attempts started, replacements included
	answers []attemptResult

	hedge     <-chan time.Time
	stopHedge func() bool

	why        Stop          // why the search stopped without an answer
	retryAfter time.Duration // when a slot is expected to free, for a refusal
	limited    time.Duration // the client's own limit refused the first attempt: when it may search again

	grace     <-chan time.Time // a fan-out search's answer goes out when it fires
	stopGrace func() bool

	// thin is a thin answer held while a quality hedge asks an instance
	// expected full (quality.go); avoid the instances a search naming
	// engines or a category tries last (nil until its first checkout).
	thin          *attemptResult
	qualityHedges int
	avoid         map[string]bool

	// logs and startsAt hold the first attempt's log and start: a
	// search's own storage, not two allocations more a miss.
	logs     [1]Attempt
	startsAt [1]time.Time
}

// attempt kinds for launch.
type launchKind uint8

const (
	launchFirst   launchKind = iota // the first attempt: waits for a slot within the deadline
	launchRetry                     // after every attempt failed: waits too
	launchHedge                     // a slow attempt's race: only a slot free now
	launchConfirm                   // a second opinion on "nothing found": only a slot free now
	launchFan                       // one more instance of a fan-out: only a slot free now, no extra budget
	launchQuality                   // a thin answer's race for a fuller one: an instance expected full free now
)

// fetch runs the attempts of one search.
func (p *Proxy) fetch(ctx context.Context, req Request, key *cache.Key, start, deadline time.Time) (*Response, error) {
	s := &search{
		p: p, ctx: ctx, req: req, key: key, start: start, deadline: deadline,
		results:   make(chan attemptResult, p.cfg.MaxAttempts+req.Fanout),
		tried:     make(map[string]bool, p.cfg.MaxAttempts+req.Fanout),
		stopHedge: noStop,
		stopGrace: noStop,
		fanout:    max(req.Fanout, 1),
		op:        &opinions{p: p, limit: req.Syntax.Timeout()},
	}
	s.log, s.starts = s.logs[:0], s.startsAt[:0]
	if _, bang := req.Syntax.Bang(); bang {
		s.fanout = 1 // one instance answers a bang: its answer is a redirect
	}
	defer func() { s.stopHedge(); s.stopGrace(); s.op.close() }()
	return s.run()
}

func (s *search) run() (*Response, error) {
	p := s.p
	if !s.launch(launchFirst) {
		return nil, s.noAnswer()
	}
	if s.fanout > 1 {
		// The others only where a slot is free now: asking fewer is said
		// (Response.Fanout), waiting for more is not worth the deadline.
		// (launch sets no hedge timer for a fan-out search.)
		for s.asked < s.fanout && s.launch(launchFan) {
		}
	}
	timeout, stopTimeout := p.timer(s.deadline.Sub(p.now()))
	defer stopTimeout()
	for {
		select {
		case r := <-s.results:
			if res, err, done := s.onResult(r); done {
				return res, err
			}
		case <-s.grace:
			// The first answer's grace is over: what came is merged, the
			// slower ones finish on their own.
			s.drainAnswers()
			return s.merged()
		case <-s.hedge:
			s.hedge = nil
			if s.thin != nil {
				// The fuller answer is late: the thin one goes out now.
				return s.answer(*s.thin)
			}
			if s.started < p.cfg.MaxAttempts && s.inflight < 3 {
				s.launch(launchHedge)
			}
		case <-timeout:
			s.drainAnswers()
			if len(s.answers) > 0 {
				return s.merged()
			}
			if a := s.fallback(); a != nil {
				return s.answer(*a)
			}
			now := p.now()
			for i := range s.log {
				if s.log[i].Outcome == "running" {
					s.log[i].Outcome, s.log[i].Reason = pool.Failed.String(), pool.Reason(detect.Timeout)
					s.log[i].ElapsedMS = now.Sub(s.starts[i]).Milliseconds()
				}
			}
			s.why = StopDeadline
			return nil, s.noAnswer()
		case <-s.ctx.Done():
			return nil, s.ctx.Err()
		}
	}
}

func (s *search) noAnswer() error {
	if s.why == StopCancelled && s.ctx.Err() != nil {
		return s.ctx.Err()
	}
	if s.limited > 0 && len(s.log) == 0 {
		s.p.metrics.limited.Add(1)
		return &LimitedError{RetryAfter: s.limited}
	}
	s.explain()
	if s.why == StopNoInstance && len(s.log) > 0 {
		// Every instance there is was asked: said as what they did.
		s.why = StopAttempts
	}
	if offline(s.log) {
		s.why = StopNetwork
	} else if s.op.limit > 0 && s.op.limit >= s.deadline.Sub(s.start) && timedOut(s.log) {
		// "<6" where the deadline is shorter: SearXNG was told to wait
		// longer than searxgate could.
		s.why = StopQueryTimeout
	}
	if s.retryAfter == 0 && s.why != StopShutdown && s.why != StopQuery && s.why != StopQueryTimeout {
		// Nothing said yet when a slot frees (every instance was tried, or
		// none could be): the earliest the pool knows of, tried instances
		// included (a cooldown's end, a budget window's).
		now := s.p.now()
		if sl, ok, _ := s.p.earliest(s.p.recs.Candidates(), s.req.Client, nil, now); ok {
			s.retryAfter = polite.RetryAfter(sl.At, now)
		}
	}
	return &NoAnswerError{Why: s.why, Tried: s.log, RetryAfter: s.retryAfter, Waiting: s.p.cooling(s.tried, maxWaiting)}
}

// maxWaiting is how many cooling instances a search's error names.
const maxWaiting = 4

// cooling lists up to n instances not in tried whose circuit is open,
// the operator's own first, as skipped attempts that say the outcome
// that opened it and until when.
func (p *Proxy) cooling(tried map[string]bool, n int) []Attempt {
	var out []Attempt
	for _, ownFirst := range []bool{true, false} {
		for _, f := range p.recs.Candidates() {
			if len(out) == n {
				return out
			}
			if f.Own != ownFirst || tried[f.URL] {
				continue
			}
			st := p.pool.Stats(f.URL)
			if st.Circuit != pool.Open {
				continue
			}
			out = append(out, Attempt{Instance: f.URL, Own: f.Own, Outcome: "skipped", Reason: st.LastReason,
				Owner: pool.OwnerInstance.String(), Until: st.CooldownUntil})
		}
	}
	return out
}

// explain ends the search's opinions, so that every outcome they held is
// decided, and writes into its log whose doing each attempt was and
// until when its instance cools down.
func (s *search) explain() {
	s.op.close()
	for i := range s.log {
		a := &s.log[i]
		if b, ok := s.op.blamed(a.Instance); ok && a.Outcome != "running" {
			a.Owner = b.Owner.String()
		} else if !ok && a.Reason == pool.Reason(detect.Timeout) {
			// Cut by the search's deadline, still running: what blame
			// will decide of it when it ends, from what the search saw.
			a.Owner = s.op.foresee(s.cutAttempt(a)).Owner.String()
		}
		if st := s.p.pool.Stats(a.Instance); st.Circuit == pool.Open {
			a.Until = st.CooldownUntil
		}
	}
}

// cutAttempt is the held timeout an attempt cut by the search's
// deadline will come to.
func (s *search) cutAttempt(a *Attempt) heldOutcome {
	return heldOutcome{l: leased{inst: a.Instance, queued: s.queued}, o: pool.Outcome{Kind: pool.Failed, Reason: a.Reason},
		elapsed: time.Duration(a.ElapsedMS) * time.Millisecond, fair: s.p.fairChance(a.Instance)}
}

// offline reports whether every attempt of a search failed because no
// instance's name resolved: the network of this machine, not the
// instances.
func offline(tried []Attempt) bool {
	for _, a := range tried {
		if a.Reason != pool.Reason(detect.DNS) {
			return false
		}
	}
	return len(tried) > 0
}

// timedOut reports whether an attempt of a search timed out.
func timedOut(tried []Attempt) bool {
	for _, a := range tried {
		if a.Reason == pool.Reason(detect.Timeout) {
			return true
		}
	}
	return false
}

// fallback is the answer served when no better one came: an honest
// "nothing found", else the best soft answer.
func (s *search) fallback() *attemptResult {
	if s.thin != nil {
		return s.thin
	}
	if s.empty != nil {
		return s.empty
	}
	return s.best
}

// onResult takes one attempt's result; done is true when the search ends
// with res or err.
func (s *search) onResult(r attemptResult) (res *Response, err error, done bool) {
	p := s.p
	s.inflight--
	for i := range s.log {
		if s.log[i].Instance == r.instance {
			s.log[i].Outcome = r.outcome.Kind.String()
			s.log[i].Reason = r.outcome.Reason
			s.log[i].ElapsedMS = r.elapsed.Milliseconds()
		}
	}
	if s.fanout > 1 {
		return s.onFanResult(r)
	}
	switch r.verdict.Kind {
	case detect.Redirect:
		// A bang: the query's answer is the redirect, whoever is asked.
		return s.redirect(r), nil, true
	case detect.OK:
		if !r.verdict.Results.NothingFound() {
			if s.holdThin(r) {
				return nil, nil, false
			}
			res, err = s.answer(s.fuller(r))
			return res, err, true
		}
		// Nothing found. One other instance may be asked for a second
		// opinion, if one is free now; never more.
		if s.empty == nil {
			rr := r
			s.empty = &rr
			if s.inflight == 0 && s.started < p.cfg.MaxAttempts {
				s.launch(launchConfirm)
			}
		}
	case detect.Soft:
		s.keepBest(r)
		s.weigh(r)
	}
	if s.inflight > 0 {
		return nil, nil, false
	}
	if s.thin != nil {
		// The quality hedge found nothing better: the thin answer.
		res, err = s.answer(*s.thin)
		return res, err, true
	}
	if s.op.failedAlike() != "" && s.fallback() == nil {
		// A second instance failed on it the same way (5xx, 4xx): the
		// query's doing, said so; asking more instances would fail too.
		s.why = StopQuery
		return nil, s.noAnswer(), true
	}
	if s.queryFault {
		// A second instance answered as poorly: the query is at fault
		// (engines that fail on it everywhere, SearXNG syntax), not the
		// instances. Its answer is served, and cached briefly.
		a := s.queryAnswer()
		res, err = s.p.answer(s.req, s.key, *a, s.started, string(a.verdict.Reason), queryFaultTTL)
		return res, err, true
	}
	if s.empty == nil && s.retry(p.cfg.MaxAttempts) {
		return nil, nil, false
	}
	if a := s.fallback(); a != nil {
		res, err = s.answer(*a)
		return res, err, true
	}
	if len(s.poor) > 1 {
		// Every instance asked answered poorly, each its own way, and no
		// other can be asked: the query's (blame.go), served as such.
		a := s.queryAnswer()
		res, err = s.p.answer(s.req, s.key, *a, s.started, string(a.verdict.Reason), queryFaultTTL)
		return res, err, true
	}
	if s.why == "" {
		s.why = StopAttempts
	}
	return nil, s.noAnswer(), true
}

// retry starts one more attempt after every attempt so far failed, while
// fewer than limit started. One that could not start for want of a slot,
// of the extra budget or of time, while another instance could have given
// the second opinion an outcome waits for, is said to the opinions: that
// outcome is then no instance's own (blame.go).
func (s *search) retry(limit int) bool {
	if s.started >= limit {
		return false
	}
	if s.launch(launchRetry) {
		return true
	}
	if s.why != StopNoInstance && s.why != StopCancelled {
		if _, other, _ := s.p.earliest(s.p.recs.Candidates(), s.req.Client, s.tried, s.p.now()); other {
			s.op.unasked()
		}
	}
	return false
}

// launch starts one attempt on the best instance this search may use; it
// reports whether one started. A first attempt and a retry wait for a
// slot within the deadline; a hedge and a confirmation take only a slot
// free now.
func (s *search) launch(kind launchKind) (started bool) {
	p := s.p
	now := p.now()
	if s.started > 0 && kind != launchFan {
		if !p.extra.TakeExtra(s.req.Client, now, kind == launchHedge || kind == launchQuality) {
			if kind == launchRetry {
				s.why = StopBudget
			}
			return false
		}
		// An extra counts when it is sent: one that no instance takes in
		// time, or that the client's limit refuses, is given back.
		takenAt := now
		defer func() {
			if !started {
				p.extra.GiveBack(s.req.Client, takenAt)
			}
		}()
	}
	l, ok := s.checkoutFor(kind, now)
	if !ok && (kind == launchFirst || kind == launchRetry) {
		l, ok = s.waitSlot()
		now = p.now()
	}
	if !ok {
		return false
	}
	l.queued = s.queued
	if s.started > 0 {
		// A retry, hedge or second opinion that could not be answered
		// before the deadline is not sent: the deadline would cut it.
		if _, in := p.inTime(l, now, s.deadline); !in {
			p.giveBack(l.lease, l.release)
			return false
		}
	}
	if kind == launchFan && s.slowForFan(l) {
		// Consistently slower than the grace allows: its answer would
		// come after the merge. Another instance, or fewer.
		p.giveBack(l.lease, l.release)
		s.tried[l.inst] = true
		return s.started < s.attemptCap() && s.launch(launchFan)
	}
	if l, ok = s.admit(l, kind, now); !ok {
		return false
	}
	if s.started == 0 || kind == launchFan {
		p.extra.First(s.req.Client, now)
	}
	if kind == launchFan || (s.fanout > 1 && s.started == 0) {
		s.asked++
	}
	s.started++
	s.inflight++
	s.tried[l.inst] = true
	s.op.sent()
	s.log = append(s.log, Attempt{Instance: l.inst, Own: l.lease.Own(), Outcome: "running"})
	s.starts = append(s.starts, now)
	req, deadline, out, op := s.req, s.deadline, s.results, s.op
	if !p.spawn(func() { p.attempt(l, req, deadline, out, op) }) {
		// Shutting down: the attempt is never sent.
		p.pool.Record(l.lease, pool.Outcome{Kind: pool.Cancelled, Reason: ReasonShutdown}, 0)
		l.release()
		s.inflight--
		s.log[len(s.log)-1].Outcome, s.log[len(s.log)-1].Reason = pool.Cancelled.String(), ReasonShutdown
		if s.inflight == 0 {
			s.why = StopShutdown
		}
		return false
	}
	if s.fanout == 1 {
		// The newest attempt is raced in turn (a third attempt halves the
		// p95 on a hostile fleet); one the deadline cuts before its fair
		// time is searxgate's own, never its instance's (blame.go), and
		// one that cannot be answered in time is not sent (inTime).
		s.stopHedge()
		s.hedge, s.stopHedge = p.hedgeTimer(l.rec, now, s.deadline)
	}
	return true
}

// admit charges the client's own limit (Config.Admit) for a search of a
// public instance: the first attempt, each instance of a fan-out, and
// each second opinion (a confirmation, or a retry while an outcome waits
// for one: the query asked for it). Retries after an instance's failure
// and hedges are searxgate's doing, within ExtraRatio, and charged to the
// client's rate all the same (Config.AdmitExtra). The operator's own
// instances are not charged. A first attempt refused there goes to an own
// instance free now, if there is one; else the search ends with the
// client's LimitedError. A second opinion refused is not sent.
func (s *search) admit(l leased, kind launchKind, now time.Time) (leased, bool) {
	p := s.p
	if l.lease.Own() {
		return l, true
	}
	if s.started > 0 && kind != launchFan && !s.secondOpinion(kind) {
		if p.cfg.AdmitExtra == nil || p.cfg.AdmitExtra(s.req.Client, now) {
			return l, true
		}
		p.giveBack(l.lease, l.release)
		return leased{}, false
	}
	if p.cfg.Admit == nil {
		return l, true
	}
	ok, wait := p.cfg.Admit(s.req.Client, now)
	if ok {
		return l, true
	}
	p.giveBack(l.lease, l.release)
	if s.started > 0 {
		return leased{}, false // a fan-out asks fewer: it is paid for
	}
	if own, ok := p.checkout(s.ctx, s.req.Client, s.tried, now, true); ok {
		return own, true
	}
	s.limited = max(wait, polite.MinRetryAfter)
	return leased{}, false
}

// secondOpinion reports whether an attempt of kind is a second opinion:
// a confirmation, or a retry while an outcome waits for one.
func (s *search) secondOpinion(kind launchKind) bool {
	switch kind {
	case launchConfirm:
		return true
	case launchRetry:
		s.op.mu.Lock()
		defer s.op.mu.Unlock()
		return len(s.op.held) > 0
	}
	return false
}

// slowForFan reports whether l's instance is too slow for this fan-out
// search: its usual latency is more than twice the first instance's plus
// the grace, so its answer would miss the merge.
func (s *search) slowForFan(l leased) bool {
	if len(s.log) == 0 {
		return false
	}
	first, ok1 := s.p.usual(s.log[0].Instance)
	lat, ok2 := s.p.usual(l.inst)
	return ok1 && ok2 && lat > 2*first+s.p.cfg.FanoutGrace
}

// queryFaultTTL is how long an answer whose poverty is the query's own
// (two instances alike) is cached: repeats cost nothing upstream, and an
// engine that recovers is asked again soon.
const queryFaultTTL = time.Minute

// queryAnswer is the answer served when the query is at fault: the best
// poor page, else the off-topic one two instances gave alike (SearXNG's
// own reading of the query), else the first.
func (s *search) queryAnswer() *attemptResult {
	if s.best != nil {
		return s.best
	}
	if s.agreed != nil {
		return s.agreed
	}
	return &s.poor[0]
}

// redirect answers a bang search with the redirect SearXNG gave: as the
// redirect (Response.Redirect) for the clients that can follow one, and
// as an answer of one result, the redirect's target, for those that read
// results (JSON for feeling lucky, CSV, RSS, MCP). It is not cached: it
// costs the instance nothing to say again, and a cached redirect would
// outlive a bang the instance changed.
func (s *search) redirect(r attemptResult) *Response {
	what := "SearXNG sends this search to the bang's site"
	if r.verdict.Reason == detect.FeelingLucky {
		what = "SearXNG sends this search to its first result"
	}
	res := &results.Page{Query: s.req.Query, Results: []results.Result{{
		URL: r.verdict.Location, Title: r.verdict.Location, Content: what,
		Positions: []int{1}, Score: 1, Category: "general",
	}}}
	return &Response{JSON: res.AppendJSON(nil), Redirect: r.verdict.Location, Instance: r.instance,
		Attempts: s.started, Soft: string(r.verdict.Reason), results: res}
}

// keepBest keeps r as the search's last resort when it is a poor page
// with more results than the one kept; an off-topic answer belongs to
// another query and is never kept.
func (s *search) keepBest(r attemptResult) {
	if r.verdict.Reason == detect.OffTopic || r.verdict.Results == nil {
		return
	}
	if s.best == nil || len(r.verdict.Results.Results) > len(s.best.verdict.Results.Results) {
		s.best = &r
	}
}

// attemptCap is how many attempts a fan-out search may start: MaxAttempts
// for its first instance, and one for each other instance it fans out to.
func (s *search) attemptCap() int { return s.p.cfg.MaxAttempts + s.fanout - 1 }

// onFanResult takes one result of a fan-out search: good answers are kept
// for the merge; a failed instance is replaced by another free now, while
// the attempt cap allows; the search ends when nothing is in flight.
func (s *search) onFanResult(r attemptResult) (*Response, error, bool) {
	switch {
	case r.verdict.Kind == detect.Redirect:
		return s.redirect(r), nil, true // one instance answers a bang
	case r.verdict.Kind == detect.OK:
		s.answers = append(s.answers, r)
		if len(s.answers) == 1 && s.inflight > 0 {
			// The answer goes out a short grace after the first: a slow
			// instance does not hold it.
			s.grace, s.stopGrace = s.p.timer(min(s.p.cfg.FanoutGrace, s.deadline.Sub(s.p.now())))
		}
	case r.verdict.Kind == detect.Soft:
		// A poor page (engines down) is kept as a last resort only.
		s.keepBest(r)
		fallthrough
	default:
		if s.started < s.attemptCap() && s.op.failedAlike() == "" {
			s.launch(launchFan)
		}
	}
	if s.inflight > 0 {
		return nil, nil, false
	}
	if len(s.answers) > 0 {
		res, err := s.merged()
		return res, err, true
	}
	if s.op.failedAlike() == "" && s.retry(s.attemptCap()) {
		return nil, nil, false
	}
	if s.best != nil {
		res, err := s.answer(*s.best)
		return res, err, true
	}
	if s.op.failedAlike() != "" {
		s.why = StopQuery // two instances failed on it alike (5xx, 4xx)
	}
	if s.why == "" {
		s.why = StopAttempts
	}
	return nil, s.noAnswer(), true
}

// drainAnswers takes, at the deadline, the fan-out answers that came in
// time but were not read yet.
func (s *search) drainAnswers() {
	if s.fanout == 1 {
		return
	}
	for {
		select {
		case r := <-s.results:
			s.inflight--
			if r.verdict.Kind == detect.OK {
				s.answers = append(s.answers, r)
			}
		default:
			return
		}
	}
}

// merged answers a fan-out search with the merge of the good answers that
// came in time.
func (s *search) merged() (*Response, error) {
	pages := make([]*results.Page, len(s.answers))
	insts := make([]string, len(s.answers))
	for i, a := range s.answers {
		pages[i], insts[i] = a.verdict.Results, a.instance
	}
	m := results.Merge(pages...)
	s.p.metrics.fanout.Add(1)
	merged := attemptResult{instance: strings.Join(insts, ", "), verdict: detect.Verdict{Kind: detect.OK, Results: m}}
	res, err := s.p.answer(s.req, s.key, merged, s.started, "", 0)
	if res != nil {
		res.Fanout = strconv.Itoa(s.asked) + "/" + strconv.Itoa(len(s.answers))
	}
	return res, err
}

// answer turns a winning attempt into the client's response.
func (s *search) answer(r attemptResult) (*Response, error) {
	soft := ""
	if r.verdict.Kind == detect.Soft {
		soft = string(r.verdict.Reason)
	}
	return s.p.answer(s.req, s.key, r, s.started, soft, thinTTL(r))
}
