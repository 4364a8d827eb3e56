package detect

import (
	"bytes"
	"strings"
	"time"

	"github.com/searxgate/searxgate/results"
)

// Kind is the class of a verdict: what the pool learns from one answer.
type Kind uint8

// The kinds of verdict. The zero Kind is none of them, so a Verdict left
// unset is never taken for a good answer.
const (
	// OK: a results page or JSON answer for the query asked.
	OK Kind = iota + 1
	// Soft: the instance answered, but uselessly (empty, off topic, every
	// engine down).
	Soft
	// Refused: the instance, or what stands in front of it, would not
	// answer us (rate limit, limiter redirect, disabled format, forbidden,
	// bot challenge, unavailable).
	Refused
	// Failed: no usable answer (server error, unreadable body, too large,
	// timeout, transport error).
	Failed
	// Redirect: the query's own answer is a redirect off the instance (an
	// external bang, feeling lucky): Verdict.Location says where. It says
	// nothing of the instance.
	Redirect
)

// String returns "ok", "soft", "refused" or "failed" ("unknown" for the
// zero Kind).
func (k Kind) String() string {
	switch k {
	case OK:
		return "ok"
	case Soft:
		return "soft"
	case Refused:
		return "refused"
	case Failed:
		return "failed"
	case Redirect:
		return "redirect"
	}
	return "unknown"
}

// Reason says why a verdict is not OK. Its values are stable: they are
// used as metric labels and stored by the pool.
type Reason string

// Reasons, by the kind of verdict that carries them.
const (
	// Soft.
	OffTopic    Reason = "off_topic"    // the echoed query differs, or too few results mention the query
	EnginesDown Reason = "engines_down" // fewer than FewResults results and engines listed as unresponsive

	// Refused.
	RateLimited     Reason = "rate_limited"     // 429 Too Many Requests
	Blocklisted     Reason = "blocklisted"      // 429 IP is on BLOCKLIST
	LimiterRedirect Reason = "limiter_redirect" // any 3xx on a search, or the front page where results were expected
	FormatDisabled  Reason = "format_disabled"  // 403 on a non-HTML format
	Forbidden       Reason = "forbidden"        // any other 403, and 418
	BotChallenge    Reason = "bot_challenge"    // Cloudflare, Anubis, DDoS-Guard and similar interstitials
	Unavailable     Reason = "unavailable"      // 503

	// Failed.
	ServerError Reason = "server_error"       // 5xx other than 503
	BadBody     Reason = "bad_body"           // JSON that does not parse, HTML that is not a results page
	TooLarge    Reason = "too_large"          // a body longer than Answer.MaxBody
	Timeout     Reason = "timeout"            // set by the caller: no answer in time
	Transport   Reason = "transport"          // set by the caller: a connection or protocol error none of the below
	DNS         Reason = "dns"                // set by the caller: the instance's name did not resolve (no network?)
	ConnRefused Reason = "connection_refused" // set by the caller: nothing listens at the instance's address (a refused connection, never a refused search)
	TLS         Reason = "tls"                // set by the caller: the TLS handshake or certificate failed
	Reset       Reason = "reset"              // set by the caller: the connection was reset or closed mid-answer
	ClientError Reason = "client_error"       // a 4xx other than 403, 418 and 429 (a search the instance did not accept), or a search without a query

	// Redirect.
	ExternalBang Reason = "external_bang" // a !!bang search: SearXNG sends the client to the bang's site
	FeelingLucky Reason = "feeling_lucky" // a "!! words" search: SearXNG sends the client to the first result
)

// Kind returns the kind of verdict that carries r (0 for an unknown
// reason). Callers that classify timeouts and transport errors themselves
// use it to build their Verdict.
func (r Reason) Kind() Kind {
	switch r {
	case OffTopic, EnginesDown:
		return Soft
	case RateLimited, Blocklisted, LimiterRedirect, FormatDisabled, Forbidden, BotChallenge, Unavailable:
		return Refused
	case ServerError, BadBody, TooLarge, Timeout, Transport, DNS, ConnRefused, TLS, Reset, ClientError:
		return Failed
	case ExternalBang, FeelingLucky:
		return Redirect
	}
	return 0
}

// Reasons returns every reason, in a fixed order (for metric labels).
func Reasons() []Reason {
	return []Reason{
		OffTopic, EnginesDown,
		RateLimited, Blocklisted, LimiterRedirect, FormatDisabled, Forbidden, BotChallenge, Unavailable,
		ServerError, BadBody, TooLarge, Timeout, Transport, DNS, ConnRefused, TLS, Reset, ClientError,
		ExternalBang, FeelingLucky,
	}
}

// FewResults is the number of results under which an answer that lists
// unresponsive engines is Soft with EnginesDown: with engines down, a
// short page is likely a poor one, and another instance may do better.
const FewResults = 3

// Header gives one response header by name. *fasthttp.ResponseHeader
// satisfies it.
type Header interface {
	Peek(key string) []byte
}

// Headers is a Header backed by a map; lookups ignore the case of keys.
type Headers map[string]string

// Peek returns the value of key, matched without regard to case, or nil.
func (h Headers) Peek(key string) []byte {
	if v, ok := h[key]; ok {
		return []byte(v)
	}
	for k, v := range h {
		if strings.EqualFold(k, key) {
			return []byte(v)
		}
	}
	return nil
}

