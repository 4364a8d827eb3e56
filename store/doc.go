// Package store keeps what searxgate learns and what its operator says, in
// one bbolt file (searxgate.db in the data folder). So a restart does not
// send searxgate back to instances it knows refuse it. It is the only
// package that imports bbolt.
//
// It knows none of its callers' types: it keeps bytes and a few small
// records of its own, in these buckets:
//   - meta: the schema version, checked at Open, and the cache secret
//     (CacheSecret);
//   - pool and caps: per instance URL, learned state and capabilities,
//     written in batches;
//   - operators: what the operator said, each change its own synced
//     transaction;
//   - directory: the last searx.space list fetched, with its ETag;
//   - cache and cache_order: the result cache, oldest evicted first.
//
// A cache entry names the instance that answered, for CacheDropSource. Keys
// and values are kept as given: searxgate's keys are keyed hashes and its
// values sealed answers, so nothing here is query text.
//
// # Guarantees
//
// One Batch is one bbolt transaction, synced before WriteBatch returns,
// but for the cache entries past a 64th of the cache's bound, written in
// further transactions of that size (so that the file keeps its bound,
// see WriteBatch). A process killed at any moment leaves every batch
// WriteBatch reported written. Every read returns copies the caller owns.
//
// Open takes the file's lock with a timeout: a second searxgate on the same
// file fails with ErrLocked. Before bbolt reads anything, Open checks the
// file's structure itself (check.go), then runs bbolt's own check. A
// damaged file is renamed to "<path>.damaged-<UTC timestamp>" and logged,
// and a fresh file is started, so searxgate still serves. Store.Recovered
// reports where the damaged file went.
//
// # Keeping the file small
//
// bbolt never shrinks its file, and a freed page keeps its bytes until
// reused. So CacheMaxBytes counts each entry as the space it takes in the
// file, and the file is compacted when it outgrows its bound (compact.go).
// A compaction copies only what is live into a new file and renames it over
// the old one. A crash during one leaves the old file whole. CachePurge
// compacts at once. The freelist is not written to the file: Open rebuilds
// it by walking the trees.
//
// Caveats:
//   - The lock is an advisory flock. Without flock (not Linux, the BSDs or
//     macOS), the structural check may read a file another process writes.
//   - A file from a newer searxgate is treated as damaged and moved aside:
//     downgrading starts afresh.
//   - A fault inside bbolt's Open on a damaged file leaks its descriptor
//     until the process ends.
//   - An entry larger than CacheMaxBytes is not stored. Expired entries
//     stay readable, as stale answers, until evicted or pruned
//     (CachePrune).
//   - Between compactions, dropped entries stay in free pages: seal values
//     that must not be read after they are dropped, or call CachePurge.
//   - The cache secret is in the same file as the cache: someone with the
//     file can test whether a given search was cached.
package store
