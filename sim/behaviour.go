package sim

import (
	"fmt"
	"slices"
	"strings"
)

// Behaviour names the way one simulated instance treats its clients. The
// string value is what the command line and the control endpoint show.
type Behaviour string

// The behaviours. Each one documents what a search (GET or POST /search)
// gets; unless said otherwise the other paths (/config, /healthz, /,
// /opensearch.xml, /autocompleter) answer as a healthy SearXNG does.
const (
	// Fast answers every search well after a short latency (default 40ms).
	Fast Behaviour = "fast"
	// Medium answers every search well after a middling latency (default 250ms).
	Medium Behaviour = "medium"
	// Slow answers every search well after a long latency (default 1.5s).
	Slow Behaviour = "slow"

	// RateLimitSeconds answers RateBurst searches per RateWindow per client,
	// then 429 "Too Many Requests" with Retry-After in seconds for
	// RetryAfter; every search inside that time is refused again.
	RateLimitSeconds Behaviour = "ratelimit-seconds"
	// RateLimitDate is RateLimitSeconds with Retry-After as an HTTP date.
	RateLimitDate Behaviour = "ratelimit-date"
	// RateLimitBare is RateLimitSeconds without any Retry-After header (the
	// refusal still lasts RetryAfter inside the instance).
	RateLimitBare Behaviour = "ratelimit-bare"

	// Limiter is SearXNG's limiter as shipped: the bot checks on the
	// headers (429 on every path but /healthz for a bot User-Agent; on
	// /search also for an Accept without text/html or */*, an
	// Accept-Encoding without gzip or deflate, a missing Accept-Language)
	// and the sliding windows per client address (non-HTML formats 4 an
	// hour; every search 15 in 20 s and 150 in 10 min), refusing with 429
	// "Too Many Requests" and no Retry-After. /config says limiter enabled.
	Limiter Behaviour = "limiter"
	// LinkToken is Limiter with botdetection.ip_limit.link_token on (and
	// public_instance true in /config): a client that never loads the
	// page's /client<token>.css is suspicious; its 4th search within 30
	// days is answered 302 to "/", and before that it may make only 2
	// searches in 20 s and 10 in 10 min (429 beyond), as SearXNG does.
	LinkToken Behaviour = "link-token"
	// JSONDisabled answers like Medium but its settings do not enable the
	// JSON format, whatever InstanceConfig.JSON says: format=json gets
	// Werkzeug's 403 Forbidden page, HTML works.
	JSONDisabled Behaviour = "json-disabled"

	// CloudflareChallenge403 answers every path with Cloudflare's
	// "Just a moment..." challenge, status 403, cf-mitigated: challenge.
	CloudflareChallenge403 Behaviour = "cloudflare-403"
	// CloudflareChallenge200 answers every path with the same challenge
	// page but status 200 and no cf-mitigated header.
	CloudflareChallenge200 Behaviour = "cloudflare-200"
	// AnubisChallenge answers every path with Anubis's proof-of-work page
	// ("Making sure you're not a bot!"), status 200.
	AnubisChallenge Behaviour = "anubis"
	// DDoSGuard answers every path with DDoS-Guard's check page, status
	// 403, Server: ddos-guard and a __ddg cookie.
	DDoSGuard Behaviour = "ddos-guard"

	// OffTopic answers a different query than the one asked: the echoed
	// query and every result are about other words.
	OffTopic Behaviour = "off-topic"
	// EmptyEnginesDown answers 200 with no results and every engine listed
	// in unresponsive_engines.
	EmptyEnginesDown Behaviour = "empty-engines-down"
	// Hang reads the search and never answers; the connection stays open
	// until the client gives up, HangFor passes or the fleet closes.
	Hang Behaviour = "hang"
	// ResetMidBody sends the headers and half of the body, then resets the
	// connection (a TCP RST; in memory, a close).
	ResetMidBody Behaviour = "reset-mid-body"
	// Dead has nothing listening on its address: connection refused.
	Dead Behaviour = "dead"
	// BrokenJSON answers 200 with a body cut in the middle (JSON that does
	// not parse, or an HTML page that ends before its results).
	BrokenJSON Behaviour = "broken-json"
	// HugeBody answers 200 with a well-formed answer of BodySize bytes
	// (default 16 MiB), chunked.
	HugeBody Behaviour = "huge-body"
	// Flapping is up for FlapPeriod and down for FlapPeriod, in turn, by
	// the fleet's clock; down, every path answers nginx's 502 Bad Gateway.
	Flapping Behaviour = "flapping"
	// Unavailable503 answers every path 503 Service Unavailable with a
	// Retry-After of RetryAfter in seconds.
	Unavailable503 Behaviour = "unavailable-503"
	// Degrading answers well but each search is slower than the one
	// before by DegradeStep.
	Degrading Behaviour = "degrading"
	// Hostile answers on-topic results whose titles and contents carry
	// markup (<script>, <img onerror>, <iframe>) and whose links include
	// javascript: and data: URLs, unescaped in the HTML page.
	Hostile Behaviour = "hostile"

	// StallBody sends the headers (and a few bytes of the body), then
	// stalls like Hang.
	StallBody Behaviour = "stall-body"
	// SlowLoris sends the answer one byte per SlowLorisEvery (default 1s).
	SlowLoris Behaviour = "slow-loris"
	// GzipBomb answers Content-Encoding: gzip with a small body that
	// inflates to BodySize bytes (default 64 MiB) of JSON whitespace.
	GzipBomb Behaviour = "gzip-bomb"
	// InvalidUTF8 answers results whose titles and contents hold bytes
	// that are not UTF-8, raw in the JSON and the HTML.
	InvalidUTF8 Behaviour = "invalid-utf8"
	// RedirectLoop answers 302 to the very URL asked.
	RedirectLoop Behaviour = "redirect-loop"
	// RedirectOtherHost answers 302 to the same search on another host
	// (127.0.0.2, still loopback, where nothing of the fleet listens).
	RedirectOtherHost Behaviour = "redirect-other-host"
	// NotFound404 answers every search 404 Not Found (a reverse proxy
	// that sends /search nowhere); its other paths answer as usual.
	NotFound404 Behaviour = "notfound-404"
	// Thin answers fast but with its big engines suspended, as public
	// instances often are: google, bing and duckduckgo are listed in
	// unresponsive_engines as SearXNG 2026 writes them ("Suspended:
	// CAPTCHA", "Suspended: too many requests", "Suspended: access
	// denied"), and ThinResults results (default 4) come from wikipedia
	// alone. Its state, not the query's: every search gets the same.
	Thin Behaviour = "thin"
	// Partial answers like Fast with one engine, google, suspended
	// ("Suspended: CAPTCHA"): its share of the page is missing (7 results
	// of 10 by default).
	Partial Behaviour = "partial"
	// EchoSpam answers spam generated from the query: every result's title
	// and snippet are the query's own words and nothing else, shuffled and
	// cut differently in each (no two titles alike), each on a URL of its
	// own.
	EchoSpam Behaviour = "echo-spam"
	// PartialEchoSpam answers spam that wraps parts of the query in one
	// canned text with a counter: titles "Buy <some of the query's words>
	// cheap — spam N", snippets "Best <others> deals, offer N", each on a
	// URL of its own.
	PartialEchoSpam Behaviour = "partial-echo-spam"
)

