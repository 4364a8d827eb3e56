package cache

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/searxgate/searxgate/internal/clock"
)

// SuggestionBytes bounds the suggestions' cache; SuggestionEntries is
// how many it holds at most.
const (
	SuggestionBytes   = 4 << 20
	SuggestionEntries = 4096
)

// Store is the persistent cache behind the in-memory one (WriteBehind is
// one, over the store's file). CachePut may queue the write; it must not
// block a search.
type Store interface {
	CacheGet(key string) (Entry, bool)
	CachePut(key string, c Entry)
}

// Dropper is what a Store or a Shared cache may also do: drop what it
// keeps, for DropAnswersOf and Purge.
type Dropper interface {
	// CacheDropInstance drops every answer inst gave.
	CacheDropInstance(inst string) (int, error)
	// CachePurge drops every answer, leaving none of it on disk.
	CachePurge() (int, error)
}

// Pruner is what a Store may also do: drop the answers that expired more
// than maxStale before now, for Prune.
type Pruner interface {
	CachePrune(now time.Time, maxStale time.Duration) (int, error)
}

// Config is what a Cache needs. The search path fills in its defaults.
type Config struct {
	TTL      time.Duration // how long an answer is served fresh
	StaleFor time.Duration // how long past expiry it may still be served stale
	Entries  int           // the answers held in memory, at most
	Bytes    int64         // their bytes, at most
	Store    Store         // optional
	Shared   Shared        // optional: the cache shared with other replicas
	// NoCache keeps no answer anywhere: nothing is put in or read from
	// memory, the Store or the Shared cache.
	NoCache bool
	Clock   clock.Clock  // nil is the real clock
	Logger  *slog.Logger // nil discards
}

// Cache is the search path's caches: the answers and the suggestions in
// memory, the Shared cache of the replicas and the Store behind them.
type Cache struct {
	cfg         Config
	keyer       KeyMaker
	answers     *Mem
	suggestions *Mem
}

// New returns the caches cfg says.
func New(cfg Config) *Cache {
	cfg.Clock = clock.Or(cfg.Clock)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Cache{cfg: cfg, answers: NewMem(cfg.Entries, cfg.Bytes),
		// Suggestions, one per prefix typed, have a small cache of their
		// own: they must not evict the answers.
		suggestions: NewMem(SuggestionEntries, SuggestionBytes)}
	if k, ok := cfg.Store.(KeyMaker); ok {
		c.keyer = k
	} else {
		c.keyer = processKeyer()
	}
	return c
}

// Answers is the answers' memory cache, by plain key.
func (c *Cache) Answers() *Mem { return c.answers }

// Suggestions is the autocompletions' memory cache.
func (c *Cache) Suggestions() *Mem { return c.suggestions }

// Key is the key of a search (or an autocompletion) outside memory,
// given its plain key: the Store's secret's keyed hash, when it has one.
func (c *Cache) Key(plain string) string { return c.keyer.CacheKey(plain) }

// Hashed is k's keyed hash (Key), computed on first use. A Key belongs
// to the goroutine of the search that made it.
func (c *Cache) Hashed(k *Key) string {
	if k.hashed == "" {
		k.hashed = c.Key(k.Plain)
	}
	return k.hashed
}

// Get looks k up in memory, then in the shared cache and the store under
// its keyed hash; with NoCache nothing is looked up.
func (c *Cache) Get(ctx context.Context, k *Key) (Entry, bool) {
	if c.cfg.NoCache {
		return Entry{}, false
	}
	mem, inMem := c.answers.Get(k.Plain)
	if inMem && (c.cfg.Shared == nil || c.cfg.Clock.Now().Before(mem.Expires)) {
		return *mem, true
	}
	if !inMem && c.cfg.Shared == nil && c.cfg.Store == nil {
		return Entry{}, false
	}
	sk := c.Hashed(k)
	// Stale here may be fresh in the shared cache: another replica asked.
	if e, ok := c.sharedGet(ctx, sk); ok && (!inMem || e.Expires.After(mem.Expires)) {
		c.answers.Put(k.Plain, &e)
		return e, true
	}
	if inMem {
		return *mem, true
	}
	if c.cfg.Store == nil {
		return Entry{}, false
	}
	e, ok := c.cfg.Store.CacheGet(sk)
	if ok {
		c.answers.Put(k.Plain, &e)
	}
	return e, ok
}

