package proxy

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy/polite"
	"github.com/searxgate/searxgate/proxy/upstream"
)

// record is everything the search path keeps about one instance, in one
// place: its terms, its budget windows (searches and autocompletions), its
// upstream client and its recent outcomes. It is the instance's handle:
// whether a search may go there now is its to say (Available, avail.go).
// Records are made for instances the pool holds (checkout, the terms read
// at start, the store's terms), and Forget drops a record in one step. An attempt still running when its
// instance is forgotten holds the record it started with: what it learns
// late lands there and never brings the instance back.
type record struct {
	url string
	g   *registry // the registry that made it: its lock, the pool and the budgets

	// Guarded by registry.mu.
	caps     Caps
	fetching bool // its /config is being read
	host     *upstream.Host

	ring, acRing polite.Ring // kept by Proxy.polite and Proxy.acPolite (recordRings), under their locks

	metrics *InstanceMetrics // its own mutex

	limiterSaid atomic.Bool // the advice on its limiter was logged
	// passDenied: an own instance declared to pass searxgate
	// (Config.OwnPassIP) whose limiter refused it (passip.go); kept in
	// memory only, so a restart trusts --own-pass-ip again.
	passDenied atomic.Bool
	passAdvice atomic.Pointer[string] // what the log said of it then, for the status page
}

// registry holds the records, and what their rule reads besides them.
type registry struct {
	mu    sync.RWMutex // guards m, dirty and the records' fields said above
	m     map[string]*record
	dirty map[string]bool // terms changed since the last takeDirty (a forgotten record's too)

	// Set by New, then only read.
	pool             *pool.Pool
	polite, acPolite *polite.Politeness // the budgets of searches and of autocompletions
	allowLinkToken   bool               // Config.AllowLinkToken
	ownPassIP        bool               // Config.OwnPassIP
}

func newRegistry() *registry {
	return &registry{m: make(map[string]*record), dirty: make(map[string]bool)}
}

// get returns inst's record, nil when there is none.
func (g *registry) get(inst string) *record {
	g.mu.RLock()
	r := g.m[inst]
	g.mu.RUnlock()
	return r
}

// ensure returns inst's record, making it when there is none.
func (g *registry) ensure(inst string) *record {
	if r := g.get(inst); r != nil {
		return r
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.m[inst]
	if r == nil {
		r = &record{url: inst, g: g, metrics: newInstanceMetrics()}
		g.m[inst] = r
	}
	return r
}

// forget drops inst's record.
func (g *registry) forget(inst string) {
	g.mu.Lock()
	if _, ok := g.m[inst]; ok {
		delete(g.m, inst)
		g.dirty[inst] = true
	}
	g.mu.Unlock()
}

// caps returns inst's terms (zero when unknown).
func (g *registry) caps(inst string) Caps {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if r := g.m[inst]; r != nil {
		return r.caps
	}
	return Caps{}
}

// capsOf returns r's terms.
func (g *registry) capsOf(r *record) Caps {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return r.caps
}

// updateCaps changes r's terms; the store hears of it only while r is
// still the instance's record.
func (g *registry) updateCaps(r *record, f func(*Caps)) {
	g.mu.Lock()
	f(&r.caps)
	if g.m[r.url] == r {
		g.dirty[r.url] = true
	}
	g.mu.Unlock()
}

// claimFetch marks r's /config as being read and reports whether the
// caller should read it (it is due and nobody else is reading it).
func (g *registry) claimFetch(r *record, now time.Time) bool {
	// Every attempt asks; nearly always the answer is no, known under the
	// read lock.
	g.mu.RLock()
	due := !r.fetching && r.caps.needsConfig(now)
	g.mu.RUnlock()
	if !due {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if r.fetching || !r.caps.needsConfig(now) {
		return false
	}
	r.fetching = true
	return true
}

func (g *registry) doneFetch(r *record) {
	g.mu.Lock()
	r.fetching = false
	g.mu.Unlock()
}

// takeDirty returns the terms changed since the last call (a forgotten
// instance in deleted) and clears the marks.
func (g *registry) takeDirty() (changed map[string]Caps, deleted []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	changed = make(map[string]Caps, len(g.dirty))
	for k := range g.dirty {
		if r, ok := g.m[k]; ok {
			changed[k] = r.caps
		} else {
			deleted = append(deleted, k)
		}
	}
	clear(g.dirty)
	return changed, deleted
}

// load restores terms read from the store.
func (g *registry) load(m map[string]Caps) {
	for k, v := range m {
		r := g.ensure(k)
		g.mu.Lock()
		r.caps = v
		g.mu.Unlock()
	}
}

// requeue marks instances' terms as changed again.
func (g *registry) requeue(instances []string) {
	g.mu.Lock()
	for _, u := range instances {
		g.dirty[u] = true
	}
	g.mu.Unlock()
}

// recordRings is the polite.Rings of a Politeness whose rings live in the
// records (ac: the autocompletion ring). It never makes a record.
type recordRings struct {
	g  *registry
	ac bool
}

func (s recordRings) Ring(inst string, _ bool) *polite.Ring {
	r := s.g.get(inst)
	switch {
	case r == nil:
		return nil
	case s.ac:
		return &r.acRing
	default:
		return &r.ring
	}
}

func (s recordRings) Drop(inst string) {
	if t := s.Ring(inst, false); t != nil {
		*t = polite.Ring{}
	}
}

// registryHosts is the upstream client's Hosts: each instance's Host lives
// in its record, and none is kept for an instance that has none.
type registryHosts struct{ g *registry }

func (s registryHosts) Host(instance string) *upstream.Host {
	s.g.mu.RLock()
	defer s.g.mu.RUnlock()
	if r := s.g.m[instance]; r != nil {
		return r.host
	}
	return nil
}

func (s registryHosts) Keep(instance string, h *upstream.Host) {
	s.g.mu.Lock()
	defer s.g.mu.Unlock()
	if r := s.g.m[instance]; r != nil && r.host == nil {
		r.host = h
	}
}
