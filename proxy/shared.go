package proxy

import (
	"context"
	"time"

	"github.com/searxgate/searxgate/proxy/polite"
)

// Several searxgates (replicas behind one load balancer, leaving through
// one egress address) can share one set of manners: the politeness budget
// of each public instance, the answers, and the searches in flight. These
// are the small interfaces the search path needs for it; the shared
// implementation lives in package redis, and cmd chooses. With none set
// (the default) everything stays local, as for a single process.
//
// An implementation answers within a few milliseconds or falls back by
// itself (a budget of its own, a cache miss, "lead it yourself"): the
// search path never waits on it longer.

// SharedBudget is the politeness budget of a group of replicas, for the
// public instances (the operator's own keep their local budget).
type SharedBudget interface {
	// Take records one search to inst, if every window of the group
	// allows it, and reports whether it did; when not, until is when the
	// group's windows are expected to allow one, on the local clock
	// (after now). now is the local clock; an implementation that falls
	// back to a budget of its own counts with it.
	Take(ctx context.Context, inst string, now time.Time) (ok bool, until time.Time)
}

// SharedRestamper is a SharedBudget that can move a search it took at
// taken to now, when it is sent later than it was planned (its
// instance's terms were read first): the shared windows then count when
// the instance sees it, as the local ones do (polite.Politeness.Restamp). It
// must not block the search.
type SharedRestamper interface {
	Restamp(inst string, taken, now time.Time)
}

// SharedCache is an answer cache shared by the replicas, behind the
// in-memory one and in front of the Store. Keys are the proxy's cache keys
// (keyed hashes; see Keyer), whose second half an implementation may seal
// the answer with and must never store. The replicas must key with one
// secret for their keys to meet.
type SharedCache interface {
	// Get returns the answer kept for key, fresh or stale.
	Get(ctx context.Context, key string) (Cached, bool)
	// Put keeps c for key; it must not block the search (queue it).
	Put(key string, c Cached)
	// Lead asks to be the one replica that searches key upstream now, for
	// a search that ends by until. When lead is false, another replica
	// searches it: Wait for its answer. release (never nil) ends the
	// lead once the answer was Put; it must not block either.
	Lead(ctx context.Context, key string, until time.Time) (lead bool, release func())
	// Wait waits, up to until, for a fresh answer to key that another
	// replica is searching; it returns false as soon as that replica
	// gave up without one, or at until.
	Wait(ctx context.Context, key string, until time.Time) (Cached, bool)
}

// RefusalFeed carries circuit openings between the replicas of one
// egress: what one learns (a 429 with its Retry-After, a cooldown) the
// others honour at once. cmd feeds it the pool's events that Shareable
// passes (leaving out those of pool.SourceShared: they came from it)
// and opens what it hears with pool.OpenUntil.
type RefusalFeed interface {
	Opened(inst string, until time.Time, reason string)
}

// SharedTrials lets one replica at a time take the trial search of a
// half-open public instance, so that N replicas whose shared cooldown
// ends together do not send it N trials at once.
type SharedTrials interface {
	// Trial claims inst's trial until then; when another replica holds
	// it, ok is false and retry is when its claim ends (local clock).
	Trial(ctx context.Context, inst string, until, now time.Time) (ok bool, retry time.Time)
}

// SharedState is the state shared with other replicas as this one sees
// it, for /status and /metrics.
type SharedState struct {
	// Shared is true while the replicas share (Redis answers); false
	// while this one keeps to its share of each budget alone.
	Shared   bool      `json:"shared"`
	Since    time.Time `json:"since"` // when Shared last changed
	Group    string    `json:"group"` // the egress group
	Replica  string    `json:"replica"`
	Replicas int       `json:"replicas"` // replicas of the group seen in the last three heartbeats (6 s)
	// LastError is the failure that made this replica decide alone.
	LastError string `json:"last_error,omitempty"`
	// LocalTakes counts searches the local share decided (monotone).
	LocalTakes uint64 `json:"local_takes"`
}

// Shared is what a group of replicas shares; nil fields stay local.
type Shared struct {
	Budget SharedBudget
	Cache  SharedCache
	Trials SharedTrials
	// Status reports the shared state (nil: nothing is shared).
	Status func() SharedState
}

// SharedState returns the state shared with other replicas; ok is false
// when nothing is shared (one process, the default).
func (p *Proxy) SharedState() (st SharedState, ok bool) {
	if p.cfg.Shared.Status == nil {
		return SharedState{}, false
	}
	return p.cfg.Shared.Status(), true
}

