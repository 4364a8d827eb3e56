package proxy

import (
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/pool"
)

// causeWord says one cause of an attempt's end in words: what happened
// at the instance, and what to do about it, told to its operator (an own
// instance) or to whoever searches (a public one).
type causeWord struct {
	happened string
	own      string // what the operator of an own instance can do
	public   string // what a public instance's outcome means for the search
}

// causeWords say every reason an attempt can end with: the one table
// the faces (the web's errors, MCP's, the log) say causes from; a test
// holds it to detect.Reasons and searxgate's own reasons.
var causeWords = map[pool.Reason]causeWord{
	pool.Reason(detect.ConnRefused): {"refuses connections: nothing listens at its address",
		"is it running, and listening at that address and port?", "it may be down; searxgate tries it again after a cooldown"},
	pool.Reason(detect.DNS): {"has a name that does not resolve",
		"check the host name given to --instance, and this machine's DNS", "its name may have lapsed, or this machine's DNS fails"},
	pool.Reason(detect.Timeout): {"did not answer in time",
		"is it overloaded, or are its engines slow? check its engines' timeouts, or raise --deadline", "it is slow now; searxgate asks others first for a while"},
	pool.Reason(detect.RateLimited): {"answered 429 Too Many Requests",
		"its limiter does not pass searxgate's address: add that address to pass_ip in its limiter.toml", "it limits searxgate for now; searxgate waits as it asked"},
	pool.Reason(detect.Blocklisted): {"has searxgate's address on its block list",
		"take searxgate's address off its block list, or add it to pass_ip in its limiter.toml", "it blocks searxgate's address; searxgate asks others"},
	pool.Reason(detect.LimiterRedirect): {"turned the search away with its limiter (a redirect, not results)",
		"its limiter does not pass searxgate's address: add that address to pass_ip in its limiter.toml", "its limiter turns searxgate away for now"},
	pool.Reason(detect.FormatDisabled): {"does not offer the JSON format",
		"add json to search.formats in its settings.yml (searxgate reads its HTML meanwhile)", "searxgate reads its HTML pages instead"},
	pool.Reason(detect.Forbidden): {"answered 403 Forbidden",
		"its server, or a proxy in front of it, refuses searxgate's address", "it refuses searxgate's address"},
	pool.Reason(detect.BotChallenge): {"answered a bot challenge (a page for browsers, not results)",
		"its bot protection takes searxgate for a bot: let searxgate's address through", "searxgate cannot pass a bot check; it asks others"},
	pool.Reason(detect.Unavailable): {"answered 503 Service Unavailable",
		"is it starting, overloaded or in maintenance?", "it is unavailable for now"},
	pool.Reason(detect.ServerError): {"answered a server error (5xx)",
		"its log says why", "it fails for now"},
	pool.Reason(detect.BadBody): {"answered a page searxgate cannot read as results",
		"is that address SearXNG's, and is its version current?", "its answers cannot be read for now"},
	pool.Reason(detect.TooLarge): {"answered more than searxgate reads",
		"is that address SearXNG's search?", "its answers are too large to read"},
	pool.Reason(detect.Transport): {"failed at the connection",
		"is the address right, and a proxy in between working?", "it cannot be reached for now"},
	pool.Reason(detect.TLS): {"failed the TLS handshake or its certificate",
		"check its certificate (name, expiry, chain), or give its http:// address", "its certificate is not valid for now"},
	pool.Reason(detect.Reset): {"closed the connection mid-answer",
		"its log, or a proxy in front of it, says why", "its connection broke"},
	pool.Reason(detect.ClientError): {"did not accept the search (4xx)",
		"its log says why it refused this request", "it did not accept this search"},
	pool.Reason(detect.EnginesDown): {"has engines that errored on this query",
		"its engines' errors are on its /stats page", "its engines failed on this query"},
	pool.Reason(detect.OffTopic): {"answered about something else than the query",
		"its engines read the query another way", "its results are not about the query"},
	pool.Reason(detect.ExternalBang): {"sent the search to the bang's site", "", ""},
	pool.Reason(detect.FeelingLucky): {"sent the search to its first result", "", ""},
	ReasonLinkToken: {"checks for browsers with a link token, so it was not asked",
		"turn off link_token in its limiter.toml, or pass searxgate's address", "it checks for browsers; searxgate does not ask it"},
	ReasonBusy: {"was not asked: searxgate's own connections to it were all in use",
		"raise --own-max-in-flight if it can take more", "searxgate's connections to it are all in use"},
	ReasonShutdown:     {"was not asked: searxgate is shutting down", "", ""},
	ReasonAutocomplete: {"did not give suggestions", "", ""},
}