// Answer is what came back from one upstream search.
type Answer struct {
	Status int
	Header Header // may be nil
	Body   []byte // already decoded (gzip undone by the caller)
	Format string // "json" or "html": what was asked upstream ("" means html)
	Query  Query  // the q that was asked (ParseQuery)
	// Instance is the base URL of the instance asked ("https://host/"):
	// a redirect to its own front page is its limiter's, one off it may
	// be the query's answer.
	Instance string
	Now      time.Time // for a Retry-After given as an HTTP date
	MaxBody  int       // 0 = no cap; a body longer than this is TooLarge
}

// Verdict is the judgement on one Answer.
type Verdict struct {
	Kind       Kind
	Reason     Reason        // "" for OK
	RetryAfter time.Duration // 0 = the server gave none
	Results    *results.Page // set for OK, and for Soft when anything was read
	// Location is where a Redirect verdict sends the client: an absolute
	// http or https URL off the instance.
	Location string
	// Formats lists the non-HTML formats an HTML results page offers
	// (its "Download results" box), sorted; nil when the answer was not
	// an HTML results page or offers none.
	Formats []string
}

// Classify returns the verdict on one upstream answer to a search. It
// never keeps a reference to a.Body: everything in the verdict is copied.
func Classify(a Answer) Verdict {
	if a.MaxBody > 0 && len(a.Body) > a.MaxBody {
		return Verdict{Kind: Failed, Reason: TooLarge}
	}
	if strings.TrimSpace(a.Query.Text()) == "" {
		// SearXNG answers a search without a query with 400 (JSON) or its
		// front page (HTML); neither says anything about the instance.
		return Verdict{Kind: Failed, Reason: ClientError}
	}
	if cfChallengeHeader(a.Header) {
		return Verdict{Kind: Refused, Reason: BotChallenge, RetryAfter: ParseRetryAfter(a.Header, a.Now)}
	}
	if a.Status >= 200 && a.Status < 300 {
		return classifyBody(a)
	}
	v := classifyStatus(a)
	v.RetryAfter = ParseRetryAfter(a.Header, a.Now)
	return v
}

// classifyStatus judges an answer whose status is not 2xx.
func classifyStatus(a Answer) Verdict {
	if isChallenge(a.Header, a.Body) {
		return Verdict{Kind: Refused, Reason: BotChallenge}
	}
	s := a.Status
	switch {
	case s >= 300 && s < 400:
		return classifyRedirect(a)
	case s == 429:
		if bytes.Contains(a.Body, []byte("BLOCKLIST")) {
			return Verdict{Kind: Refused, Reason: Blocklisted}
		}
		return Verdict{Kind: Refused, Reason: RateLimited}
	case s == 403:
		if !isHTMLFormat(a.Format) && !isCDNBlock(a.Header, a.Body) {
			return Verdict{Kind: Refused, Reason: FormatDisabled}
		}
		return Verdict{Kind: Refused, Reason: Forbidden}
	case s == 418:
		return Verdict{Kind: Refused, Reason: Forbidden}
	case s == 503:
		return Verdict{Kind: Refused, Reason: Unavailable}
	case s >= 500 && s < 600:
		return Verdict{Kind: Failed, Reason: ServerError}
	case s >= 400 && s < 500:
		return Verdict{Kind: Failed, Reason: ClientError}
	}
	// 1xx as a final status, or nothing a server sends.
	return Verdict{Kind: Failed, Reason: BadBody}
}

// classifyBody judges a 2xx answer by what its body says.
func classifyBody(a Answer) Verdict {
	if !isHTMLFormat(a.Format) {
		if strings.EqualFold(a.Format, "json") {
			r, err := ParseJSON(a.Body)
			if err == nil {
				return judge(a.Query, r, nil)
			}
		}
		// Not the JSON asked for (or a format this package does not
		// read): say what it is, if it says.
		return notResults(a, nil)
	}
	p, err := parseHTML(a.Body)
	if err != nil {
		return notResults(a, p)
	}
	return judge(a.Query, p.results, p.formats)
}

// notResults judges a 2xx body that is not the answer asked for. p is the
// parsed HTML page when there is one.
func notResults(a Answer, p *htmlPage) Verdict {
	if isChallenge(a.Header, a.Body) {
		return Verdict{Kind: Refused, Reason: BotChallenge}
	}
	if p == nil && looksHTML(a.Body) {
		p, _ = parseHTML(a.Body)
	}
	if p != nil && p.frontPage {
		return Verdict{Kind: Refused, Reason: LimiterRedirect}
	}
	return Verdict{Kind: Failed, Reason: BadBody}
}

// judge gives the verdict on results read from a good answer.
func judge(query Query, r *results.Page, formats []string) Verdict {
	v := Verdict{Kind: OK, Results: r, Formats: formats}
	asked := queryWords(query.Text())
	switch {
	case r.Query != "" && !sameWords(asked, queryWords(r.Query)):
		v.Kind, v.Reason = Soft, OffTopic
	case r.NothingFound() && len(r.UnresponsiveEngines) == 0:
		// An honest "nothing found": every engine answered and none had
		// anything. OK, as SearXNG itself serves it.
	case len(r.Results) < FewResults && len(r.UnresponsiveEngines) > 0:
		v.Kind, v.Reason = Soft, EnginesDown
	default:
		if words := matchWords(asked); !mentioned(words, r.Results) || templated(r.Results) || echoes(asked, words, r.Results) {
			v.Kind, v.Reason = Soft, OffTopic
		}
	}
	return v
}

// isHTMLFormat reports whether format asks for SearXNG's HTML page.
func isHTMLFormat(format string) bool {
	return format == "" || strings.EqualFold(format, "html")
}

// looksHTML reports whether body starts, after white space, with markup.
func looksHTML(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n\ufeff")
	return len(b) > 0 && b[0] == '<'
}
