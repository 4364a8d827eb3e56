// Package pool is searxgate's learned state about the SearXNG instances:
// which are fast, which fail or refuse, which may be used now. The proxy
// checks instances out of it, best first, and records what each search came
// to. web reads it; store keeps its Export for Import. Whether an instance
// may be handed out now is one rule, and Stats.PoolWhy says its answer.
//
// # Ranking
//
// Each instance scores the expected time to a good answer
//
//	(latency_ms*(1 + FailurePenalty*failure) + ThinCost_ms*min(1, (1 - fullness)/HalfPage)) * jitter
//
// and the lowest goes first. latency_ms is an EWMA of answer times, or the
// instance's prior until it is measured. failure is an EWMA of outcomes: 1
// for a refusal, a failure or a soft answer, 0 for a good one. A refusal
// never lowers the latency, so a fast 429 never makes an instance look
// fast. fullness is how full its answers are (below); with every
// instance full the thin term is 0. jitter is drawn in 1 ± Config.Jitter at every ranking. Under
// PrimaryBackup the Own instances come first, in the order they were added.
//
// # Quality
//
// Learn takes what each good answer holds: how full it was against the
// page, and which engines answered or are reported suspended. Fullness
// fades back to 1 with QualityHalfLife, so a recovered instance is tried
// again. Suspensions are the instance's state: they move no circuit and
// no failure average (the rule in full: quality.go).
//
// # Whose outcome
//
// Every Outcome has an Owner: the instance (the zero value), the query, the
// client or searxgate. Only the instance's own outcomes teach the pool. The
// others give the lease back and are counted as excused. The proxy decides
// owners before it records (proxy/blame.go): the pool cannot undo an
// outcome. Hold frees a lease's slot while its outcome waits for a second
// instance's answer.
//
// # Circuit breaker
//
// A refusal opens the instance's circuit. It stays open for the server's
// retry-after, else for Cooldown, doubled per opening since the last good
// answer, capped by MaxCooldown. FailStrikes failures in a row open it too,
// and so do SoftStrikes soft answers in a row. When the cooldown ends the
// instance is half-open: Checkout hands out a single trial lease. An answer
// closes the circuit; a refusal or failure opens it again for twice as
// long. A lease taken before its circuit opened is stale: its outcome still
// feeds the averages but moves no circuit, so one burst of refusals counts
// once.
//
// # Concurrency and time
//
// One RWMutex guards everything; Rank, Stats, Snapshot and Export only read
// it. Time comes from Config.Clock, read once per call; every time that
// leaves the pool is a wall-clock one. OnEvent runs after the lock is
// released, on the goroutine that caused the change.
//
// # Caveats
//
//   - URLs are opaque keys: callers pass them in one canonical form.
//   - Seed with an empty list removes every public instance; the
//     operator's removals are kept, so Seed does not bring them back.
//   - An Open circuit whose cooldown ended reads as HalfOpen at once; its
//     event fires when Checkout or Sweep next touches it.
//   - Sweep forgets ranking state, not counters; Reset forgets both.
package pool
