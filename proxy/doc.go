// Package proxy is searxgate's search path: it answers one SearXNG search
// from the pool of instances.
//
// It owns a search as a value (search.go): its attempts, hedges, fan-out
// and deadline. It also owns the slot queue and the metrics. Four
// packages of its own do the rest, and never import proxy.
// proxy/instance keeps one record per instance: its terms, budget rings
// and host client. It alone says whether a search may go there now, and
// if not, why; every face asks it (Proxy.Instances). proxy/upstream talks
// to the instances; proxy/polite keeps the budgets, fair shares and queue
// as arithmetic; proxy/cache keeps the answers.
//
// # One search
//
// A search is looked up in the cache, joins an identical search in flight,
// or goes upstream. Only then is its client admitted (Config.Admit): a hit
// costs no instance anything. The pool hands out the best instance within
// its politeness budget (Config.Budget), its terms and the client's fair
// share. detect.Classify judges the answer. After a refusal, failure or
// soft answer the next instance is tried, all within one deadline and
// MaxAttempts. A hedge starts the next instance early when the current one
// is slower than its average. Retries, hedges and second opinions stay
// within ExtraRatio of first attempts.
//
// Every outcome is recorded with its owner (blame.go): only the instance's
// own move its circuit. An answer that cannot tell by itself (engines down,
// off topic, a 5xx, a 4xx, a timeout) waits for a second instance's. Two
// poor answers alike are the query's: served and cached for a minute. Two
// 5xx or two 4xx alike end the search as the query's . A bang's redirect
// off the instance is the query's answer: served, never cached or fanned
// out. An honest "nothing found" is an answer, cached for EmptyTTL after at
// most one confirming attempt; it never counts against the instance.
//
// A search that finds every instance busy waits in the slot queue
// (queue.go), within its deadline. When that slot lies past its deadline,
// or the queue is full, it is refused at once, with that earliest time as
// RetryAfter.
//
// # Terms
//
// Each instance's terms come from its /config (proxy/instance), read at
// most once a day, and from the formats its page lists. JSON is used only
// where the limiter is off and JSON is offered, or Config.OwnPassIP says
// an own instance passes searxgate (proxy/instance checks it); the HTML
// page otherwise. A 403 on
// JSON falls back to HTML in the same attempt. No search goes to an
// instance with the link-token check on.
//
// # Cache
//
// The cache is a room of its own, proxy/cache: plain keys in memory,
// keyed hashes and sealed answers outside it. Config.NoCache keeps
// nothing anywhere.
//
// Caveats:
//   - fasthttp cannot cancel a request in flight: a hedge that lost runs
//     until its answer or the deadline.
//   - Budgets and fair shares are per process unless Config.Shared says
//     otherwise (Replicas in shared.go, with package redis).
package proxy
