package instance

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/searxgate/searxgate/internal/clock"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy/polite"
	"github.com/searxgate/searxgate/proxy/upstream"
	"github.com/searxgate/searxgate/sim"
)

// testEnv is a Registry over a fleet of fake instances, on a fake clock,
// with an upstream client and budgets as the proxy gives it.
type testEnv struct {
	g     *Registry
	fleet *sim.Fleet
	pool  *pool.Pool
	clock *clock.Fake
	urls  []string
	bg    sync.WaitGroup // the registry's background reads
}

// envWindow is the searches' budget of a testEnv: one each 20 s.
var envWindow = polite.Window{Max: 1, Per: 20 * time.Second}

func newEnv(t *testing.T, instances ...sim.InstanceConfig) *testEnv {
	t.Helper()
	return newEnvWith(t, Config{}, instances...)
}

// newEnvWith is newEnv with what cfg says besides the pool, clock and
// background work.
func newEnvWith(t *testing.T, cfg Config, instances ...sim.InstanceConfig) *testEnv {
	t.Helper()
	fake := clock.NewFake(time.Unix(1_800_000_000, 0))
	fleet, err := sim.Start(sim.Config{InMemory: true, Seed: 1, Instances: instances, Now: fake.Now})
	if err != nil {
		t.Fatal(err)
	}
	pl := pool.New(pool.Config{Clock: fake})
	e := &testEnv{fleet: fleet, pool: pl, clock: fake, urls: fleet.URLs()}
	var priors []pool.Prior
	for i, u := range e.urls {
		priors = append(priors, pool.Prior{URL: u, Prior: time.Duration(i+1) * 100 * time.Millisecond})
	}
	pl.Seed(priors)
	stop, cancel := context.WithCancel(context.Background())
	cfg.Pool, cfg.Now, cfg.Stop = pl, fake.Now, stop
	cfg.Spawn = func(f func()) bool { e.bg.Go(f); return true }
	e.g = New(cfg)
	budget := polite.NewPoliteness(envWindow).WithBase(fake.Now()).WithRings(e.g.Rings(false))
	acBudget := polite.NewPoliteness().WithBase(fake.Now()).WithRings(e.g.Rings(true))
	e.g.Use(budget, acBudget, upstream.New(upstream.Config{UserAgent: "searxgate-test/1", Dial: fleet.Dial}, e.g.Hosts()))
	t.Cleanup(func() {
		cancel()
		e.bg.Wait()
		_ = fleet.Close()
	})
	return e
}

// wait returns when every background read has ended.
func (e *testEnv) wait() { e.bg.Wait() }
