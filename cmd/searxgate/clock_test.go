package main

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/searxgate/searxgate/internal/clock"
	"github.com/searxgate/searxgate/proxy/cache"
)

// TestFlushLoopOnTheAppsClock: the flush and prune loop takes its tickers
// from the App's clock: a flush once --flush has passed on it, a prune of
// answers past the proxy's StaleFor every pruneEvery. Nothing waits for
// real time to pass.
func TestFlushLoopOnTheAppsClock(t *testing.T) {
	cfg, err := parseConfig([]string{"--listen", "127.0.0.1:0", "--directory", "none", "--data", t.TempDir(), "--flush", "30s"},
		func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	clk := clock.NewFake(t0)
	cfg.clock = clk
	cfg.resolver = &failResolver{}
	app, err := NewApp(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = app.ln.Close()
		if err := app.Close(); err != nil {
			t.Error(err)
		}
	})
	stored := func() int { n, _ := app.store.CacheStats(); return n }
	// Expired a day and an hour ago: past what may be served stale.
	app.cache.CachePut(app.cache.CacheKey("old"), cache.Entry{JSON: []byte(`{}`), Instance: "https://a.example/",
		StoredAt: t0.Add(-48 * time.Hour), Expires: t0.Add(-25 * time.Hour)})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); app.flushLoop(ctx) }()
	defer func() { cancel(); <-done }()
	if w := clk.BlockUntil(2); !slices.Equal(w, []time.Duration{30 * time.Second, pruneEvery}) {
		t.Fatalf("the loop waits %v, want --flush and pruneEvery", w)
	}
	if n := stored(); n != 0 {
		t.Fatalf("%d answers stored before the first flush", n)
	}
	clk.Advance(30 * time.Second)
	waitFor(t, 10*time.Second, "the answer stored by the flush", func() bool { return stored() == 1 })
	clk.Advance(pruneEvery - 30*time.Second)
	waitFor(t, 10*time.Second, "the old answer pruned", func() bool { return stored() == 0 })
}
