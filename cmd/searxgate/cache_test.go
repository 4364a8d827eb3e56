package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/searxgate/searxgate/mcp"
	"github.com/searxgate/searxgate/sim"
	"github.com/searxgate/searxgate/store"
)

// hostileFleet is two instances: "hostile", tried first, and "good".
func hostileFleet(t *testing.T) (*sim.Fleet, string) {
	t.Helper()
	fleet, _ := startFleet(t, 31, []sim.InstanceConfig{
		{ID: "hostile", Behaviour: sim.Fast, Latency: -1, JSON: true},
		{ID: "good", Behaviour: sim.Fast, Latency: -1, JSON: true},
	})
	dir := writeDirectory(t,
		dirEntry{fleet.Instance("hostile").URL(), 0.01},
		dirEntry{fleet.Instance("good").URL(), 0.5})
	return fleet, dir
}

// admin sends an instance API write with the token.
func (g *gateway) admin(t *testing.T, method, path, token string) answer {
	t.Helper()
	return g.do(t, method, path, nil, map[string]string{"Authorization": "Bearer " + token})
}

func (g *gateway) search(t *testing.T, q string) answer {
	t.Helper()
	a := g.get(t, "/search?format=json&q="+url.QueryEscape(q), nil)
	if a.status != 200 {
		t.Fatalf("search %q: %d %s", q, a.status, a.body)
	}
	return a
}

// flush writes what waits for the next flush, now.
func (g *gateway) flush(t *testing.T) {
	t.Helper()
	if err := g.app.flush(); err != nil {
		t.Fatal(err)
	}
}

