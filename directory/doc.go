// Package directory says which public SearXNG instances searxgate may use
// before it has measured any of them, and how fast each is expected to be.
//
// Its input is the searx.space file (https://searx.space/data/instances.json):
// an object "instances" keyed by instance URL, each with the probes
// searx.space made (network type, HTTP status, version, timings, uptime,
// alternative URLs). Parse keeps the instances fit for clearnet searches and
// turns searx.space's search timing into a prior latency for the pool.
//
// Where the list comes from (Source.Load):
//
//   - "none": nowhere; no public instance at all.
//   - a local file: that file, and nothing else. A file that cannot be read
//     or does not parse is an error (ErrListFile) naming it; an empty one
//     is an empty list.
//   - an http(s) URL, in order: a fresh copy (a conditional GET with the
//     ETag and Last-Modified of the last good copy; a timeout and a size
//     cap); the last good copy kept in a Cache (the store, through an
//     adapter); the snapshot compiled into the binary (Embedded, built from
//     the public searx-instances list, dated by SnapshotDate), so that a
//     first start with no network still has candidates. Falling back to the
//     snapshot is logged at WARN with its date.
//
// A fetched file that does not parse, or that keeps no instance, never
// replaces a good copy: Load logs why and falls back. Source.Run refreshes
// on a timer and hands only fresh lists to its callback, so a failed refresh
// leaves the caller with what it had. NewFetcher fetches through the
// guarded fetcher of package egress.
//
// Caveats:
//   - searx.space reports timings in seconds; priors are durations. An
//     instance without a search timing (every snapshot entry, for one) gets
//     Prior 0, which the pool reads as "use the default prior".
//   - An entry that carries no probe at all (no "http" and no "timing"
//     object, as in the embedded snapshot) is "listed, not measured": it is
//     kept when its network type is normal, it has no error and its
//     uptime (if any) is high enough; the status, version and success
//     checks do not apply to it.
//   - Filter thresholds are used as given: the zero Filter keeps every
//     measured instance whatever its success rate; use DefaultFilter.
//   - The package never contacts anything by itself: fetches go through the
//     Fetcher the caller supplies.
package directory
