// Package proxy is searxgate's search path: it answers one SearXNG search
// from the pool of instances.
//
// It orchestrates: a search as a value (search.go) with its attempts,
// hedges, fan-out and deadline, whose outcome each attempt is (owner.go),
// the instance records, checkout and dispatching the slot queue, the
// cache (WriteBehind included) and coalescing, the metrics, and the
// interfaces shared state and persistence are reached through. Two
// packages of its own do the rest, and import neither proxy nor each
// other: proxy/upstream talks to the instances (the fasthttp client),
// proxy/polite keeps searxgate's manners as arithmetic (the budgets, the
// extra budget, the fair shares, the slot queue's own structure and its
// earliest-slot arithmetic). Window, MaxWindow and UpstreamConfig, the
// types Config exposes, are aliases of theirs.
//
// A search is looked up in the result cache (memory, then the shared cache
// and the store behind the CacheStore interface), joins an identical
// search already in flight, or is sent upstream. Only then is its client admitted (Config.Admit: a
// cache hit or a coalesced search costs no instance anything, so it is
// never counted). The pool hands out the best instance within its
// politeness budget (by default 10 searches in 20 s and 100 in 10 min per
// public instance, below SearXNG's limiter; none for the operator's own
// instances unless OwnBudget says so, or their /config says SearXNG's
// limiter is on: then below the limiter's windows, LimiterBudget), its terms (no searches to an
// instance with the link-token check on) and the client's fair share of
// the public budget (polite.Fair). The budgets and fair shares are package
// proxy/polite (LimiterBudget too). The answer is judged by detect.Classify,
// the outcome recorded in the pool with its owner (owner.go: only the
// instance's own failures move its circuit; an answer that cannot tell by
// itself, such as engines down, off-topic, a 5xx, a 4xx or a timeout,
// waits for a second instance's), and on a refusal, failure or soft answer
// the next instance is tried, all within one deadline and an attempt cap.
// Two poor answers alike are the query's own: served with their engines'
// errors and cached for a minute; so are poor answers that all differ
// once no other instance can be asked. Two 5xx or two 4xx alike end the
// search as the query's (NoAnswerError.Why "query"; "query_timeout" when
// its own "<N" outlasts the deadline). A bang's redirect off the instance
// is the query's answer, served as a redirect, never cached, never
// fanned out. A hedge starts the next instance early when the current
// one is slower than its average says. Retries, hedges and second
// opinions together stay within ExtraRatio of first attempts over
// ExtraWindow, or ExtraFloor when that is more (by default a fifth, or 20
// a minute), hedges within half of it. One search is a value (search.go)
// that owns its attempts, hedges and deadline.
//
// A search that finds no instance free now only because of in-flight
// caps, politeness windows, a half-open trial or a cooldown ending soon
// waits in the slot queue (queue.go, over polite.Queue) for the first slot that frees, within
// its deadline. It is refused at once, never after waiting, when the
// earliest slot lies past its deadline or the queue is full, and its
// *NoAnswerError then carries that real earliest time as RetryAfter.
//
// An honest "nothing found" (no results, no engine down) is an answer:
// served as SearXNG serves it, cached for EmptyTTL, after at most one
// confirming attempt on another instance free at once. It never counts
// against the instance.
//
// Each instance's terms come from its /config, read at start (ReadTerms in
// the background; ReadTermsNow for the operator's own before serving), and
// before an instance's first search when they were never read, then at
// most once a day (at once when they were stored by a searxgate that kept
// the engines without their capabilities); and from the formats its results page lists: JSON is
// used only where the limiter is off and the page listed JSON (or it
// answered JSON before); the HTML page otherwise. A 403 on JSON falls back
// to the HTML page in the same attempt.
//
// In memory (the cache, the searches in flight) a search is its plain key,
// so a hit costs no hashing; what leaves memory (the store's file, the
// shared cache) is keyed by a keyed hash of the search (HMAC-SHA256 under
// the secret a CacheKeyer store offers, or one made per process), never
// the search itself, and its answer sealed with the key's second half (see
// SealAnswer). DropAnswersOf (called by
// Forget, and by cmd when an instance is disabled) drops an instance's
// answers from memory, the shared cache and a CacheDropper store;
// PurgeCache drops all; PruneCache drops what is past StaleFor.
//
// WriteBehind is the CacheStore over a file of sealed answers (a
// SealedFile: the store). Reads go to the file; writes wait in a bounded
// queue, sealed only when a Flush takes them (off the request path, and
// not at all for answers pushed out first), and are written by the
// caller's own transaction; a Flush that fails puts them back, and a drop
// or purge waits for a Flush under way, so it cannot be undone by it.
//
// Config.NoCache keeps nothing: no answer (nor an empty one, the query's
// own poor one or an autocompletion) is put in or read from memory, the
// shared cache or the store, so every search is asked upstream and none is
// served stale. Identical searches in flight in one process still share
// one upstream search; across replicas they do not (their answers meet in
// the shared cache). A WriteBehind with NoCache drops what an earlier run
// left in its file.
//
// Metrics (metrics.go) counts client searches, upstream attempts, the
// queue and the shared replicas' work in a VictoriaMetrics metrics set of
// each Proxy's own (never the library's global one): counters, a gauge
// and Prometheus histograms with le buckets from 5 ms to 8 s; Families
// gives their HELP texts, which the library has none of. Recording one
// search allocates nothing. Each instance's lifetime totals by verdict
// and reason stay out of the set: web labels them, bounded, at scrape
// time.
//
// The upstream client is package proxy/upstream (fasthttp, one
// HostClient per instance, kept in the instance's record): it says who it
// is in its User-Agent, sends a complete header set with the search's own
// Accept-Language, nothing of the client's, never follows redirects, caps
// and decodes gzip bodies within MaxBody, and renews keep-alive
// connections after a jittered lifetime. Its failures are told apart as
// dns, refused, tls, reset, timeout (and transport for anything else).
// Attempts and /config reads run on workers that stay parked for a while
// after their work (spawn): a new goroutine per attempt copied its grown
// stack up again every time.
//
// Caveats: fasthttp cannot cancel a request in flight, so a hedge that
// lost runs until its answer or its search's deadline (its outcome is
// recorded then; a timeout cut short before the instance had a fair chance
// is searxgate's own, excused). The politeness budget and the fair share are per
// process unless Config.Shared says otherwise (shared.go: replicas that
// share a budget, answers, searches in flight and half-open trials, with
// package redis); the fair share and the in-flight caps stay per process.
// The shared budget (and a shared trial) is asked after the local checkout;
// dispatch asks it outside the queue's lock, the waiter set aside in its
// place meanwhile, so a slow answer holds up that waiter and the
// dispatching goroutine, never the queue: an implementation should still
// answer within milliseconds. The fair share counts buckets of a tenth of
// a window, so a client's share frees up to a tenth of a window late,
// never early. A waiting search is
// woken when an attempt or an autocompletion ends, when the pool takes a
// lease back by itself (its context ended), or when the window or
// cooldown it waits for runs out. A budget counts a search when it is
// sent (its terms may be read first), and every window has a margin of
// half a second.
// An answer an attempt brings back at the very moment its instance's
// answers are dropped may still be cached (it was not there to drop).
package proxy
