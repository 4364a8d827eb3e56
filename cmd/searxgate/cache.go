package main

import (
	"time"

	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/store"
)

// sealedEntries are the answers a flush took, as the store's batch
// writes them.
func sealedEntries(answers []proxy.Sealed) []store.CacheEntry {
	out := make([]store.CacheEntry, len(answers))
	for i, a := range answers {
		out[i] = store.CacheEntry{Key: a.ID, Value: a.Value, Source: a.Source, StoredAt: a.StoredAt, Expires: a.Expires}
	}
	return out
}

// proxyCacheTTL is the proxy's TTL for --cache-ttl: 0 means no answer is
// served from the cache (the proxy reads 0 as its default), so answers
// expire at once; in memory the last one is still the stale fallback
// when no instance answers.
func proxyCacheTTL(ttl time.Duration) time.Duration {
	if ttl == 0 {
		return time.Nanosecond
	}
	return ttl
}

// staleFor is how long past its expiry a cached answer may still be served
// when nothing answers (the proxy's default); older ones are pruned.
const staleFor = 24 * time.Hour

// cacheKeep is how long an answer is kept in all, for /about: its TTL
// and then staleFor (none when the TTL is 0).
func cacheKeep(ttl time.Duration) time.Duration {
	if ttl == 0 {
		return 0
	}
	return ttl + staleFor
}
