// Package store keeps what searxgate learns and what its operator says in
// one bbolt file (searxgate.db in the data folder), so that a restart does
// not send the gateway back to hammering instances it already knows refuse
// it. It is the only package that imports bbolt.
//
// The store knows nothing of the pool's, the proxy's or the directory's Go
// types: it keeps bytes (JSON made by its callers) and a few small records
// of its own, in these buckets:
//
//   - meta: the schema version, checked at Open;
//   - pool: instance URL -> learned state, written in batches;
//   - caps: instance URL -> capabilities learned, written in batches;
//   - operators: instance URL -> what the operator said (added, removed,
//     disabled, tier), written at once, each change its own synced
//     transaction;
//   - directory: the last searx.space list fetched, with its ETag,
//     Last-Modified and fetch time;
//   - cache and cache_order: the result cache and its index by the time each
//     entry was stored, so the oldest is evicted first.
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
//   - The result cache counts an entry's size as len(Key)+len(Value); an
//     entry larger than CacheMaxBytes on its own is not stored. Expired
//     entries stay readable (a caller may serve them as stale) until they
//     are evicted or CachePrune removes them.
package store
