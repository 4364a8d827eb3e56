// Package directory says which public SearXNG instances searxgate may use
// before it has measured any.
//
// The list is searx.space's instances.json: one entry per instance URL,
// with the probes searx.space made. Parse keeps the instances fit for
// clearnet searches, and turns searx.space's search timing into a prior
// latency for the pool. Source.Load reads the list from a URL, a file, or
// none (see Load for the order of fallbacks). For a URL it falls back to
// the last good copy (a Cache), then to the snapshot compiled in
// (Embedded, dated by SnapshotDate). A fetched list that does not parse,
// or keeps no instance, never replaces a good copy. Source.Run refreshes
// on a timer and hands only fresh lists to its callback.
//
// NewFetcher fetches the list through the guarded fetcher of package
// egress.
//
// Caveats:
//   - An instance without a search timing (every snapshot entry) gets
//     Prior 0: the pool's default prior.
//   - An entry with no probe at all is "listed, not measured". It is kept
//     when its network type is normal, it has no error and its uptime is
//     high enough.
//   - The zero Filter keeps every measured instance; use DefaultFilter.
//   - The package contacts nothing by itself: fetches go through the
//     Fetcher the caller supplies.
package directory
