package proxy

import (
	"errors"
	"strings"
	"time"

	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy/upstream"
)

// Whose outcome is it? Every upstream search comes to an outcome, and
// every outcome has an owner: the instance, the query, the client or
// searxgate itself (pool.Owner). Only the instance's own outcomes move its
// circuit, failure average and cooldown, reach the replicas (a circuit
// opens only on those) and count as its refusals and failures in
// /metrics and /status; the others count there as "excused". The owner is
// decided here, and only here, before the pool learns anything: the pool
// cannot undo an outcome it recorded. An answer that tells by itself is
// decided by outcomeOf (and passIPOutcome, suggestionOutcome); one that
// cannot is held (held) and decided by blame from what the search saw
// (opinions, owner.go, gathers it).
//
//	outcome                                      owner
//	ok answer, honest "nothing found"            instance (it answered)
//	refusal: 429, limiter redirect, 403,         instance
//	  challenge, blocklist, 503
//	unreadable, too large, reset, tls,           instance (FailStrikes in a
//	  refused connection, a parser panic           row open the circuit)
//	external bang, feeling lucky (a redirect     query
//	  off the instance, passed to the client)
//	format=json refused (403)                    searxgate's choice of format:
//	                                               cancelled, HTML asked next
//	link-token bar, searxgate's own connection   searxgate (cancelled, busy)
//	  cap, shutdown, a lease given back
//	an own instance's limiter refusing           searxgate (its address is
//	  searxgate's address (diagnosed)              not passed: proxy/instance)
//	engines down or off-topic answer             held: the second opinion
//	5xx (but 503), 4xx the instance would not    held: the second opinion
//	  take
//	timeout, dns                                 held: the second opinion
//	autocompletion: a refusal                    instance (cools it as a search's would)
//	autocompletion: anything else                nobody: recorded as cancelled
//
// A held outcome cannot tell by itself whose it is: engines that fail on
// one query fail on every instance, a query can crash SearXNG or be
// refused by it everywhere, a query can be slow everywhere, and when no
// name resolves the network is down. It waits (pool.Hold frees its slot
// meanwhile) until another instance of the same search has spoken: when
// one answers with results, each held outcome is the instance's (a
// timeout only when it ran well past the answer's time: one cut short by
// the deadline had no fair chance).
//
// When the search ends without such an answer, the query or the network
// is at fault, and the held outcomes are the query's or searxgate's:
//   - poor answers (engines down, off-topic) are the query's, however
//     many instances gave them; only an answer that echoes another
//     query, or differs from two others that agree (the same echo, a
//     URL in common), is its instance's own: the third opinion decides
//     (opinions.weigh). Two poor answers that differ prove nothing by
//     themselves (engines that read a query their own way, each
//     instance its own results);
//   - a 5xx or a 4xx that a second instance repeats is the query's (the
//     search stops there, with an error that says so); a lone 5xx that
//     no second instance could judge is its instance's, a lone 4xx the
//     client's; but one whose second opinion another instance could
//     have given, had searxgate a slot, extra budget or time left to ask
//     it (concurrent searches hold them), is searxgate's;
//   - dns is searxgate's (the machine is offline);
//   - a timeout cut after the search waited in searxgate's queue, or cut
//     before its instance had twice its usual latency (at least
//     HedgeFloor), is searxgate's; one cut before the time the query's
//     own timeout syntax ("<6") gave SearXNG is the query's; one that
//     repeats on a second instance is the query's; one that had its
//     chance on the only instance asked is the instance's own
//     (FailStrikes in a row open its circuit).
//
// A held outcome whose search already ended is decided at once by what
// that search saw.

// The reasons of outcomes searxgate names itself (the others are
// detect's verdict reasons).
const (
	ReasonLinkToken    pool.Reason = "link_token"   // its terms bar searxgate (a link token): not sent
	ReasonBusy         pool.Reason = "busy"         // searxgate's own connection cap
	ReasonAutocomplete pool.Reason = "autocomplete" // an autocompletion that says nothing of searches
	ReasonShutdown     pool.Reason = "shutdown"     // searxgate is shutting down: not sent
)

// Rule says why an outcome has the owner it has: the rule of the table
// above that decided it.
type Rule uint8

// The rules.
const (
	RuleItself          Rule = iota // the answer tells by itself (outcomeOf)
	RuleAnsweredElse                // another instance answered the same query with results
	RuleOwnPoor                     // its poor answer echoed another query, or differed from two alike
	RulePoorAlike                   // poor answers only: the query's engines or words
	RuleOffline                     // no instance's name resolved: this machine's network
	RuleFailedAlike                 // a second instance failed on the query the same way
	RuleNoSecond                    // a second opinion could have been asked, but no slot, budget or time was left
	RuleServerAlone                 // a 5xx where no other instance could be asked
	RuleOddQuery                    // a 4xx where no other instance could be asked
	RuleQueued                      // a timeout after waiting in searxgate's queue
	RuleCutEarly                    // a timeout before its instance had a fair chance
	RuleQuerySyntaxTime             // a timeout before the time the query's "<N" gave SearXNG
	RuleSlowEverywhere              // a timeout on every instance asked
	RuleOnlySlow                    // a timeout on the only instance asked, after a fair chance
)

