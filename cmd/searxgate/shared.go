package main

import (
	"context"
	"strings"
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
	s, err := redis.New(redis.Options{
		URL:       a.cfg.Redis,
		Group:     a.cfg.Egress,
		OpTimeout: a.cfg.RedisTimeout,
		Budget:    publicBudget(a.cfg),
		// Heard from another replica of the egress: a.pool exists by
		// the time Run starts the feed.
		OnOpen: func(inst string, until time.Time, reason string) { a.pool.OpenUntil(inst, until, reason) },
		Logger: a.log.With("part", "redis"),
		Clock:  a.clock,
	})
	if err != nil {
		return err
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

// sharedSecret is the secret the replicas key the answer cache with, from
// Redis; nil without --redis or when Redis does not answer now (the cache
// is then keyed with the store's secret until useSharedSecret succeeds).
func (a *App) sharedSecret(ctx context.Context) []byte {
	if a.shared == nil {
		return nil
	}
	sec, err := a.shared.Secret(ctx)
	if err != nil {
		a.log.Warn("the shared cache secret could not be read from redis: answers are not shared until it is", "err", err)
		return nil
	}
	return sec
}

// keepTryingSecret reads the shared secret until it has it, when start-up
// could not, and keys the cache with it from then on.
func (a *App) keepTryingSecret(ctx context.Context) {
	if a.shared == nil || a.cache.sharedKey.Load() {
		return
	}
	tick, stop := a.clock.NewTicker(5 * time.Second)
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
			if sec, err := a.shared.Secret(ctx); err == nil {
				a.cache.useSecret(sec, true)
				a.log.Info("the cache is now keyed with the replicas' shared secret")
				return
			}
		}
	}
}

// shareEvent passes a circuit this replica opened to the other replicas
// of its egress; one heard from them is not passed on again.
func (a *App) shareEvent(e pool.Event) {
	if a.shared == nil {
		return
	}
	switch {
	case e.To == pool.Open && e.From != pool.Open && !strings.HasPrefix(e.Reason, pool.ReasonShared):
		a.shared.Opened(e.Instance, e.At.Add(e.Cooldown), e.Reason)
	case e.Reason == pool.ReasonRemoved || e.Reason == pool.ReasonUnlisted:
		a.shared.Forget(e.Instance)
	}
}

// runShared runs the shared state's loops until ctx ends.
func (a *App) runShared(ctx context.Context) {
	if a.shared == nil {
		return
	}
	done := make(chan struct{})
	go func() { defer close(done); a.keepTryingSecret(ctx) }()
	a.shared.Run(ctx)
	<-done
}