// Behaviours lists every behaviour, in the order of the constants.
func Behaviours() []Behaviour {
	return slices.Clone(allBehaviours)
}

var allBehaviours = []Behaviour{
	Fast, Medium, Slow,
	RateLimitSeconds, RateLimitDate, RateLimitBare,
	Limiter, LinkToken, JSONDisabled,
	CloudflareChallenge403, CloudflareChallenge200, AnubisChallenge, DDoSGuard,
	OffTopic, EmptyEnginesDown, Hang, ResetMidBody, Dead, BrokenJSON, HugeBody,
	Flapping, Unavailable503, Degrading, Hostile,
	StallBody, SlowLoris, GzipBomb, InvalidUTF8, RedirectLoop, RedirectOtherHost,
	NotFound404, EchoSpam, PartialEchoSpam, Thin, Partial,
}

// ParseBehaviour returns the behaviour named s (case-insensitive).
func ParseBehaviour(s string) (Behaviour, error) {
	b := Behaviour(strings.ToLower(strings.TrimSpace(s)))
	if b.Valid() {
		return b, nil
	}
	names := make([]string, len(allBehaviours))
	for i, k := range allBehaviours {
		names[i] = string(k)
	}
	return "", fmt.Errorf("%w: %q (known: %s)", ErrUnknownBehaviour, s, strings.Join(names, ", "))
}

// Valid reports whether b is one of the behaviours.
func (b Behaviour) Valid() bool {
	return slices.Contains(allBehaviours, b)
}

// String returns the behaviour's name.
func (b Behaviour) String() string { return string(b) }

// limiterOn reports whether the instance runs SearXNG's limiter.
func (b Behaviour) limiterOn() bool { return b == Limiter || b == LinkToken }

// wholeSite reports whether the behaviour applies to every path, not only
// to searches.
func (b Behaviour) wholeSite() bool {
	switch b {
	case CloudflareChallenge403, CloudflareChallenge200, AnubisChallenge, DDoSGuard,
		Flapping, Unavailable503:
		return true
	}
	return false
}

// answers reports whether searches to an instance with this behaviour
// normally get a usable answer (the fleet's "good" instances).
func (b Behaviour) answers() bool {
	switch b {
	case Fast, Medium, Slow, JSONDisabled, Degrading, Limiter, LinkToken,
		RateLimitSeconds, RateLimitDate, RateLimitBare, Flapping, Thin, Partial:
		return true
	}
	return false
}
