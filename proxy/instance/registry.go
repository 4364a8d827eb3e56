package instance

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy/polite"
	"github.com/searxgate/searxgate/proxy/upstream"
)

// Record is everything the search path keeps about one instance, in one
// place: its terms, its budget windows (searches and autocompletions), its
// upstream client and its recent outcomes. It is the instance's handle:
// whether a search may go there now is its to say (Available, avail.go).
// Records are made for instances the pool holds, and Forget drops one in
// one step. An attempt still running when its instance is forgotten holds
// the record it started with: what it learns late lands there and never
// brings the instance back.
type Record struct {
	url string
	g   *Registry // the registry that made it: its lock, the pool and the budgets

	// Guarded by Registry.mu.
	caps     Caps
	fetching bool // its /config is being read
	host     *upstream.Host

	ring, acRing polite.Ring // kept by the Politeness of Rings, under its lock

	metrics *Metrics // its own mutex

	limiterSaid atomic.Bool // the advice on its limiter was logged
	// passDenied: an own instance declared to pass searxgate
	// (Config.OwnPassIP) whose limiter refused it (passip.go); kept in
	// memory only, so a restart trusts --own-pass-ip again.
	passDenied atomic.Bool
	passAdvice atomic.Pointer[string] // what the log said of it then, for the status page
}

// Config is what a Registry is given at construction.
type Config struct {
	Pool           *pool.Pool
	AllowLinkToken bool // a search may go to an instance with the link-token check on
	// OwnPassIP says the operator's own instances pass searxgate's address
	// (botdetection.ip_lists.pass_ip).
	OwnPassIP bool
	// SourceAddr, when set, is the address searxgate sends from to an
	// instance, for the advice PassIPAdvice gives.
	SourceAddr func(inst string) string
	Log        *slog.Logger
	Now        func() time.Time
	// Spawn runs f in the background, counted by the owner's shutdown,
	// and reports false when it is shutting down and f was not started.
	Spawn func(f func()) bool
	// Stop ends when the owner shuts down: /config reads stop then.
	Stop context.Context
}

// Registry holds the records, and what their rule reads besides them.
type Registry struct {
	mu    sync.RWMutex // guards m, dirty and the records' fields said above
	m     map[string]*Record
	dirty map[string]bool // terms changed since the last DirtyCaps (a forgotten record's too)

	cfg    Config        // set by New, then only read
	totals sync.Map      // instance -> *instanceTotals; dropped only by ResetCounters (a counter reset, as a restart is)
	cfgSem chan struct{} // bounds concurrent /config reads

	// Set by Use, then only read.
	polite, acPolite *polite.Politeness // the budgets of searches and of autocompletions
	up               *upstream.Client
}

// New returns an empty Registry. Use must give it its budgets and client
// before any search asks it. A nil Log discards, a nil Now is time.Now,
// a nil Stop never ends.
func New(cfg Config) *Registry {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Stop == nil {
		cfg.Stop = context.Background()
	}
	return &Registry{m: make(map[string]*Record), dirty: make(map[string]bool),
		cfg: cfg, cfgSem: make(chan struct{}, configFetchers)}
}

// Use gives g the budgets whose rings live in its records (made with
// Rings) and the upstream client whose hosts do (made with Hosts).
func (g *Registry) Use(budget, acBudget *polite.Politeness, up *upstream.Client) {
	g.polite, g.acPolite, g.up = budget, acBudget, up
}

func (g *Registry) now() time.Time { return g.cfg.Now() }

// Budget is the searches' politeness budget, whose windows live in the
// records: the one Available asks, and the view shows.
func (g *Registry) Budget() *polite.Politeness { return g.polite }

// Get returns inst's record, nil when there is none.
func (g *Registry) Get(inst string) *Record {
	g.mu.RLock()
	r := g.m[inst]
	g.mu.RUnlock()
	return r
}