// ownerWords say whose doing an outcome was (Attempt.Owner).
var ownerWords = map[string]string{
	pool.OwnerInstance.String(): "the instance's own doing",
	pool.OwnerQuery.String():    "the query's doing: it fails the same way on every instance",
	pool.OwnerClient.String():   "this request's doing: the instance did not accept it",
	pool.OwnerGateway.String():  "searxgate's doing (its queue, deadline, budget or network), not the instance's",
}

// Explain says an attempt's end in words: which instance (own or public,
// its address), what happened (for how long, until when it cools down),
// whose doing it was, and what to do. "" for an attempt that did not end
// in a refusal or failure.
func (a Attempt) Explain() string {
	w, ok := causeWords[a.Reason]
	if !ok || a.Outcome == pool.OK.String() {
		return ""
	}
	var b strings.Builder
	if a.Own {
		b.WriteString("your own instance ")
	} else {
		b.WriteString("public instance ")
	}
	b.WriteString(a.Instance)
	if a.Outcome == "skipped" {
		b.WriteString(" is not asked")
		if !a.Until.IsZero() {
			b.WriteString(" until " + a.Until.UTC().Format("15:04:05") + " UTC")
		}
		b.WriteString(": it")
		a.Until = time.Time{}
	}
	b.WriteByte(' ')
	if a.Reason == pool.Reason(detect.Timeout) && a.ElapsedMS > 0 {
		b.WriteString("did not answer within " + seconds(time.Duration(a.ElapsedMS)*time.Millisecond))
	} else {
		b.WriteString(w.happened)
	}
	if !a.Until.IsZero() {
		b.WriteString("; not asked again until " + a.Until.UTC().Format("15:04:05") + " UTC")
	}
	notItself := a.Owner != "" && a.Owner != pool.OwnerInstance.String()
	if notItself {
		b.WriteString("; " + ownerWords[a.Owner])
	}
	switch {
	case a.Own && w.own != "":
		// The operator can act on their own instance whoever's doing it
		// was (a name that does not resolve may be a typo or the network).
		b.WriteString(": " + w.own)
	case !notItself && w.public != "":
		b.WriteString(": " + w.public)
	}
	return b.String()
}

// seconds says d as whole seconds, at least 1 ("4 s").
func seconds(d time.Duration) string {
	return strconv.FormatInt(max(int64((d+time.Second/2)/time.Second), 1), 10) + " s"
}

// Explain says each refused or failed attempt of the search, and each
// instance it could not ask, in words (Attempt.Explain), one a line.
func (e *NoAnswerError) Explain() []string {
	var out []string
	for _, a := range slices.Concat(e.Tried, e.Waiting) {
		if s := a.Explain(); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// causeLogEvery is how often one instance's one cause is logged again
// while it lasts.
const causeLogEvery = 10 * time.Minute

// causeLog logs the refusals and failures that were an instance's own,
// and every one of the operator's own instances: one line when a cause first shows at an instance, then at most one
// every causeLogEvery while it lasts, with how many were not logged. Not
// a line a search.
type causeLog struct {
	mu    sync.Mutex // guards gates
	gates map[causeKey]causeGate
}

type causeKey struct {
	inst   string
	reason pool.Reason
}

// causeGate is when a cause was last logged, and how many times it came
// since without a line.
type causeGate struct {
	last time.Time
	held int
}

// maxCauseGates bounds the gates kept; past it they are all forgotten
// (every cause may then be logged once more).
const maxCauseGates = 4096

// log logs a's end (a refusal or failure its caller chose) when its
// instance and cause were not logged within causeLogEvery.
func (c *causeLog) log(l *slog.Logger, a Attempt, now time.Time) {
	k := causeKey{a.Instance, a.Reason}
	c.mu.Lock()
	if c.gates == nil || len(c.gates) >= maxCauseGates {
		c.gates = make(map[causeKey]causeGate)
	}
	g, seen := c.gates[k]
	if seen && now.Sub(g.last) < causeLogEvery {
		g.held++
		c.gates[k] = g
		c.mu.Unlock()
		return
	}
	c.gates[k] = causeGate{last: now}
	c.mu.Unlock()
	l.Warn(a.Explain(), "instance", a.Instance, "own", a.Own, "reason", string(a.Reason), "outcome", a.Outcome,
		"more_since_last_line", g.held)
}
