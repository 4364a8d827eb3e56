package operator

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/searxgate/searxgate/directory"
	"github.com/searxgate/searxgate/egress"
	"github.com/searxgate/searxgate/internal/clock"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/store"
)

// Store keeps the operator's changes; *store.Store is one.
type Store interface {
	Operators() ([]store.Operator, error)
	PutOperator(store.Operator) error
	ResetPool() error
}

// Answers is what the operator asks of the search path's cache;
// *cache.Cache (proxy.Proxy.Cache) is one.
type Answers interface {
	DropAnswersOf(inst string) (int, error)
}

// Terms is what the operator asks of the instance records
// (proxy/instance.Registry): to read instances' terms (their /config) in
// the background, and to clear the counters they keep beside the pool's.
type Terms interface {
	ReadTerms(instances []string)
	ResetCounters()
}

// Config is what an Operator needs.
type Config struct {
	Pool         *pool.Pool
	Terms        Terms
	Answers      Answers
	Store        Store
	AllowPrivate bool // --allow-private: the address guard lets private addresses through
	MaxOwn       int  // --max-own-instances: instances the API may add
	// Clock tells the time of each change kept; nil is the real clock.
	Clock clock.Clock
}

// Operator applies the operator's changes to the pool and keeps them in the
// store, written at once so that none is lost.
type Operator struct {
	cfg Config

	mu      sync.Mutex // guards removed
	removed map[string]bool

	addMu sync.Mutex // one Add at a time, so that two cannot both pass the cap
}

// ErrTooManyOwn: the instance API was asked to add an instance past
// --max-own-instances.
var ErrTooManyOwn = errors.New("too many instances of your own")

// New returns an Operator; Restore replays the stored changes.
func New(cfg Config) *Operator {
	cfg.Clock = clock.Or(cfg.Clock)
	return &Operator{cfg: cfg, removed: map[string]bool{}}
}

// RemovedSet is the instances the operator removed: later directory lists
// must not bring them back.
func (o *Operator) RemovedSet() map[string]bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make(map[string]bool, len(o.removed))
	for k := range o.removed {
		out[k] = true
	}
	return out
}

// Restore replays the stored changes onto the pool.
func (o *Operator) Restore() error {
	ops, err := o.cfg.Store.Operators()
	if err != nil {
		return err
	}
	o.mu.Lock()
	o.removed = map[string]bool{}
	o.mu.Unlock()
	for _, op := range ops {
		switch {
		case op.Removed:
			o.mu.Lock()
			o.removed[op.URL] = true
			o.mu.Unlock()
			o.cfg.Pool.Remove(op.URL)
		case op.Added:
			o.cfg.Pool.Add(op.URL, pool.Own)
		}
		if op.Disabled && !op.Removed {
			o.cfg.Pool.Disable(op.URL)
		}
	}
	return nil
}

// check normalises url and runs the address guard. A name that does not
// resolve now is accepted: the dialer checks its addresses when it connects.
func (o *Operator) check(ctx context.Context, raw string) (string, error) {
	u, err := directory.Normalize(raw)
	if err != nil {
		return "", err
	}
	g := egress.Guard{AllowPrivate: o.cfg.AllowPrivate}
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := g.Check(cctx, u); err != nil && !errors.Is(err, egress.ErrResolve) {
		return "", err
	}
	return u, nil
}

// AddFlag adds an --instance: the operator's own, used first. It is not
// stored (the flag says it again at every start).
func (o *Operator) AddFlag(ctx context.Context, raw string) error {
	u, err := o.check(ctx, raw)
	if err != nil {
		return fmt.Errorf("--instance (SEARXGATE_INSTANCE) %q: %w", raw, err)
	}
	o.cfg.Pool.Add(u, pool.Own)
	return nil
}

// Add adds an instance of the operator's own, and remembers it. Adding
// one already added changes nothing; a new one past --max-own-instances is
// refused (ErrTooManyOwn).
func (o *Operator) Add(ctx context.Context, raw string) (string, error) {
	u, err := o.check(ctx, raw)
	if err != nil {
		return "", err
	}
	o.addMu.Lock()
	defer o.addMu.Unlock()
	if err := o.checkCap(u); err != nil {
		return "", err
	}
	if err := o.cfg.Store.PutOperator(store.Operator{URL: u, Added: true, Tier: pool.Own.String(), UpdatedAt: o.cfg.Clock.Now().UTC()}); err != nil {
		return "", err
	}
	o.mu.Lock()
	delete(o.removed, u)
	o.mu.Unlock()
	o.cfg.Pool.Add(u, pool.Own)
	o.cfg.Terms.ReadTerms([]string{u})
	return u, nil
}

// checkCap refuses a new instance when the operator has added
// --max-own-instances already (the --instance ones do not count: they are
// not stored).
func (o *Operator) checkCap(u string) error {
	ops, err := o.cfg.Store.Operators()
	if err != nil {
		return err
	}
	added := 0
	for _, op := range ops {
		if !op.Added || op.Removed {
			continue
		}
		if op.URL == u {
			return nil // already there: adding it again is no new instance
		}
		added++
	}
	if limit := o.cfg.MaxOwn; added >= limit {
		return fmt.Errorf("%w: %d added already, the limit of --max-own-instances (SEARXGATE_MAX_OWN_INSTANCES); remove one first or raise the limit",
			ErrTooManyOwn, added)
	}
	return nil
}

// Remove forgets an instance and keeps it out of later directory lists.
func (o *Operator) Remove(raw string) (bool, error) {
	u, err := directory.Normalize(raw)
	if err != nil {
		return false, err
	}
	if err := o.cfg.Store.PutOperator(store.Operator{URL: u, Removed: true, UpdatedAt: o.cfg.Clock.Now().UTC()}); err != nil {
		return false, err
	}
	o.mu.Lock()
	o.removed[u] = true
	o.mu.Unlock()
	return o.cfg.Pool.Remove(u), nil
}

// SetDisabled disables or enables an instance, keeping what was learned.
func (o *Operator) SetDisabled(raw string, disabled bool) (bool, error) {
	u, err := directory.Normalize(raw)
	if err != nil {
		return false, err
	}
	prev := o.find(u)
	prev.URL, prev.Disabled, prev.UpdatedAt = u, disabled, o.cfg.Clock.Now().UTC()
	if err := o.cfg.Store.PutOperator(prev); err != nil {
		return false, err
	}
	if disabled {
		found := o.cfg.Pool.Disable(u)
		// A disabled instance's answers are not served from the cache either.
		if _, err := o.cfg.Answers.DropAnswersOf(u); err != nil {
			return found, fmt.Errorf("dropping the cached answers of %s: %w", u, err)
		}
		return found, nil
	}
	return o.cfg.Pool.Enable(u), nil
}

func (o *Operator) find(u string) store.Operator {
	ops, err := o.cfg.Store.Operators()
	if err == nil {
		for _, op := range ops {
			if op.URL == u {
				return op
			}
		}
	}
	return store.Operator{URL: u}
}

// Reset forgets everything the pool learned (not the operator's
// changes), and the counters the instance records keep beside it
// (ResetCounters), so that every page agrees after it.
func (o *Operator) Reset() error {
	o.cfg.Pool.Reset()
	o.cfg.Terms.ResetCounters()
	return o.cfg.Store.ResetPool()
}