// Ensure returns inst's record, making it when there is none.
func (g *Registry) Ensure(inst string) *Record {
	if r := g.Get(inst); r != nil {
		return r
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.m[inst]
	if r == nil {
		r = &Record{url: inst, g: g, metrics: newMetrics()}
		g.m[inst] = r
	}
	return r
}

// Forget drops inst's record in one step: its terms, budget windows,
// connections and recent outcomes.
func (g *Registry) Forget(inst string) {
	g.mu.Lock()
	r := g.m[inst]
	if r != nil {
		delete(g.m, inst)
		g.dirty[inst] = true
	}
	g.mu.Unlock()
	if r != nil {
		r.host.CloseIdle() // its connections go with it
	}
}

// Caps returns what searxgate learned of inst's terms (zero when unknown).
func (g *Registry) Caps(inst string) Caps { return g.Get(inst).Caps() }

// URL is the record's instance.
func (r *Record) URL() string { return r.url }

// Caps returns r's terms (zero for a nil record).
func (r *Record) Caps() Caps {
	if r == nil {
		return Caps{}
	}
	r.g.mu.RLock()
	defer r.g.mu.RUnlock()
	return r.caps
}

// Update changes r's terms; the store hears of it only while r is still
// the instance's record.
func (r *Record) Update(f func(*Caps)) {
	g := r.g
	g.mu.Lock()
	f(&r.caps)
	if g.m[r.url] == r {
		g.dirty[r.url] = true
	}
	g.mu.Unlock()
}

// Metrics are r's recent upstream outcomes.
func (r *Record) Metrics() *Metrics { return r.metrics }

// claimFetch marks r's /config as being read and reports whether the
// caller should read it (it is due and nobody else is reading it).
func (g *Registry) claimFetch(r *Record, now time.Time) bool {
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

func (g *Registry) doneFetch(r *Record) {
	g.mu.Lock()
	r.fetching = false
	g.mu.Unlock()
}

// DirtyCaps returns the terms changed since the last call (for the store)
// and the instances whose terms were dropped, and clears the marks.
func (g *Registry) DirtyCaps() (changed map[string]Caps, deleted []string) {
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

// RequeueCaps marks instances' terms as changed again, after a write of
// what DirtyCaps returned failed.
func (g *Registry) RequeueCaps(instances []string) {
	g.mu.Lock()
	for _, u := range instances {
		g.dirty[u] = true
	}
	g.mu.Unlock()
}

// ImportCaps restores terms read from the store. The engines' lists of
// codes are shared with those read from any /config alike.
func (g *Registry) ImportCaps(m map[string]Caps) {
	for u, c := range m {
		if len(c.Engines) > 0 {
			engines := slices.Clone(c.Engines)
			for i := range engines {
				e := &engines[i]
				e.Languages, e.Regions = detect.InternList(slices.Clone(e.Languages)), detect.InternList(slices.Clone(e.Regions))
			}
			c.Engines = engines
		}
		r := g.Ensure(u)
		g.mu.Lock()
		r.caps = c
		g.mu.Unlock()
	}
}

// Candidates lists when each instance searxgate may search at all (its
// terms do not bar it) frees, as the pool says (pool.FreeAt): what the
// slot queue and a search's error weigh.
func (g *Registry) Candidates() []pool.Free {
	return g.cfg.Pool.FreeAt(func(inst string) bool { return g.Get(inst).Barred() })
}

// PublicSuggesters counts the public instances, not disabled, whose terms
// name an autocompletion backend and do not bar searxgate: what
// autocompletion's windows add up over, for the clients' shares of them.
func (g *Registry) PublicSuggesters() int {
	n := 0
	offersNone := func(inst string) bool {
		r := g.Get(inst)
		if r == nil {
			return true
		}
		c := r.Caps()
		return c.Autocomplete == "" || r.BarredBy(c)
	}
	for _, f := range g.cfg.Pool.FreeAt(offersNone) {
		if !f.Own {
			n++
		}
	}
	return n
}

// Rings is the polite.Rings of a Politeness whose rings live in g's
// records (ac: the autocompletion ring).
func (g *Registry) Rings(ac bool) polite.Rings { return recordRings{g: g, ac: ac} }

// recordRings is the polite.Rings of a Politeness whose rings live in the
// records (ac: the autocompletion ring). It never makes a record.
type recordRings struct {
	g  *Registry
	ac bool
}

func (s recordRings) Ring(inst string, _ bool) *polite.Ring {
	r := s.g.Get(inst)
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

// Hosts is the upstream client's Hosts: each instance's Host lives in its
// record, and none is kept for an instance that has none.
func (g *Registry) Hosts() upstream.Hosts { return registryHosts{g} }

type registryHosts struct{ g *Registry }

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
