// Package store keeps what searxgate learns and what its operator says in
// one bbolt file (searxgate.db in the data folder), so that a restart does
// not send the gateway back to hammering instances it already knows refuse
// it. It is the only package that imports bbolt.
//
// The store knows nothing of the pool's, the proxy's or the directory's Go
// types: it keeps bytes (JSON made by its callers) and a few small records
// of its own, in these buckets:
//
//   - meta: the schema version, checked at Open, and the cache secret (32
//     random bytes made when the file is created; see CacheSecret);
//   - pool: instance URL -> learned state, written in batches;
//   - caps: instance URL -> capabilities learned, written in batches;
//   - operators: instance URL -> what the operator said (added, removed,
//     disabled, tier), written at once, each change its own synced
//     transaction;
//   - directory: the last searx.space list fetched, with its ETag,
//     Last-Modified and fetch time;
//   - cache and cache_order: the result cache and its index by the time each
//     entry was stored, so the oldest is evicted first. An entry is its key,
//     its source (the instance that answered, so that CacheDropSource can
//     drop an instance's answers), when it was stored and expires, and its
//     value. The store keeps keys and values as given: searxgate's keys
//     are keyed hashes and its values sealed answers (see proxy.WriteBehind),
//     so nothing here is query text. The store also counts its cache keys
//     in memory, by hash: CacheGet answers a key it does not hold (every
//     cache miss asks) without a read transaction.
//
// # Keeping the file small, and really freeing what is dropped
//
// bbolt never shrinks its file and never clears a page it frees: a dropped
// entry's bytes stay in a free page until a later write reuses it. So:
//   - the freelist is not written to the file (NoFreelistSync); bbolt
//     rebuilds it at Open by walking the trees;
//   - CacheMaxBytes counts each entry as the space it takes in the file
//     (its record rounded up to whole pages when it has pages of its own,
//     twice its size when it shares a page, plus its index entry), so the
//     bound is a bound on the file, not on the bytes handed in;
//   - the file is compacted (every bucket copied, in key order and with
//     full pages, into a new file that is synced, locked and renamed over
//     the old one) when its high-water mark passes what it held besides
//     the cache at the last compaction plus CacheMaxBytes plus a slack of a
//     quarter of CacheMaxBytes (at least 1 MiB, and at least four times the
//     largest batch of cache writes, which cannot reuse the pages they
//     free); at once by CachePurge; and at Open of a schema 1 file, whose
//     cache had plain-text keys and is dropped.
//
// Compaction was chosen over dropping and recreating a cache bucket: a
// dropped bucket's pages are free pages like any other, still holding their
// bytes, while a compacted file holds nothing but what is live. Its cost is
// a copy of the live data (about half a second for a full 64 MiB cache on
// a small server); reads wait only for the swap, writes for the whole
// copy. A crash during a compaction leaves the old file whole; the partial
// copy ("<path>.compact") is removed at the next Open.
//
// One [Batch] is one bbolt transaction, synced to disk before WriteBatch
// returns: a process killed at any moment leaves a file holding every batch
// that WriteBatch reported written. Every read returns copies the caller
// owns; nothing points into bbolt's memory map after a transaction ends.
//
// Open takes the file's lock with a timeout (a second searxgate on the same
// file fails with [ErrLocked]) and, before bbolt reads anything, checks the
// file's structure itself: its meta pages and their checksums, that the file
// is as long as its meta pages say, and that every page the trees and the
// freelist reference lies inside the file, once. Then bbolt's own
// consistency check runs and the schema version is read. A file that fails
// any of these is renamed to "<path>.damaged-<UTC timestamp>", logged with
// both paths, and a fresh file is started, so the gateway still serves; the
// new location is reported by [Store.Recovered].
//
// Caveats:
//   - The lock is an advisory flock. On platforms without flock (not Linux,
//     the BSDs or macOS) the structural check runs before bbolt takes its
//     lock, so it may read a file another process is writing.
//   - A file from a newer searxgate (a schema version above the one this
//     build reads) is treated as damaged and moved aside, never read or
//     overwritten: downgrading starts from a fresh file.
//   - Reading a damaged file runs with faults turned into panics and those
//     recovered; a fault inside bbolt's Open leaks that file's descriptor
//     (and its lock on the file that was moved aside) until the process ends.
//   - An entry larger than CacheMaxBytes on its own is not stored. Expired
//     entries stay readable (a caller may serve them as stale) until they
//     are evicted or CachePrune removes them.
//   - Between compactions, evicted, pruned and dropped entries stay in free
//     pages: a caller whose values must not be readable after they are
//     dropped seals them (searxgate does), or calls CachePurge or Compact.
//   - The cache secret is in the same file as the cache: someone with the
//     file can test whether a given search was cached.
//   - With no freelist on disk, Open walks every tree (bbolt's consistency
//     check runs only on files an older build wrote, which have one).
package store
