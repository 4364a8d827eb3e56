package proxy

import (
	"context"
	"time"

	"github.com/searxgate/searxgate/proxy/cache"
	"github.com/searxgate/searxgate/proxy/instance"
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
	Cache  cache.Shared // the answers and the searches in flight
	Trials SharedTrials
	// Status reports the shared state (nil: nothing is shared).
	Status func() SharedState
}

// Replicas is how the search path takes part in a group of replicas:
// the shared budget and trials beside the local budget, and the shared
// state for /status and /metrics. The shared answers are the cache's
// (cache.Shared).
type Replicas struct {
	shared   Shared
	polite   *polite.Politeness
	recs     *instance.Registry // for whether an own instance is behind its limiter
	metrics  *Metrics
	deadline time.Duration // Config.Deadline: how long a trial is claimed, with a second more
}

// State returns the state shared with other replicas; ok is false when
// nothing is shared (one process, the default).
func (r *Replicas) State() (st SharedState, ok bool) {
	if r.shared.Status == nil {
		return SharedState{}, false
	}
	return r.shared.Status(), true
}

// trial claims the trial of a half-open public instance, when trials are
// shared; a refusal holds the instance locally until the other replica's
// claim ends.
func (r *Replicas) trial(ctx context.Context, inst string, now time.Time) bool {
	tr := r.shared.Trials
	if tr == nil {
		return true
	}
	ok, retry := tr.Trial(ctx, inst, now.Add(r.deadline+time.Second), now)
	if !ok {
		r.polite.Hold(inst, retry, now)
	}
	return ok
}

// take takes one search of inst from the local budget and, for a public
// instance, from the shared one. A refusal of the shared budget holds the
// instance locally until the time it said, so that the slot queue and
// Retry-After see it.
func (r *Replicas) take(ctx context.Context, inst string, own bool, now time.Time) bool {
	if !r.localTake(inst, own, now) {
		return false
	}
	if own || r.sharedTake(ctx, inst, now) {
		return true
	}
	r.polite.Untake(inst, now) // not sent: the local window gets it back
	return false
}

// localTake takes one search of inst from the local budget, under the
// class of its instance (own, and own behind its limiter: limited).
func (r *Replicas) localTake(inst string, own bool, now time.Time) bool {
	return r.polite.TakeClass(inst, polite.ClassOf(own, own && r.recs.Get(inst).Limited()), now)
}

// sharedTake asks the shared budget, when there is one, for one search of
// the public instance inst.
func (r *Replicas) sharedTake(ctx context.Context, inst string, now time.Time) bool {
	b := r.shared.Budget
	if b == nil {
		return true
	}
	ok, until := b.Take(ctx, inst, now)
	if !ok {
		r.polite.Hold(inst, until, now)
		r.metrics.sharedRefused.Add(1)
	}
	return ok
}

// restamp moves a search of the public instance inst to when it is sent,
// in the shared budget, when it can move searches.
func (r *Replicas) restamp(inst string, own bool, taken, now time.Time) {
	if rs, ok := r.shared.Budget.(SharedRestamper); ok && !own {
		rs.Restamp(inst, taken, now)
	}
}
