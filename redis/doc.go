// Package redis shares searxgate's manners between replicas through Redis
// or Valkey. Several searxgates behind one load balancer, leaving through
// one egress address, then behave towards the public instances as one. It
// implements the interfaces packages proxy and proxy/cache define
// (SharedBudget, SharedRestamper, cache.Shared, RefusalFeed,
// SharedTrials), and cmd wires
// it in with --redis. Nothing else imports the Redis client, go-redis
// (RESP2: any Redis or Valkey).
//
// What is shared, within one egress group:
//   - Each public instance's politeness budget, as sliding windows in
//     sorted sets. A Lua script takes a search from every window at once,
//     or none, by Redis's clock (TIME). The group keeps one search of each
//     window as a margin. The proxy's local budget is the quick pre-check;
//     this one has the last word.
//   - Refusals: a circuit that opens on one replica opens on the others for
//     the same time, capped at MaxHeard. A replica that starts meanwhile
//     reads it too.
//   - The trial search of a half-open instance: one replica at a time.
//   - The replicas seen in the last three heartbeats.
//
// Answers are shared across every group, sealed as in searxgate.db: Redis
// holds no query text. A search in flight on one replica holds a lock key;
// the others wait for its answer.
//
// Not shared: the in-flight cap, the latency and failure averages, each
// client's fair share, autocompletion's budget, the own instances' budgets.
//
// Every reply is read through a guard (guard.go): a length past what
// searxgate ever reads fails the read before the client allocates it,
// as a failure of Redis. When Redis fails, no search waits on it longer
// than OpTimeout, and only once (see Options). The replica then keeps to 1/N of each window, N being
// the replicas seen last, and answers from its own caches. It comes back
// after Recover heartbeats in a row answered in time, and writes back what
// it knows. When Redis forgets (a restart, FLUSHALL, a failover), an epoch
// key checked by every take tells, and the replicas rebuild as after an
// outage. Until every replica seen before has written back, none sends to
// a public instance.
//
// Whoever can write to Redis without the operator's secret can make the
// replicas search less, or more up to N times the local budget. It cannot
// open a circuit, forge an answer, or read the queries (auth.go says why).
// The secret never reaches Redis; docs/security.md says how to rotate it.
//
// Caveats:
//   - When Redis goes or forgets, a replica knows only its own recent
//     searches. A window straddling the failure may briefly hold more than
//     the budget when the load was uneven. A replica that never reached
//     Redis takes N = 1.
//   - An eviction that drops a window but not the epoch key goes unseen.
//     volatile-lru never evicts the epoch key; give Redis the memory the
//     answers need.
//   - The replicas' clocks must agree within 30 s (NTP), for refusals.
//   - Dropping an instance's answers on one replica drops them from Redis,
//     not from the other replicas' memory and stores. - One server, not
//     Cluster.
package redis
