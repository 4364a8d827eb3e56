package proxy

import (
	"testing"
	"time"

	"github.com/searxgate/searxgate/proxy/cache"
	"github.com/searxgate/searxgate/proxy/cache/cachetest"
	"github.com/searxgate/searxgate/sim"
)

// Behind a proxy: an answer searched once is written by the next flush
// and served from the file to a proxy that never saw it (a restart).
func TestWriteBehindBehindAProxy(t *testing.T) {
	f := cachetest.NewSealedFile()
	secret := []byte("install secret")
	e := newEnv(t, Config{Store: cache.NewWriteBehind(f, cache.WriteBehindConfig{Secret: secret})},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	if _, err := e.search(t, "remember me"); err != nil {
		t.Fatal(err)
	}
	wb := e.proxy.cfg.Store.(*cache.WriteBehind)
	if err := wb.Flush(f.Write); err != nil || f.Len() != 1 {
		t.Fatalf("Flush = %v, %d stored", err, f.Len())
	}
	again := newEnv(t, Config{Store: cache.NewWriteBehind(f, cache.WriteBehindConfig{Secret: secret})},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	res, err := again.search(t, "remember me")
	if err != nil || !res.Cached || again.searches(0) != 0 {
		t.Fatalf("after a restart: %+v, %v, %d upstream searches", res, err, again.searches(0))
	}
}

// Prune drops what can no longer be served, even stale: in memory,
// in the file, and the expired autocompletions.
func TestPruneCache(t *testing.T) {
	f := cachetest.NewSealedFile()
	wb := cache.NewWriteBehind(f, cache.WriteBehindConfig{Secret: []byte("s")})
	e := newEnv(t, Config{Store: wb, CacheTTL: time.Hour, StaleFor: 24 * time.Hour},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	e.proxy.setCaps(e.urls[0], func(c *Caps) { c.Autocomplete = "duckduckgo" })
	if _, err := e.search(t, "old one"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.proxy.Autocomplete(t.Context(), "old", "en"); err != nil {
		t.Fatal(err)
	}
	if err := wb.Flush(f.Write); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(24 * time.Hour) // expired 23 h ago: still served stale
	if _, err := e.search(t, "new one"); err != nil {
		t.Fatal(err)
	}
	if err := wb.Flush(f.Write); err != nil {
		t.Fatal(err)
	}
	if n, err := e.proxy.Cache().Prune(e.clock.Now()); n != 1 || err != nil {
		t.Fatalf("Prune = %d, %v; want the expired autocompletion only", n, err)
	}
	e.clock.Advance(time.Hour + time.Second)
	if n, err := e.proxy.Cache().Prune(e.clock.Now()); n != 2 || err != nil {
		t.Fatalf("Prune = %d, %v; want the old answer, in memory and in the file", n, err)
	}
	if entries, _ := e.proxy.cache.Answers().Len(); entries != 1 || f.Len() != 1 {
		t.Fatalf("after pruning: %d in memory, %d in the file; want the new one in each", entries, f.Len())
	}
}