var ruleNames = [...]string{
	RuleItself: "itself", RuleAnsweredElse: "answered_elsewhere", RuleOwnPoor: "own_poor_answer",
	RulePoorAlike: "poor_everywhere", RuleOffline: "offline", RuleFailedAlike: "failed_alike",
	RuleNoSecond: "no_second_opinion", RuleServerAlone: "server_error_alone", RuleOddQuery: "odd_query",
	RuleQueued: "queued", RuleCutEarly: "cut_early", RuleQuerySyntaxTime: "query_timeout_syntax",
	RuleSlowEverywhere: "slow_everywhere", RuleOnlySlow: "only_instance_slow",
}

func (w Rule) String() string {
	if int(w) < len(ruleNames) {
		return ruleNames[w]
	}
	return "unknown"
}

// Blame is an outcome's owner and the rule that named it.
type Blame struct {
	Owner pool.Owner
	Rule  Rule
}

// outcomeOf is the outcome of one upstream answer with the owner that one
// answer can tell by itself; the ones it cannot are left to blame (held).
func outcomeOf(v detect.Verdict, err error, format string) pool.Outcome {
	r := pool.Reason(v.Reason)
	switch {
	case v.Kind == detect.Redirect:
		// A bang: SearXNG sends whoever asks to the bang's site.
		return pool.Outcome{Kind: pool.OK, Owner: pool.OwnerQuery, Reason: r}
	case v.Reason == detect.FormatDisabled && format == FormatJSON:
		return pool.Outcome{Kind: pool.Cancelled, Reason: r}
	case err != nil && errors.Is(err, upstream.ErrBusy):
		// Our own connection cap, not the instance's doing.
		return pool.Outcome{Kind: pool.Failed, Owner: pool.OwnerGateway, Reason: ReasonBusy}
	}
	return pool.Outcome{Kind: poolKind(v.Kind), Reason: r, RetryAfter: v.RetryAfter}
}

// passIPOutcome is the outcome of a diagnosed first refusal of an own
// instance's limiter (instance.Record.PassIPDenied): searxgate's own
// doing, so no circuit opens.
func passIPOutcome(v detect.Verdict) pool.Outcome {
	return pool.Outcome{Kind: pool.Refused, Owner: pool.OwnerGateway, Reason: pool.Reason(v.Reason)}
}

// suggestionOutcome is what the pool learns from an /autocompleter
// answer judged v (nil when it was read as suggestions, or failed): a
// refusal cools the instance as a search's would; anything else says
// nothing about its searches and is recorded as cancelled.
func suggestionOutcome(v *detect.Verdict) pool.Outcome {
	if v != nil && v.Kind == detect.Refused {
		return pool.Outcome{Kind: pool.Refused, Reason: pool.Reason(v.Reason), RetryAfter: v.RetryAfter}
	}
	return pool.Outcome{Kind: pool.Cancelled, Reason: ReasonAutocomplete}
}

// held reports whether an instance's outcome o cannot tell by itself
// whose doing it is, and waits for blame.
func held(o pool.Outcome) bool {
	if o.Owner != pool.OwnerInstance {
		return false
	}
	switch detect.Reason(o.Reason) {
	case detect.EnginesDown, detect.OffTopic:
		return o.Kind == pool.Soft
	case detect.Timeout, detect.DNS, detect.ServerError, detect.ClientError:
		return o.Kind == pool.Failed
	}
	return false
}

// queryCanFail reports whether a query can make every instance fail with
// reason: SearXNG crashing on it (5xx) or refusing it (4xx).
func queryCanFail(reason detect.Reason) bool {
	return reason == detect.ServerError || reason == detect.ClientError
}

// evidence is what a search saw that decides a held outcome's owner.
type evidence struct {
	answeredIn time.Duration // the fastest answer with results; 0 while none came
	ownPoor    bool          // its poor answer was its own (opinions.weigh)
	alike      int           // failures of the search with this outcome's reason (5xx, 4xx)
	noSecond   bool          // a second opinion was wanted, possible, and not asked
	asked      int           // instances the search sent to
	limit      time.Duration // the time the query's "<N" gives SearXNG; 0 when none
	queued     bool          // the search waited in searxgate's queue
	elapsed    time.Duration // how long the attempt ran
	fair       time.Duration // what its instance was due: twice its usual latency, at least HedgeFloor
}

