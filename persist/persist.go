package persist

import (
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"sync"

	"github.com/searxgate/searxgate/directory"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/proxy/cache"
	"github.com/searxgate/searxgate/store"
)

// Store is the part of *store.Store the mapping reads and writes.
type Store interface {
	LoadPool() (map[string][]byte, error)
	LoadCaps() (map[string][]byte, error)
	WriteBatch(store.Batch) error
}

// Terms is where the instances' terms live; the proxy's instance
// records (proxy.Proxy.Instances) are one.
type Terms interface {
	// DirtyCaps takes the terms changed (and the instances forgotten)
	// since it was last called.
	DirtyCaps() (map[string]proxy.Caps, []string)
	// RequeueCaps marks instances' terms as changed again.
	RequeueCaps(instances []string)
	// ImportCaps restores terms read from the store.
	ImportCaps(map[string]proxy.Caps)
}

// Answers is the write-behind cache; *cache.WriteBehind is one.
type Answers interface {
	// Flush hands the answers waiting for the file to write, and keeps
	// them for the next flush when write fails.
	Flush(write func([]cache.Sealed) error) error
}

// RestorePool reads the pool's learned state from st into p. A record
// that does not decode is skipped with a warning: one bad record costs
// only what was learned of that instance.
func RestorePool(st Store, p *pool.Pool, log *slog.Logger) error {
	raw, err := st.LoadPool()
	if err != nil {
		return err
	}
	states := make([]pool.InstanceState, 0, len(raw))
	for u, js := range raw {
		var s pool.InstanceState
		if err := json.Unmarshal(js, &s); err != nil {
			log.Warn("skipping an unreadable pool record", "instance", u, "err", err)
			continue
		}
		states = append(states, s)
	}
	p.Import(states)
	return nil
}

// RestoreCaps reads the instances' terms from st into t; a record that
// does not decode is left out (the terms are read again from /config).
func RestoreCaps(st Store, t Terms) error {
	raw, err := st.LoadCaps()
	if err != nil {
		return err
	}
	caps := make(map[string]proxy.Caps, len(raw))
	for u, js := range raw {
		var c proxy.Caps
		if err := json.Unmarshal(js, &c); err == nil {
			caps[u] = c
		}
	}
	t.ImportCaps(caps)
	return nil
}

// Flusher writes what was learned to the store. Its fields are set
// before the first Flush.
type Flusher struct {
	Store   Store
	Pool    *pool.Pool
	Terms   Terms
	Answers Answers

	mu sync.Mutex // one flush at a time
}

// Flush writes the pool's learned state (the whole set: records of
// instances gone from the pool go), the terms that changed and the
// answers waiting for the file, in one transaction. When it fails nothing
// is lost: the answers and the terms wait for the next flush.
func (f *Flusher) Flush() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := store.Batch{Pool: map[string][]byte{}, ReplacePool: true, Caps: map[string][]byte{}}
	for _, s := range f.Pool.Export() {
		js, err := json.Marshal(s)
		if err != nil {
			return err
		}
		b.Pool[s.URL] = js
	}
	changed, deleted := f.Terms.DirtyCaps()
	for u, c := range changed {
		if js, err := json.Marshal(c); err == nil {
			b.Caps[u] = js
		}
	}
	b.CapsDelete = deleted
	err := f.Answers.Flush(func(answers []cache.Sealed) error {
		b.Cache = sealedEntries(answers)
		return f.Store.WriteBatch(b)
	})
	if err != nil {
		f.Terms.RequeueCaps(append(slices.Collect(maps.Keys(changed)), deleted...))
	}
	return err
}

// sealedEntries are the answers a flush took, as the store's batch
// writes them.
func sealedEntries(answers []cache.Sealed) []store.CacheEntry {
	out := make([]store.CacheEntry, len(answers))
	for i, a := range answers {
		out[i] = store.CacheEntry{Key: a.ID, Value: a.Value, Source: a.Source, StoredAt: a.StoredAt, Expires: a.Expires}
	}
	return out
}

// DirectoryStore is the part of *store.Store that keeps the directory list.
type DirectoryStore interface {
	LoadDirectory() (store.Directory, bool, error)
	SaveDirectory(store.Directory) error
}

// DirectoryCache is the store as a directory.Cache.
type DirectoryCache struct{ Store DirectoryStore }

// LoadDirectory returns the saved list; ok is false when there is none.
func (d DirectoryCache) LoadDirectory() (directory.Saved, bool, error) {
	v, ok, err := d.Store.LoadDirectory()
	return directory.Saved{Raw: v.Raw, ETag: v.ETag, LastModified: v.LastModified, FetchedAt: v.FetchedAt}, ok, err
}

// SaveDirectory replaces the saved list.
func (d DirectoryCache) SaveDirectory(s directory.Saved) error {
	return d.Store.SaveDirectory(store.Directory{Raw: s.Raw, ETag: s.ETag, LastModified: s.LastModified, FetchedAt: s.FetchedAt})
}