// The store file keeps no query text: not in cache keys, not in the
// answers (sealed), not after eviction. The answers still come back after
// a restart.
func TestDiskKeepsNoQueryText(t *testing.T) {
	_, dir := hostileFleet(t)
	data := t.TempDir()
	g := startGateway(t, dir, data)
	queries := []string{"zanzibar hemorrhoid remedy", "quixotic divorce lawyer", "vorpal tax evasion"}
	for _, q := range queries {
		g.search(t, q)
	}
	g.flush(t)
	if n, _ := g.app.store.CacheStats(); n != len(queries) {
		t.Fatalf("the store holds %d answers, want %d: the test proves nothing", n, len(queries))
	}
	if err := g.stop(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(data, store.FileName)
	assertNoQueryText(t, path, queries)

	// After a restart the answers come from the file.
	g = startGateway(t, dir, data)
	if a := g.search(t, queries[0]); a.header.Get("X-Searxgate-Cache") != "hit" {
		t.Fatalf("after a restart the stored answer was not served: cache %q", a.header.Get("X-Searxgate-Cache"))
	}
	if err := g.stop(); err != nil {
		t.Fatal(err)
	}

	// Eviction (a smaller bound at the next open) leaves nothing either.
	st, err := store.Open(path, store.Options{CacheMaxEntries: 1})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := st.CacheStats(); n != 1 {
		t.Fatalf("after eviction the store holds %d answers", n)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	assertNoQueryText(t, path, queries)
}

func assertNoQueryText(t *testing.T, path string, queries []string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range queries {
		for _, w := range strings.Fields(q) {
			if bytes.Contains(raw, []byte(w)) {
				t.Errorf("%s holds the query word %q", path, w)
			}
		}
	}
}

// A removed instance's answers are dropped from memory and disk: never
// served again, fresh or stale, not even after a restart.
func TestRemovedInstanceAnswersAreDropped(t *testing.T) {
	fleet, dir := hostileFleet(t)
	hostile := fleet.Instance("hostile").URL()
	data := t.TempDir()
	const token = "drop-token"
	g := startGateway(t, dir, data, "--admin-token", token)
	const q = "poisoned answer"
	if a := g.search(t, q); a.header.Get("X-Searxgate-Instance") != hostile {
		t.Fatalf("answered by %q, want the hostile instance first", a.header.Get("X-Searxgate-Instance"))
	}
	g.flush(t)
	if a := g.search(t, q); a.header.Get("X-Searxgate-Cache") != "hit" {
		t.Fatal("the answer was not cached: the test proves nothing")
	}
	if a := g.admin(t, http.MethodDelete, "/api/instances/"+url.PathEscape(hostile), token); a.status != 200 {
		t.Fatalf("remove: %d %s", a.status, a.body)
	}
	a := g.search(t, q)
	if a.header.Get("X-Searxgate-Cache") == "hit" || a.header.Get("X-Searxgate-Instance") == hostile {
		t.Fatalf("after removal: cache %q, instance %q", a.header.Get("X-Searxgate-Cache"), a.header.Get("X-Searxgate-Instance"))
	}
	g.flush(t)
	if err := g.stop(); err != nil {
		t.Fatal(err)
	}
	assertNoSource(t, filepath.Join(data, store.FileName), hostile, 1)

	g = startGateway(t, dir, data, "--admin-token", token)
	if a := g.search(t, q); a.header.Get("X-Searxgate-Instance") == hostile {
		t.Fatal("after a restart the removed instance's answer was served")
	}
}

// assertNoSource checks that the store at path holds no answer from src
// and holds want answers in all.
func assertNoSource(t *testing.T, path, src string, want int) {
	t.Helper()
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n, _ := st.CacheStats(); n != want {
		t.Errorf("the store holds %d answers, want %d", n, want)
	}
	if n, err := st.CacheDropSource(src); n != 0 || err != nil {
		t.Errorf("the store still held %d answers from %s (%v)", n, src, err)
	}
}

// A disabled instance's answers are dropped too.
func TestDisabledInstanceAnswersAreDropped(t *testing.T) {
	fleet, dir := hostileFleet(t)
	hostile := fleet.Instance("hostile").URL()
	data := t.TempDir()
	const token = "disable-token"
	g := startGateway(t, dir, data, "--admin-token", token)
	const q = "answer to forget"
	g.search(t, q)
	g.flush(t)
	// One answer waits for a flush when the instance is disabled.
	g.search(t, "waiting answer")
	if a := g.admin(t, http.MethodPost, "/api/instances/"+url.PathEscape(hostile)+"/disable", token); a.status != 200 {
		t.Fatalf("disable: %d %s", a.status, a.body)
	}
	for _, q := range []string{q, "waiting answer"} {
		a := g.search(t, q)
		if a.header.Get("X-Searxgate-Cache") == "hit" || a.header.Get("X-Searxgate-Instance") == hostile {
			t.Fatalf("%q after disable: cache %q, instance %q", q, a.header.Get("X-Searxgate-Cache"), a.header.Get("X-Searxgate-Instance"))
		}
	}
	g.flush(t)
	if err := g.stop(); err != nil {
		t.Fatal(err)
	}
	assertNoSource(t, filepath.Join(data, store.FileName), hostile, 2)
}

// POST /api/cache/purge empties the cache in memory and on disk.
func TestCachePurgeEndpoint(t *testing.T) {
	_, dir := hostileFleet(t)
	data := t.TempDir()
	const token = "purge-token"
	g := startGateway(t, dir, data, "--admin-token", token)
	queries := []string{"purge me now", "purge me later"}
	for _, q := range queries {
		g.search(t, q)
	}
	g.flush(t)
	if a := g.admin(t, http.MethodPost, "/api/cache/purge", "wrong"); a.status != 401 {
		t.Fatalf("purge with a wrong token: %d %s", a.status, a.body)
	}
	a := g.admin(t, http.MethodPost, "/api/cache/purge", token)
	if a.status != 200 || !bytes.Contains(a.body, []byte(`"status":"purged"`)) {
		t.Fatalf("purge: %d %s", a.status, a.body)
	}
	if n, _ := g.app.store.CacheStats(); n != 0 {
		t.Fatalf("the store holds %d answers after a purge", n)
	}
	if a := g.search(t, queries[0]); a.header.Get("X-Searxgate-Cache") == "hit" {
		t.Fatal("served from the cache after a purge")
	}
}

// --cache-ttl 0: nothing is served from the cache and nothing is written
// to disk.
func TestCacheTTLZeroKeepsNothingOnDisk(t *testing.T) {
	fleet, dir := hostileFleet(t)
	data := t.TempDir()
	// An earlier run with a cache left answers in the file.
	g := startGateway(t, dir, data)
	g.search(t, "kept before")
	if err := g.stop(); err != nil {
		t.Fatal(err)
	}
	fleet.ResetTruth()

	g = startGateway(t, dir, data, "--cache-ttl", "0")
	if n, _ := g.app.store.CacheStats(); n != 0 {
		t.Fatalf("with --cache-ttl 0 the store still holds %d answers of an earlier run", n)
	}
	for i := range 2 {
		if a := g.search(t, "never kept"); a.header.Get("X-Searxgate-Cache") == "hit" {
			t.Fatalf("search %d was a cache hit with --cache-ttl 0", i)
		}
	}
	if n := totalSearches(fleet); n != 2 {
		t.Fatalf("%d upstream searches for 2 client searches", n)
	}
	g.flush(t)
	if n, _ := g.app.store.CacheStats(); n != 0 {
		t.Fatalf("the store holds %d answers with --cache-ttl 0", n)
	}
	if err := g.stop(); err != nil {
		t.Fatal(err)
	}
	assertNoQueryText(t, filepath.Join(data, store.FileName), []string{"never kept"})
}

// --cache-ttl 0 (or SEARXGATE_CACHE_TTL=0) is accepted and means 0, not
// the default.
func TestCacheTTLZeroIsExplicit(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  map[string]string
	}{
		{[]string{"--cache-ttl", "0"}, nil},
		{nil, map[string]string{"SEARXGATE_CACHE_TTL": "0"}},
		{[]string{"--cache-ttl", "0s"}, map[string]string{"SEARXGATE_CACHE_TTL": "5m"}},
	} {
		cfg, err := parseConfig(c.args, env(c.env), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.CacheTTL != 0 {
			t.Errorf("%v %v: cache-ttl %v, want 0", c.args, c.env, cfg.CacheTTL)
		}
	}
	cfg, err := parseConfig(nil, env(nil), io.Discard)
	if err != nil || cfg.noCache() {
		t.Fatalf("the default config keeps no cache (%v)", err)
	}
}

// --cache-ttl 0 keeps no read page either: web_url_read fetches the page
// every time. /about says nothing is kept.
func TestCacheTTLZeroReadsPagesAgain(t *testing.T) {
	_, dir := hostileFleet(t)
	g := startGateway(t, dir, "", "--cache-ttl", "0", "--reader-allow-private")
	var fetches atomic.Int64
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("a page read twice"))
	}))
	t.Cleanup(site.Close)
	s := connectMCP(t, g, nil)
	for i := range 2 {
		if r := callTool(t, s, mcp.ToolRead, map[string]any{"url": site.URL + "/page"}); r.IsError {
			t.Fatalf("read %d: %s", i, resultText(r))
		}
	}
	if n := fetches.Load(); n != 2 {
		t.Fatalf("%d fetches for two reads with --cache-ttl 0, want 2", n)
	}
	if a := g.get(t, "/about", nil); !bytes.Contains(a.body, []byte("This gateway keeps no answers.")) {
		t.Fatalf("/about with --cache-ttl 0 does not say it keeps no answers:\n%s", a.body)
	}
}
