package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/redis"
)

// Several replicas behind one load balancer share their manners through
// Redis when --redis is set (see package redis): one budget per public
// instance for the replicas of one --egress group, the refusals any of
// them meets, the answers and the searches in flight. Without --redis
// nothing here runs.

// openShared makes the shared state of --redis (nil without it) and tries
// Redis once: a replica whose Redis does not answer at start serves on its
// local budgets and joins when it does.
func (a *App) openShared(ctx context.Context) error {
	if a.cfg.Redis == "" {
		return nil
	}
	secret, err := a.cfg.readSecret()
	if err != nil {
		return err
	}
	if secret == nil { // Validate says so first; this is the last word
		return errors.New("--secret (SEARXGATE_SECRET): is required with --redis")
	}
	a.secret = secret
	s, err := redis.New(redis.Options{
		URL:       a.cfg.Redis,
		Secret:    secret,
		Group:     a.cfg.Egress,
		OpTimeout: a.cfg.RedisTimeout,
		Heartbeat: a.cfg.redisHeartbeat,
		Budget:    publicBudget(a.cfg),
		// Heard from another replica of the egress: a.pool exists by
		// the time Run starts the feed.
		OnOpen: func(inst string, until time.Time, reason string) { a.pool.OpenUntil(inst, until, pool.Reason(reason)) },
		Logger: a.log.With("part", "redis"),
		Clock:  a.clock,
	})
	if err != nil {
		return fmt.Errorf("--redis (SEARXGATE_REDIS): %w", err)
	}
	a.shared = s
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := s.Connect(cctx); err != nil {
		a.log.Warn("redis does not answer at start: serving on this replica's share of each budget until it does",
			"err", err, "egress", a.cfg.Egress)
	}
	return nil
}

// publicBudget is the politeness budget of one public instance.
func publicBudget(cfg Config) []proxy.Window {
	return []proxy.Window{{Max: cfg.Budget20s, Per: 20 * time.Second}, {Max: cfg.Budget10m, Per: 10 * time.Minute}}
}

// proxyShared is what the proxy shares (nothing without --redis).
func (a *App) proxyShared() proxy.Shared {
	if a.shared == nil {
		return proxy.Shared{}
	}
	return proxy.Shared{Budget: a.shared, Cache: a.shared, Trials: a.shared, Status: a.shared.Status}
}

// cacheSecret is what keys the answer cache and signs image links: with
// --redis, a key derived from the operator's secret, the same on every
// replica, so that one search has one key everywhere and any replica
// serves another's image links; alone, the store's per-install secret.
// Never a secret kept in Redis: whoever can write Redis could then forge
// answers and image links.
func (a *App) cacheSecret() []byte {
	if a.secret == nil {
		return a.store.CacheSecret()
	}
	m := hmac.New(sha256.New, a.secret)
	m.Write([]byte("searxgate cache key v1"))
	return m.Sum(nil)
}

// shareEvent passes a circuit this replica opened to the other replicas
// of its egress; one heard from them is not passed on again.
func (a *App) shareEvent(e pool.Event) {
	if a.shared == nil {
		return
	}
	switch {
	case proxy.Shareable(e):
		a.shared.Opened(e.Instance, e.At.Add(e.Cooldown), string(e.Reason))
	case e.Gone():
		a.shared.Forget(e.Instance)
	}
}

// runShared runs the shared state's loops until ctx ends.
func (a *App) runShared(ctx context.Context) {
	if a.shared == nil {
		return
	}
	a.shared.Run(ctx)
}