// Put keeps e for k in memory, the shared cache and the store. The
// caller decides whether e is kept at all (NoCache, its TTL).
func (c *Cache) Put(k *Key, e *Entry) {
	c.answers.Put(k.Plain, e)
	if c.cfg.Store != nil || c.cfg.Shared != nil {
		sk := c.Hashed(k)
		c.sharedPut(sk, e)
		if c.cfg.Store != nil {
			c.cfg.Store.CachePut(sk, *e)
		}
	}
}

// DropAnswersOf drops every cached answer and autocompletion inst gave,
// from memory, the shared cache and the store (when they can drop), and
// returns how many it dropped: an instance the operator removed or
// disabled, or one that left the directory, serves nothing more from the
// cache, fresh or stale. An answer an attempt brings back at the very
// moment its instance's answers are dropped may still be cached (it was
// not there to drop).
func (c *Cache) DropAnswersOf(inst string) (int, error) {
	doomed := func(e *Entry) bool { return AnsweredBy(e.Instance, inst) }
	n := c.answers.Drop(doomed) + c.suggestions.Drop(doomed)
	return c.dropStored(n, func(d Dropper) (int, error) { return d.CacheDropInstance(inst) })
}

// dropStored adds to n what drop drops from the shared cache and from the
// store, when they can drop.
func (c *Cache) dropStored(n int, drop func(Dropper) (int, error)) (int, error) {
	n += c.sharedDrop(drop)
	if d, ok := c.cfg.Store.(Dropper); ok {
		m, err := drop(d)
		if err != nil {
			return n, err
		}
		n += m
	}
	return n, nil
}

// AnsweredBy reports whether inst gave the answer whose Instance is
// answerer: one instance, or several separated by ", " (a fan-out).
func AnsweredBy(answerer, inst string) bool {
	for a := range strings.SplitSeq(answerer, ", ") {
		if a == inst {
			return true
		}
	}
	return false
}

// Purge drops every cached answer and autocompletion, from memory and
// from the store, and returns how many entries it dropped (an answer in
// both counts twice).
func (c *Cache) Purge() (int, error) {
	n := c.answers.Purge() + c.suggestions.Purge()
	return c.dropStored(n, Dropper.CachePurge)
}

// Prune drops what is too old to be served at all: the answers that
// expired more than StaleFor before now, from memory and from the store
// when it can prune (Pruner), and the autocompletions that expired. It
// returns how many it dropped; call it now and then.
func (c *Cache) Prune(now time.Time) (int, error) {
	limit := now.Add(-c.cfg.StaleFor)
	n := c.answers.Drop(func(e *Entry) bool { return e.Expires.Before(limit) })
	n += c.suggestions.Drop(func(e *Entry) bool { return !now.Before(e.Expires) })
	if pr, ok := c.cfg.Store.(Pruner); ok {
		m, err := pr.CachePrune(now, c.cfg.StaleFor)
		return n + m, err
	}
	return n, nil
}

// Lifetime is how long an answer is served from the cache (ttl) and kept
// in all (keep: past its TTL it is served only when no instance answers,
// until it is pruned); both 0 with NoCache. Answers that found nothing,
// or whose poverty is the query's own, are served for less.
func (c *Cache) Lifetime() (ttl, keep time.Duration) {
	if c.cfg.NoCache {
		return 0, 0
	}
	return c.cfg.TTL, c.cfg.TTL + c.cfg.StaleFor
}

// Bytes is the most the caches hold in memory: the answers' and the
// suggestions' (0 with NoCache).
func (c *Cache) Bytes() int64 {
	if c.cfg.NoCache {
		return 0
	}
	return c.cfg.Bytes + SuggestionBytes
}
