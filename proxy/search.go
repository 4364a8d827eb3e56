package proxy

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/pool"
)

// search is one client search on its way upstream: its attempts, hedges,
// deadline and what came back so far. Its methods run on the goroutine of
// the client search; the attempts send their results on results.
type search struct {
	p        *Proxy
	ctx      context.Context
	req      Request
	key      *searchKey
	deadline time.Time

	results  chan attemptResult
	tried    map[string]bool
	log      []Attempt
	starts   []time.Time    // when each attempt of log started
	best     *attemptResult // the best soft answer so far, served when nothing better comes
	empty    *attemptResult // an honest "nothing found", served unless another instance finds something
	inflight int
	started  int

	// A fan-out search asks up to fanout instances at once and merges
	// their good answers (answers, in the order they came).
	fanout  int
	asked   int // fan-out attempts started, replacements included
	answers []attemptResult

	hedge     <-chan time.Time
	stopHedge func()

	why        string        // why the search stopped without an answer
	retryAfter time.Duration // when a slot is expected to free, for a refusal
}

// attempt kinds for launch.
type launchKind uint8

const (
	launchFirst   launchKind = iota // the first attempt: waits for a slot within the deadline
	launchRetry                     // after every attempt failed: waits too
	launchHedge                     // a slow attempt's race: only a slot free now
	launchConfirm                   // a second opinion on "nothing found": only a slot free now
	launchFan                       // one more instance of a fan-out: only a slot free now, no extra budget
)

// fetch runs the attempts of one search.
func (p *Proxy) fetch(ctx context.Context, req Request, key *searchKey, start, deadline time.Time) (*Response, error) {
	if p.cfg.Admit != nil {
		if ok, wait := p.cfg.Admit(req.Client, start); !ok {
			p.metrics.limited.Add(1)
			return nil, &LimitedError{RetryAfter: max(wait, minRetryAfter)}
		}
	}
	s := &search{
		p: p, ctx: ctx, req: req, key: key, deadline: deadline,
		results:   make(chan attemptResult, p.cfg.MaxAttempts+req.Fanout),
		tried:     make(map[string]bool, p.cfg.MaxAttempts+req.Fanout),
		stopHedge: func() {},
		fanout:    max(req.Fanout, 1),
	}
	defer func() { s.stopHedge() }()
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
		case <-s.hedge:
			s.hedge = nil
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
					s.log[i].Outcome, s.log[i].Reason = pool.Failed.String(), string(detect.Timeout)
					s.log[i].ElapsedMS = now.Sub(s.starts[i]).Milliseconds()
				}
			}
			s.why = "deadline"
			return nil, s.noAnswer()
		case <-s.ctx.Done():
			return nil, s.ctx.Err()
		}
	}
}

func (s *search) noAnswer() error {
	if s.why == "cancelled" && s.ctx.Err() != nil {
		return s.ctx.Err()
	}
	if s.retryAfter == 0 && s.why != "shutdown" {
		// Nothing said yet when a slot frees (every instance was tried, or
		// none could be): the earliest the pool knows of, tried instances
		// included (a cooldown's end, a budget window's), when it lies
		// ahead.
		now := s.p.now()
		if at, ok := s.p.earliest(s.p.candidates(), s.req.Client, nil, now); ok && at.After(now) {
			s.retryAfter = retryAfter(at, now)
		}
	}
	return &NoAnswerError{Why: s.why, Tried: s.log, RetryAfter: s.retryAfter}
}

// fallback is the answer served when no better one came: an honest
// "nothing found", else the best soft answer.
func (s *search) fallback() *attemptResult {
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
	case detect.OK:
		if !r.verdict.Results.NothingFound() {
			res, err = s.answer(r)
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
	}
	if s.inflight > 0 {
		return nil, nil, false
	}
	if s.empty == nil && s.started < p.cfg.MaxAttempts && s.launch(launchRetry) {
		return nil, nil, false
	}
	if a := s.fallback(); a != nil {
		res, err = s.answer(*a)
		return res, err, true
	}
	if s.why == "" {
		s.why = "attempts"
	}
	return nil, s.noAnswer(), true
}

// launch starts one attempt on the best instance this search may use; it
// reports whether one started. A first attempt and a retry wait for a
// slot within the deadline; a hedge and a confirmation take only a slot
// free now.
func (s *search) launch(kind launchKind) bool {
	p := s.p
	now := p.now()
	if s.started > 0 && kind != launchFan && !p.extra.TakeExtra(now, kind == launchHedge) {
		if kind == launchRetry {
			s.why = "budget"
		}
		return false
	}
	l, ok := p.checkout(s.ctx, s.req.Client, s.tried, now)
	if !ok && (kind == launchFirst || kind == launchRetry) {
		l, ok = s.waitSlot()
		now = p.now()
	}
	if !ok {
		return false
	}
	if s.started == 0 || kind == launchFan {
		p.extra.First(now)
	}
	if kind == launchFan || (s.fanout > 1 && s.started == 0) {
		s.asked++
	}
	s.started++
	s.inflight++
	s.tried[l.inst] = true
	s.log = append(s.log, Attempt{Instance: l.inst, Outcome: "running"})
	s.starts = append(s.starts, now)
	req, deadline, results := s.req, s.deadline, s.results
	if !p.spawn(func() { p.attempt(l, req, deadline, results) }) {
		// Shutting down: the attempt is never sent.
		p.pool.Record(l.lease, pool.Outcome{Kind: pool.Cancelled, Reason: "shutdown"}, 0)
		l.release()
		s.inflight--
		s.log[len(s.log)-1].Outcome, s.log[len(s.log)-1].Reason = pool.Cancelled.String(), "shutdown"
		if s.inflight == 0 {
			s.why = "shutdown"
		}
		return false
	}
	if s.fanout == 1 {
		s.stopHedge()
		s.hedge, s.stopHedge = p.hedgeTimer(l.rec, now, s.deadline)
	}
	return true
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
	case r.verdict.Kind == detect.OK:
		s.answers = append(s.answers, r)
	case r.verdict.Kind == detect.Soft:
		// A poor page (engines down) is kept as a last resort only.
		s.keepBest(r)
		fallthrough
	default:
		if s.started < s.attemptCap() {
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
	if s.started < s.attemptCap() && s.launch(launchRetry) {
		return nil, nil, false
	}
	if s.best != nil {
		res, err := s.answer(*s.best)
		return res, err, true
	}
	if s.why == "" {
		s.why = "attempts"
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
	results := make([]*detect.Results, len(s.answers))
	insts := make([]string, len(s.answers))
	for i, a := range s.answers {
		results[i], insts[i] = a.verdict.Results, a.instance
	}
	m := detect.Merge(results...)
	s.p.metrics.fanout.Add(1)
	merged := attemptResult{instance: strings.Join(insts, ", "), verdict: detect.Verdict{Kind: detect.OK, Results: m}}
	res, err := s.p.answer(s.req, s.key, merged, s.started, "")
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
	return s.p.answer(s.req, s.key, r, s.started, soft)
}
