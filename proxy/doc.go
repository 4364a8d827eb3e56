// Package proxy is searxgate's search path: it answers one SearXNG search
// from the pool of instances.
//
// A search is looked up in the result cache (memory, then the store behind
// the CacheStore interface), joins an identical search already in flight,
// or is sent upstream: the pool hands out the best instance within its
// politeness budget (by default 10 searches in 20 s and 100 in 10 min per
// instance, below SearXNG's limiter) and its terms (no searches to an
// instance with the link-token check on), the answer is judged by
// detect.Classify, the outcome recorded in the pool, and on a refusal,
// failure or soft answer the next instance is tried, all within one
// deadline and an attempt cap. A hedge starts the next instance early when
// the current one is slower than its average says. Retries and hedges
// together stay within ExtraRatio of first attempts.
//
// Cache and coalescing keys are keyed hashes of the search (HMAC-SHA256
// under the secret a CacheKeyer store offers, or one made per process),
// never the search itself; a key's second half is a key the store may seal
// the answer with and never keep (see Keyer). DropAnswersOf (called by
// Forget, and by cmd when an instance is disabled) drops an instance's
// answers from memory and from a CacheDropper store; PurgeCache drops all.
//
// Each instance's terms come from its /config, read in the background at
// most once a day (ReadTerms at start, and when a search first meets it),
// and from the formats its results page lists: JSON is used only where the
// limiter is off and JSON is known to work; the HTML page otherwise.
//
// The upstream client (fasthttp, one HostClient per instance) says who it
// is in its User-Agent, sends a complete header set with the search's own
// Accept-Language, nothing of the client's, never follows redirects, caps
// and decodes gzip bodies within MaxBody, and renews keep-alive
// connections after a jittered lifetime.
//
// Caveats: fasthttp cannot cancel a request in flight, so a hedge that
// lost runs until its answer or its search's deadline (its outcome is
// recorded then; a timeout cut short before the instance had a fair chance
// counts as cancelled). The politeness budget is per process: two
// searxgates in front of the same instances each keep their own. An
// answer an attempt brings back at the very moment its instance's answers
// are dropped may still be cached (it was not there to drop).
package proxy
