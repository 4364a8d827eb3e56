// Package redis shares searxgate's manners between replicas through Redis
// (or Valkey): several searxgates behind one load balancer, leaving
// through one egress address, behave towards the public instances as one.
// It implements the interfaces package proxy defines for it
// (proxy.SharedBudget, proxy.SharedCache, proxy.RefusalFeed); cmd wires it
// in with --redis. Nothing else in searxgate imports the Redis client.
//
// What is shared:
//
//   - The politeness budget of each public instance (proxy.Config.Budget:
//     10 searches per 20 s and 100 per 10 min by default) is one sliding
//     window per egress group. A Lua script takes one search from every
//     window at once, or none, in sorted sets (one per window and
//     instance), timed by Redis's clock (TIME): the replicas' clocks do not
//     matter. The proxy's local budget stays the quick pre-check; this one
//     has the last word.
//   - Refusals: a circuit that opens on one replica (a 429 with its
//     Retry-After, a failure's cooldown) is published on the group's
//     channel, and the others open it for the same time (pool.OpenUntil).
//     It is also kept as a key for that time, read by a replica that
//     starts, or whose Redis comes back, meanwhile.
//   - Answers, sealed as in searxgate.db: under the first half of the
//     proxy's keyed-hash cache key, encrypted with its second half, which
//     is never stored; so Redis holds no query text. The replicas key with
//     one secret, kept in Redis (Secret). A search in flight on one replica
//     holds a short lock key; another replica asked the same waits for the
//     answer to appear instead of asking an instance again.
//   - The trial search of a half-open instance: one replica at a time.
//   - The replicas seen in the last minute (heartbeats in a sorted set).
//
// Not shared: the in-flight cap, the latency and failure averages, the
// fair share of each client, autocompletion's budget, the operator's own
// instances' budget.
//
// When Redis fails: every operation a search waits on is bounded by
// OpTimeout (10 ms by default) and not retried; a few failures in a row
// open a circuit of its own, and from then on searches do not ask Redis
// at all. Each replica then keeps to 1/N of each window (N = the replicas
// seen within the last minute when Redis last answered), counting its own
// searches, and answers from its own caches; this is logged once and
// shown by Status. A heartbeat tries again every 2 s; when Redis answers,
// each replica first writes its own recent searches back into the shared
// windows (a Redis that restarted empty gets back what the replicas
// remember), then shares again.
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
//   - At the moment Redis becomes unreachable, a replica does not know
//     what the others searched just before: its share counts only its own
//     searches, so a window straddling the failure may hold up to
//     Max + Σ(Max/N − own searches) across the group (at most about twice
//     the budget when one replica made them all, none when the load was
//     spread). A replica that never reached Redis takes N = 1.
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
//     Cluster: the drops scan and delete many keys at once.
package redis
