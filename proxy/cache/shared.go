package cache

import (
	"context"
	"time"
)

// Shared is an answer cache shared by the replicas, behind the in-memory
// one and in front of the Store. Keys are cache keys (keyed hashes; see
// Keyer), whose second half an implementation may seal the answer with
// and must never store. The replicas must key with one secret for their
// keys to meet. Package redis has one.
type Shared interface {
	// Get returns the answer kept for key, fresh or stale.
	Get(ctx context.Context, key string) (Entry, bool)
	// Put keeps c for key; it must not block the search (queue it).
	Put(key string, c Entry)
	// Lead asks to be the one replica that searches key upstream now, for
	// a search that ends by until. When lead is false, another replica
	// searches it: Wait for its answer. release (never nil) ends the
	// lead once the answer was Put; it must not block either.
	Lead(ctx context.Context, key string, until time.Time) (lead bool, release func())
	// Wait waits, up to until, for a fresh answer to key that another
	// replica is searching; it returns false as soon as that replica
	// gave up without one, or at until.
	Wait(ctx context.Context, key string, until time.Time) (Entry, bool)
}

// sharedWait is the share of a search's deadline a replica may spend
// waiting for another replica's answer: what is left is its own to search
// with if that one gave up.
const sharedWait = 3 // quarters

// Join joins a search of k another replica is running, when there is a
// shared cache and NoCache is off. It returns the answer that replica
// found (kept in memory too, as stored at start), or joined false and
// release when this replica is to search: release ends its lead.
func (c *Cache) Join(ctx context.Context, k *Key, start, deadline time.Time) (e Entry, joined bool, release func()) {
	sc := c.cfg.Shared
	if sc == nil || c.cfg.NoCache {
		return Entry{}, false, noRelease
	}
	key := c.Hashed(k)
	lead, release := sc.Lead(ctx, key, deadline)
	if lead {
		return Entry{}, false, release
	}
	wait := start.Add(deadline.Sub(start) * sharedWait / 4)
	e, ok := sc.Wait(ctx, key, wait)
	if !ok {
		return Entry{}, false, noRelease
	}
	c.answers.Put(k.Plain, &Entry{JSON: e.JSON, Instance: e.Instance, StoredAt: start, Expires: e.Expires})
	return e, true, noRelease
}

// noRelease is the release of a lead never taken.
func noRelease() {}

// sharedGet reads the keyed hash sk from the shared cache, when there is
// one (the caller keeps what it found in memory, under the plain key).
func (c *Cache) sharedGet(ctx context.Context, sk string) (Entry, bool) {
	sc := c.cfg.Shared
	if sc == nil {
		return Entry{}, false
	}
	return sc.Get(ctx, sk)
}

// sharedPut offers an answer to the shared cache, when there is one.
func (c *Cache) sharedPut(key string, e *Entry) {
	if sc := c.cfg.Shared; sc != nil {
		sc.Put(key, *e)
	}
}

// sharedDrop drops answers from the shared cache too, when it can drop
// (Dropper); a failure there is logged, not returned: the local drop
// stands, and the shared copies expire with their TTL.
func (c *Cache) sharedDrop(drop func(Dropper) (int, error)) int {
	d, ok := c.cfg.Shared.(Dropper)
	if !ok {
		return 0
	}
	n, err := drop(d)
	if err != nil {
		c.cfg.Logger.Warn("dropping answers from the shared cache failed: they expire there with their TTL", "err", err)
	}
	return n
}
