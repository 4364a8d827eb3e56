// Package redis shares searxgate's manners between replicas through Redis
// (or Valkey): several searxgates behind one load balancer, leaving
// through one egress address, behave towards the public instances as one.
// It implements the interfaces package proxy defines for it
// (proxy.SharedBudget and SharedRestamper, proxy.SharedCache,
// proxy.RefusalFeed, proxy.SharedTrials); cmd wires it
// in with --redis. Nothing else in searxgate imports the Redis client.
//
// What is shared:
//
//   - The politeness budget of each public instance (proxy.Config.Budget:
//     10 searches per 20 s and 100 per 10 min by default) is one sliding
//     window per egress group. A Lua script takes one search from every
//     window at once, or none, in sorted sets (one per window and
//     instance), timed by Redis's clock (TIME): the replicas' clocks do not
//     matter. The group takes one search fewer than each window's Max: the
//     one kept as a margin is for what the windows cannot see exactly (a
//     search whose move to its send time was lost, the moment between
//     Redis's clock and the instance's, a window straddling an outage).
//     A search is taken when it is planned and moved to when it is sent
//     (Restamp, a queued write), so that the windows count what the
//     instance sees. The proxy's local budget stays the quick pre-check;
//     this one has the last word.
//   - Refusals: a circuit that opens on one replica (a 429 with its
//     Retry-After, a failure's cooldown) is published on the group's
//     channel, and the others open it for the same time (pool.OpenUntil),
//     capped at MaxHeard (10 min; see refusals.go for why). It is also
//     kept as a key for that time, read by a replica that starts, or whose
//     Redis comes back, meanwhile. The replica that opened it remembers it
//     while it is open and writes it back when Redis returns or lost it.
//   - Answers, sealed as in searxgate.db: under the first half of the
//     proxy's keyed-hash cache key, encrypted with its second half, which
//     is never stored; so Redis holds no query text. The replicas key
//     with one secret, derived by cmd from the operator's (--secret),
//     never kept in Redis. A search in flight on one replica holds a
//     short lock key; another replica asked the same waits for the answer
//     to appear instead of asking an instance again.
//   - The trial search of a half-open instance: one replica at a time.
//   - The replicas seen in the last three heartbeats (a sorted set); one
//     that stops cleanly removes itself.
//
// Not shared: the in-flight cap, the latency and failure averages, the
// fair share of each client, autocompletion's budget, the operator's own
// instances' budget.
//
// When Redis fails: every operation a search waits on is bounded by
// OpTimeout (50 ms by default) and not retried. A search that waited it
// once opens a circuit of its own at once (so a slow Redis costs one
// timeout, not one per search); a few fast failures in a row (a refused
// connection) open it too. From then on searches do not ask Redis. Each
// replica keeps to 1/N of each window (N = the replicas seen when Redis
// last answered), counting its own searches, and answers from its own
// caches; this is logged once and shown by Status. While the circuit is
// open a heartbeat tries every 500 ms, and searches come back only after
// three in a row answered within OpTimeout (a Redis slower than that
// stays out: no flapping). Then each replica first writes back what it
// knows (its recent searches into the shared windows, the circuits it
// opened), reads the circuits the others opened, logs it once, and for
// two heartbeats keeps to its 1/N share as well as the shared windows,
// while the others write back theirs. Redis out of memory and refused
// credentials are named as such in the log and in Status.
//
// When Redis forgets (a restart without persistence, FLUSHALL, a
// failover to an empty replica, an eviction of the epoch key): an epoch
// key, made by the first heartbeat that misses it, is checked by every
// take (in the window script, atomically) and every heartbeat. A replica
// that finds it changed or gone takes nothing, and rebuilds at once as
// after an outage; it sends nothing to a public instance until as many
// replicas as it saw before (Redis forgot their heartbeats) wrote back
// what they remember (a set per epoch): a share of its own would not know
// what the others sent. When one stays silent past twice SeenFor (it
// died), the others decide on their 1/N share (N at least as before) and
// the windows as rebuilt, until the longest window went by.
//
// Trust. Whoever can connect to Redis and write to it, but does not know
// the operator's secret, can:
//   - make the replicas search less: fill the windows (a replica is held
//     at most one window's span per refusal), hold trial and lock keys (a
//     trial claim counts for no longer than the replica's own would, a
//     lock for three quarters of a search's deadline), delete or flush
//     the answers, fill Redis's memory, or FLUSHALL again and again (each
//     time the replicas fall back to their shares and rebuild);
//   - make the replicas search more, up to each replica's own local
//     budget (so N times the budget at most, with N replicas): by deleting
//     window keys but not the epoch key, which no replica can tell from
//     windows that emptied by themselves;
//   - read which instances were searched and how often, the replicas'
//     names, and when answers were stored and by whom (clear headers).
//
// It cannot: open a circuit anywhere (refusals and open: keys carry an
// HMAC-SHA256 under a key derived from the secret, covering the group,
// the sending replica, the instance and the time; a message older than
// 30 s or heard before, and a kept value past its own end, are dropped),
// make a replica serve a forged answer or an old answer as fresh (the
// answer is sealed under a key derived from the query and the secret,
// its header carries a MAC), learn the queries (keyed hashes, sealed
// bodies), or sign image links. The secret never reaches Redis. Who
// holds the secret (a replica, its host) can do all of the above; a
// circuit it opens on the others lasts at most MaxHeard.
//
// Rotating the secret: give every replica the new one and restart them
// (one by one is fine). Answers kept under the old key (in Redis and in
// each replica's store) are no longer found and expire; image links
// signed with the old key stop working; refusals sent between replicas
// with different secrets are dropped until all run the new one.
//
// Why go-redis (github.com/redis/go-redis/v9): it is the Redis project's
// own Go client, pure Go, reads redis://, rediss:// and unix:// URLs,
// speaks RESP2 (so any Redis or Valkey), and does pooling, TLS, AUTH,
// scripts (EVALSHA with EVAL fallback) and pub/sub with resubscription.
// rueidis is faster under heavy pipelining but needs RESP3 and brings
// client-side caching we do not want; searxgate makes one script call per
// upstream search, so simplicity wins. Writing the protocol by hand would
// mean redoing pooling, TLS and pub/sub reconnection.
//
// Caveats:
//   - At the moment Redis becomes unreachable (or forgets), a replica
//     does not know what the others searched just before: its share
//     counts only its own searches, so a window straddling the failure
//     may hold up to Max + Σ(Max/N − own searches) across the group (at
//     most about twice the budget when one replica made them all, none
//     when the load was spread). A replica that never reached Redis
//     takes N = 1.
//   - An eviction (maxmemory with an allkeys policy) may drop a window
//     but not the epoch key: that window then counts from empty. The
//     recommended volatile-lru never evicts the epoch key (it has no
//     TTL) but may evict a window (they have one); give Redis the memory
//     the answers need.
//   - Refusals carry the sender's clock: the replicas' clocks must be
//     within 30 s of each other (NTP).
//   - A half-open instance's trial is claimed by one replica at a time (a
//     key set if absent, for a search's deadline); the others hold it
//     until the claim ends. A trial that closes the circuit is not told
//     to the others: each takes its own trial later, one at a time.
//   - A search's lock key is held up to its deadline plus a second: a
//     replica that died with it makes the others search it themselves
//     after waiting three quarters of their deadline.
//   - Dropping an instance's answers (DropAnswersOf, PurgeCache) on one
//     replica drops them from Redis too (a scan of every answer), but not
//     from the other replicas' memory and stores: purge on each replica.
//   - One Redis or Valkey server (or a primary behind a proxy), not
//     Cluster: the drops scan and delete many keys at once. searxgate
//     speaks only what both share (RESP2, EVALSHA, sorted sets, SET NX
//     PX, PUBLISH/SUBSCRIBE, SCAN).
package redis