// sharedTrial claims the trial of a half-open public instance, when
// trials are shared; a refusal holds the instance locally until the other
// replica's claim ends.
func (p *Proxy) sharedTrial(ctx context.Context, inst string, now time.Time) bool {
	tr := p.cfg.Shared.Trials
	if tr == nil {
		return true
	}
	ok, retry := tr.Trial(ctx, inst, now.Add(p.cfg.Deadline+time.Second), now)
	if !ok {
		p.polite.Hold(inst, retry, now)
	}
	return ok
}

// sharedWait is the share of a search's deadline a replica may spend
// waiting for another replica's answer: what is left is its own to search
// with if that one gave up.
const sharedWait = 3 // quarters

// politeTake takes one search of inst from the local budget and, for a
// public instance, from the shared one. A refusal of the shared budget
// holds the instance locally until the time it said, so that the slot
// queue and Retry-After see it.
func (p *Proxy) politeTake(ctx context.Context, inst string, own bool, now time.Time) bool {
	if !p.localTake(inst, own, now) {
		return false
	}
	if own || p.sharedTake(ctx, inst, now) {
		return true
	}
	p.polite.Untake(inst, now) // not sent: the local window gets it back
	return false
}

// localTake takes one search of inst from the local budget, under the
// class of its instance (own, and own behind its limiter: limited).
func (p *Proxy) localTake(inst string, own bool, now time.Time) bool {
	return p.polite.TakeClass(inst, polite.ClassOf(own, own && p.recs.Get(inst).Limited()), now)
}

// sharedTake asks the shared budget, when there is one, for one search of
// the public instance inst.
func (p *Proxy) sharedTake(ctx context.Context, inst string, now time.Time) bool {
	b := p.cfg.Shared.Budget
	if b == nil {
		return true
	}
	ok, until := b.Take(ctx, inst, now)
	if !ok {
		p.polite.Hold(inst, until, now)
		p.metrics.sharedRefused.Add(1)
	}
	return ok
}

// sharedRestamp moves a search of the public instance inst to when it is
// sent, in the shared budget, when it can move searches.
func (p *Proxy) sharedRestamp(inst string, own bool, taken, now time.Time) {
	if r, ok := p.cfg.Shared.Budget.(SharedRestamper); ok && !own {
		r.Restamp(inst, taken, now)
	}
}

// sharedGet reads the keyed hash sk from the shared cache, when there is
// one (the caller keeps what it found in memory, under the plain key).
func (p *Proxy) sharedGet(ctx context.Context, sk string) (Cached, bool) {
	sc := p.cfg.Shared.Cache
	if sc == nil {
		return Cached{}, false
	}
	return sc.Get(ctx, sk)
}

// sharedFlight joins a search of key another replica is running, when
// there is a shared cache. It returns the answer that replica found, or
// (nil, release) when this replica is to search: release ends its lead.
func (p *Proxy) sharedFlight(ctx context.Context, sk *searchKey, start, deadline time.Time) (*Response, func()) {
	sc := p.cfg.Shared.Cache
	if sc == nil {
		return nil, func() {}
	}
	key := p.hashedKey(sk)
	lead, release := sc.Lead(ctx, key, deadline)
	if lead {
		return nil, release
	}
	wait := start.Add(deadline.Sub(start) * sharedWait / 4)
	c, ok := sc.Wait(ctx, key, wait)
	if !ok {
		return nil, func() {}
	}
	p.metrics.sharedJoined.Add(1)
	// Coalesced, not Cached: the answer is another replica's search of
	// this moment, not one kept from before.
	return &Response{JSON: c.JSON, Instance: c.Instance, Coalesced: true, expires: c.Expires}, nil
}

// sharedPut offers an answer to the shared cache, when there is one.
func (p *Proxy) sharedPut(key string, c *Cached) {
	if sc := p.cfg.Shared.Cache; sc != nil {
		sc.Put(key, *c)
	}
}

// sharedDrop drops answers from the shared cache too, when it can drop
// (CacheDropper); a failure there is logged, not returned: the local
// drop stands, and the shared copies expire with their TTL.
func (p *Proxy) sharedDrop(drop func(CacheDropper) (int, error)) int {
	d, ok := p.cfg.Shared.Cache.(CacheDropper)
	if !ok {
		return 0
	}
	n, err := drop(d)
	if err != nil {
		p.log.Warn("dropping answers from the shared cache failed: they expire there with their TTL", "err", err)
	}
	return n
}