// blame decides the owner of a held outcome o from what its search saw.
func blame(o pool.Outcome, ev evidence) Blame {
	if o.Kind == pool.Soft {
		switch {
		case ev.answeredIn > 0:
			return Blame{pool.OwnerInstance, RuleAnsweredElse} // others answered this query better
		case ev.ownPoor:
			return Blame{pool.OwnerInstance, RuleOwnPoor}
		}
		return Blame{pool.OwnerQuery, RulePoorAlike}
	}
	switch r := detect.Reason(o.Reason); {
	case r == detect.DNS:
		if ev.answeredIn > 0 {
			return Blame{pool.OwnerInstance, RuleAnsweredElse} // other names resolve: its own
		}
		return Blame{pool.OwnerGateway, RuleOffline} // no instance was reached: the network
	case queryCanFail(r):
		switch {
		case ev.answeredIn > 0:
			return Blame{pool.OwnerInstance, RuleAnsweredElse}
		case ev.alike >= 2:
			return Blame{pool.OwnerQuery, RuleFailedAlike}
		case ev.noSecond:
			return Blame{pool.OwnerGateway, RuleNoSecond}
		case r == detect.ServerError:
			return Blame{pool.OwnerInstance, RuleServerAlone}
		}
		return Blame{pool.OwnerClient, RuleOddQuery}
	}
	return blameTimeout(ev)
}

// blameTimeout is blame for a timeout.
func blameTimeout(ev evidence) Blame {
	switch {
	case ev.queued:
		// The search waited in searxgate's queue before it was sent: the
		// time it lost there, and the deadline that cut it, are
		// searxgate's.
		return Blame{pool.OwnerGateway, RuleQueued}
	case ev.elapsed < ev.fair || (ev.answeredIn > 0 && ev.elapsed < 2*ev.answeredIn):
		// Cut by the search's deadline before it had a fair chance (it
		// was sent late: a hedge, its terms read first).
		return Blame{pool.OwnerGateway, RuleCutEarly}
	case ev.limit > ev.elapsed:
		// Cut before the time the query itself gave SearXNG ("<6" where
		// searxgate's deadline is shorter).
		return Blame{pool.OwnerQuery, RuleQuerySyntaxTime}
	case ev.answeredIn > 0:
		return Blame{pool.OwnerInstance, RuleAnsweredElse} // others answered in time
	case ev.asked > 1:
		return Blame{pool.OwnerQuery, RuleSlowEverywhere}
	}
	// The only instance asked, and it had its chance: its own slowness
	// (FailStrikes of these in a row open its circuit).
	return Blame{pool.OwnerInstance, RuleOnlySlow}
}

// sameWay reports whether two poor answers are poor the same way, as one
// query makes them on any instance: both with engines down, or both
// reading the query alike (the same echo, a result in common).
func sameWay(a, b detect.Verdict) bool {
	if a.Reason != b.Reason {
		return false
	}
	if a.Reason == detect.EnginesDown {
		return true
	}
	if a.Results == nil || b.Results == nil || !strings.EqualFold(a.Results.Query, b.Results.Query) {
		return false
	}
	if len(a.Results.Results) == 0 && len(b.Results.Results) == 0 {
		return true
	}
	urls := make(map[string]bool, len(a.Results.Results))
	for _, x := range a.Results.Results {
		urls[x.URL] = true
	}
	for _, y := range b.Results.Results {
		if urls[y.URL] {
			return true
		}
	}
	return false
}

// weigh takes one poor answer. An off-topic answer that echoes another
// query is its instance's own, whatever the others say. Of the others,
// one poor the same way as an earlier one makes the query at fault, and
// then every poor answer that differs from that pair is its instance's
// own (the third opinion). Two that differ decide nothing: a third
// instance is asked.
func (s *search) weigh(r attemptResult) {
	if echoesOther(s.req.Query, r.verdict) {
		s.op.ownPoor(r.instance)
		return
	}
	defer func() { s.poor = append(s.poor, r) }()
	if s.agreed != nil {
		if !sameWay(s.agreed.verdict, r.verdict) {
			s.op.ownPoor(r.instance)
		}
		return
	}
	for i := range s.poor {
		if !sameWay(s.poor[i].verdict, r.verdict) {
			continue
		}
		agreed := s.poor[i]
		s.agreed, s.queryFault = &agreed, true
		for _, q := range s.poor {
			if !sameWay(agreed.verdict, q.verdict) {
				s.op.ownPoor(q.instance)
			}
		}
		return
	}
}

// echoesOther reports whether an off-topic answer v echoes another query
// than q: its instance's own doing, whatever the others say.
func echoesOther(q string, v detect.Verdict) bool {
	return v.Reason == detect.OffTopic && v.Results != nil && v.Results.Query != "" && !detect.SameQuery(q, v.Results.Query)
}

// Shareable reports whether a circuit opening e is passed to the other
// replicas of the egress (RefusalFeed): only one the instance's own
// outcome caused here, never one heard from them (pool.SourceShared).
func Shareable(e pool.Event) bool {
	return e.To == pool.Open && e.From != pool.Open && e.Owner == pool.OwnerInstance && e.Source == pool.SourceLocal
}
