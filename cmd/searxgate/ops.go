package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"searxgate/directory"
	"searxgate/pool"
	"searxgate/store"
)

// operator applies the operator's changes to the pool and keeps them in the
// store, written at once so that none is lost.
type operator struct {
	app *App

	mu      sync.Mutex // guards removed
	removed map[string]bool

	addMu sync.Mutex // one Add at a time, so that two cannot both pass the cap
}

// errTooManyOwn: the instance API was asked to add an instance past
// --max-own-instances.
var errTooManyOwn = errors.New("too many instances of your own")

func (o *operator) removedSet() map[string]bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make(map[string]bool, len(o.removed))
	for k := range o.removed {
		out[k] = true
	}
	return out
}

// restore replays the stored changes onto the pool.
func (o *operator) restore(ctx context.Context) error {
	ops, err := o.app.store.Operators()
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
			o.app.pool.Remove(op.URL)
		case op.Added:
			o.app.pool.Add(op.URL, pool.Own)
		}
		if op.Disabled && !op.Removed {
			o.app.pool.Disable(op.URL)
		}
	}
	return nil
}

// check normalises url and runs the address guard. A name that does not
// resolve now is accepted: the dialer checks its addresses when it connects.
func (o *operator) check(ctx context.Context, raw string) (string, error) {
	u, err := directory.Normalize(raw)
	if err != nil {
		return "", err
	}
	g := directory.Guard{AllowPrivate: o.app.cfg.AllowPrivate}
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := g.Check(cctx, u); err != nil && !errors.Is(err, directory.ErrResolve) {
		return "", err
	}
	return u, nil
}

// addFlag adds an --instance: the operator's own, used first. It is not
// stored (the flag says it again at every start).
func (o *operator) addFlag(ctx context.Context, raw string) error {
	u, err := o.check(ctx, raw)
	if err != nil {
		return fmt.Errorf("--instance (SEARXGATE_INSTANCE) %q: %w", raw, err)
	}
	o.app.pool.Add(u, pool.Own)
	return nil
}

// Add adds an instance of the operator's own, and remembers it. Adding
// one already added changes nothing; a new one past --max-own-instances is
// refused (errTooManyOwn).
func (o *operator) Add(ctx context.Context, raw string) (string, error) {
	u, err := o.check(ctx, raw)
	if err != nil {
		return "", err
	}
	o.addMu.Lock()
	defer o.addMu.Unlock()
	if err := o.checkCap(u); err != nil {
		return "", err
	}
	if err := o.app.store.PutOperator(store.Operator{URL: u, Added: true, Tier: pool.Own.String(), UpdatedAt: time.Now().UTC()}); err != nil {
		return "", err
	}
	o.mu.Lock()
	delete(o.removed, u)
	o.mu.Unlock()
	o.app.pool.Add(u, pool.Own)
	o.app.proxy.ReadTerms([]string{u})
	return u, nil
}

// checkCap refuses a new instance when the operator has added
// --max-own-instances already (the --instance ones do not count: they are
// not stored).
func (o *operator) checkCap(u string) error {
	ops, err := o.app.store.Operators()
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
	if limit := o.app.cfg.MaxOwnInstances; added >= limit {
		return fmt.Errorf("%w: %d added already, the limit of --max-own-instances (SEARXGATE_MAX_OWN_INSTANCES); remove one first or raise the limit",
			errTooManyOwn, added)
	}
	return nil
}

// Remove forgets an instance and keeps it out of later directory lists.
func (o *operator) Remove(raw string) (bool, error) {
	u, err := directory.Normalize(raw)
	if err != nil {
		return false, err
	}
	if err := o.app.store.PutOperator(store.Operator{URL: u, Removed: true, UpdatedAt: time.Now().UTC()}); err != nil {
		return false, err
	}
	o.mu.Lock()
	o.removed[u] = true
	o.mu.Unlock()
	return o.app.pool.Remove(u), nil
}

// SetDisabled disables or enables an instance, keeping what was learned.
func (o *operator) SetDisabled(raw string, disabled bool) (bool, error) {
	u, err := directory.Normalize(raw)
	if err != nil {
		return false, err
	}
	prev := o.find(u)
	prev.URL, prev.Disabled, prev.UpdatedAt = u, disabled, time.Now().UTC()
	if err := o.app.store.PutOperator(prev); err != nil {
		return false, err
	}
	if disabled {
		found := o.app.pool.Disable(u)
		// A disabled instance's answers are not served from the cache either.
		if _, err := o.app.proxy.DropAnswersOf(u); err != nil {
			return found, fmt.Errorf("dropping the cached answers of %s: %w", u, err)
		}
		return found, nil
	}
	return o.app.pool.Enable(u), nil
}

func (o *operator) find(u string) store.Operator {
	ops, err := o.app.store.Operators()
	if err == nil {
		for _, op := range ops {
			if op.URL == u {
				return op
			}
		}
	}
	return store.Operator{URL: u}
}

// Reset forgets everything the pool learned (not the operator's changes).
func (o *operator) Reset() error {
	o.app.pool.Reset()
	return o.app.store.ResetPool()
}
