// Package pool is searxgate's learned state about the SearXNG instances it
// searches: which are fast, which fail or refuse, which may be used right
// now. The proxy checks instances out of it, best first, and records what
// each search came to; web reads it for the status page and metrics; store
// persists its Export and gives it back to Import. It imports only the
// standard library.
//
// # Ranking
//
// Each instance scores
//
//	latency_ms * (1 + FailurePenalty*failure) * jitter
//
// lowest first. latency_ms is an EWMA of response times (new sample weight
// 0.3; the first measurement replaces the prior) or, until the instance is
// measured, its prior: the searx.space median given to Seed, else
// Config.Prior. It is floored at 1 ms. failure is an EWMA of failures (new
// sample weight 0.25): 1 for a refusal, a failure or a soft answer, 0 for
// a good one. Only answers (OK and Soft) feed the latency, and a failure
// slower than the average (a timeout) raises it; a refusal never lowers
// it, so a 429 in 30 ms never makes an instance look fast. jitter is a
// factor drawn uniformly in 1 ± Config.Jitter at every ranking (1 when
// Jitter is 0). With MinInterval set, an instance checked out less than
// MinInterval ago ranks after every rested one, least recently used first.
// Ties go to the instance added first. Under PrimaryBackup, the Own
// instances come first, in the order they were added (MinInterval does
// not reorder them), and the public ones after them by score.
//
// # Whose outcome
//
// Every Outcome has an Owner: the instance (the zero value), the query,
// the client or searxgate itself. Only the instance's own outcomes teach
// the pool anything: the others give the lease back (a half-open trial
// with it) and are counted as excused, moving no circuit, streak, average
// or cooldown. The pool does not decide owners: the proxy does, before it
// records (proxy/owner.go), since the pool cannot undo an outcome. Hold
// frees a lease's in-flight slot while its outcome waits for a second
// instance's answer.
//
// # Circuit breaker
//
// A Refused outcome opens the instance's circuit for the server's
// retry-after when it gave one, else for Cooldown doubled per opening
// since the last OK answer; MaxCooldown caps both. Failed outcomes open it
// the same way when FailStrikes (3) come in a row: one timeout or reset
// is as often the network's or the query's as the instance's, three in a
// row on different searches are the instance's. SoftStrikes soft answers
// in a row open it too. When the cooldown ends the instance is half-open:
// Checkout hands out a single trial lease; an answer (OK or Soft) closes
// the circuit, a refusal or any failure opens it again for twice as long;
// a cancelled or excused trial gives the trial back. An open instance is
// never checked out. Leases taken before a circuit opened are stale: their
// outcomes still feed the averages and counters, but no longer move the
// circuit or the streaks, so one burst of refusals counts once.
//
// # Health
//
// Stats.Health, for people, is
//
//	speed  = clamp((5000 - latency_ms) / 4500, 0, 1)   // 1 at <= 500 ms
//	health = round(100 * (0.4*speed + 0.6*(1 - failure)))
//
// halved while half-open, and 0 while open or disabled. 100 means fast and
// clean.
//
// # Concurrency and time
//
// One RWMutex guards everything. Checkout and Record take it for writing
// for a scan of a compact array of candidates that rejects most of them on
// one comparison (a microsecond or two at 1,000 instances); Record does
// not allocate. Rank, Stats, Snapshot and Export take it for reading, and
// Snapshot only to copy the records, so readers never hold searches up for
// long. Time comes from
// Config.Clock, read once per call; internal times are durations since the
// pool was made (monotonic with the real clock), and every time that
// leaves the pool is a wall-clock one. The jitter comes from Config.Rand.
// OnEvent runs after the locks are released, on the goroutine that caused
// the change.
//
// # Caveats
//
//   - URLs are opaque keys: callers pass them in one canonical form.
//   - Seed with an empty list removes every public instance.
//   - An Open circuit whose cooldown ended reads as HalfOpen at once, but
//     its event fires when Checkout or Sweep next touches it.
//   - With Jitter on, Rank and Checkout draw separately, so Rank is only
//     an indication of what Checkout hands out.
//   - Sweep forgets ranking state, not counters; Reset forgets both.
//   - A lease is only given back by Record or by the end of its context:
//     one checked out with a context that never ends and never recorded
//     stays in flight for good (a held one holds no slot, but its trial).
//   - The operator's removals are remembered (and exported) so that Seed
//     does not bring them back; Add lifts one.
package pool
