package persist

import (
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/searxgate/searxgate/directory"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/proxy/cache"
	"github.com/searxgate/searxgate/store"
)

// terms is a Terms kept in maps.
type terms struct {
	dirty    map[string]proxy.Caps
	deleted  []string
	requeued []string
	imported map[string]proxy.Caps
}

func (t *terms) DirtyCaps() (map[string]proxy.Caps, []string) {
	d, del := t.dirty, t.deleted
	t.dirty, t.deleted = nil, nil
	return d, del
}
func (t *terms) RequeueCaps(insts []string)         { t.requeued = append(t.requeued, insts...) }
func (t *terms) ImportCaps(m map[string]proxy.Caps) { t.imported = m }

func openStore(t *testing.T, path string) *store.Store {
	t.Helper()
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestRoundTrip: what a flush writes (the pool's state, the changed
// terms, the waiting answers, the directory list) comes back from the
// store after a restart, the same.
func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "searxgate.db")
	st := openStore(t, path)
	const a, b = "https://a.example/", "https://b.example/"
	p := pool.New(pool.Config{})
	p.Seed([]pool.Prior{{URL: a, Prior: 300 * time.Millisecond}})
	p.Add(b, pool.Own)
	p.Disable(b)
	tm := &terms{dirty: map[string]proxy.Caps{a: {ConfigOK: true, Version: "2026.8.22", Limiter: true}}}
	wb := cache.NewWriteBehind(st, cache.WriteBehindConfig{Secret: []byte("0123456789abcdef0123456789abcdef")})
	key := wb.CacheKey("q=x")
	wb.CachePut(key, cache.Entry{JSON: []byte(`{"results":[]}`), Instance: a, Expires: time.Now().Add(time.Hour)})
	f := &Flusher{Store: st, Pool: p, Terms: tm, Answers: wb}
	if err := f.Flush(); err != nil {
		t.Fatal(err)
	}
	if wb.Pending() != 0 || len(tm.requeued) != 0 {
		t.Fatalf("after a good flush: %d answers pending, terms requeued %v", wb.Pending(), tm.requeued)
	}
	saved := directory.Saved{Raw: []byte(`{"instances":{}}`), ETag: `"e1"`, LastModified: "yesterday", FetchedAt: time.Unix(1_800_000_000, 0).UTC()}
	if err := (DirectoryCache{Store: st}).SaveDirectory(saved); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st = openStore(t, path)
	defer st.Close()
	p2 := pool.New(pool.Config{})
	if err := RestorePool(st, p2, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if sa, sb := p2.Stats(a), p2.Stats(b); sa.PriorMS != 300 || sa.Tier != pool.Public || sb.Tier != pool.Own || !sb.Disabled {
		t.Errorf("restored pool: a %+v, b %+v", sa, sb)
	}
	tm2 := &terms{}
	if err := RestoreCaps(st, tm2); err != nil {
		t.Fatal(err)
	}
	if c := tm2.imported[a]; len(tm2.imported) != 1 || !c.ConfigOK || c.Version != "2026.8.22" || !c.Limiter {
		t.Errorf("restored terms %+v", tm2.imported)
	}
	wb2 := cache.NewWriteBehind(st, cache.WriteBehindConfig{Secret: []byte("0123456789abcdef0123456789abcdef")})
	if c, ok := wb2.CacheGet(key); !ok || string(c.JSON) != `{"results":[]}` || c.Instance != a {
		t.Errorf("restored answer %+v, %v", c, ok)
	}
	got, ok, err := DirectoryCache{Store: st}.LoadDirectory()
	if err != nil || !ok || string(got.Raw) != string(saved.Raw) || got.ETag != saved.ETag ||
		got.LastModified != saved.LastModified || !got.FetchedAt.Equal(saved.FetchedAt) {
		t.Errorf("restored directory %+v, %v, %v", got, ok, err)
	}
}

// failing is a Store whose writes fail.
type failing struct{ Store }

func (failing) WriteBatch(store.Batch) error { return errors.New("disk full") }

// TestFailedFlushLosesNothing: when the write fails, the answers and the
// changed (and forgotten) terms wait for the next flush.
func TestFailedFlushLosesNothing(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "searxgate.db"))
	defer st.Close()
	p := pool.New(pool.Config{})
	p.Seed([]pool.Prior{{URL: "https://a.example/"}})
	tm := &terms{dirty: map[string]proxy.Caps{"https://a.example/": {ConfigOK: true}}, deleted: []string{"https://gone.example/"}}
	wb := cache.NewWriteBehind(st, cache.WriteBehindConfig{Secret: []byte("0123456789abcdef0123456789abcdef")})
	wb.CachePut(wb.CacheKey("q=x"), cache.Entry{JSON: []byte(`{}`), Instance: "https://a.example/", Expires: time.Now().Add(time.Hour)})
	f := &Flusher{Store: failing{st}, Pool: p, Terms: tm, Answers: wb}
	if err := f.Flush(); err == nil {
		t.Fatal("a failed write flushed")
	}
	slices.Sort(tm.requeued)
	if wb.Pending() != 1 || !slices.Equal(tm.requeued, []string{"https://a.example/", "https://gone.example/"}) {
		t.Errorf("after a failed flush: %d answers pending, terms requeued %v", wb.Pending(), tm.requeued)
	}
}

// TestUnreadableRecordsSkipped: a pool or terms record that does not
// decode costs only that instance's record.
func TestUnreadableRecordsSkipped(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "searxgate.db"))
	defer st.Close()
	good := []byte(`{"url":"https://a.example/","tier":"public"}`)
	err := st.WriteBatch(store.Batch{
		Pool: map[string][]byte{"https://a.example/": good, "https://bad.example/": []byte(`{`)}, ReplacePool: true,
		Caps: map[string][]byte{"https://a.example/": []byte(`{"config_ok":true}`), "https://bad.example/": []byte(`[`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	p := pool.New(pool.Config{})
	if err := RestorePool(st, p, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if snap := p.Snapshot(); len(snap) != 1 || snap[0].URL != "https://a.example/" {
		t.Errorf("restored pool %+v", snap)
	}
	tm := &terms{}
	if err := RestoreCaps(st, tm); err != nil {
		t.Fatal(err)
	}
	if len(tm.imported) != 1 || !tm.imported["https://a.example/"].ConfigOK {
		t.Errorf("restored terms %+v", tm.imported)
	}
}
