package instance

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy/upstream"
)

// maybeRead starts a background read of r's /config when one is due and a
// reader is free. It never blocks a search: while the terms are unknown
// the instance is searched through its HTML page, which every instance
// serves.
func (g *Registry) maybeRead(r *Record, now time.Time) {
	if !g.claimFetch(r, now) {
		return
	}
	select {
	case g.cfgSem <- struct{}{}:
	default:
		g.doneFetch(r) // all readers busy: try again on a later search
		return
	}
	g.spawnRead(r, nil)
}

// spawnRead reads r's /config in the background; the caller holds a
// reader's place (cfgSem) and r's claim, which the read gives back. wg,
// when not nil, counts the read. It reports false when the owner is
// shutting down and nothing was started.
func (g *Registry) spawnRead(r *Record, wg *sync.WaitGroup) bool {
	if wg != nil {
		wg.Add(1)
	}
	ok := g.cfg.Spawn(func() {
		if wg != nil {
			defer wg.Done()
		}
		defer func() { <-g.cfgSem }()
		defer g.doneFetch(r)
		g.read(r, g.now().Add(configReadLimit))
	})
	if !ok {
		if wg != nil {
			wg.Done()
		}
		<-g.cfgSem
		g.doneFetch(r)
	}
	return ok
}

// readDue starts the reads of the /config of each of instances whose
// terms are due, a few at a time (cfgSem), until stop is closed; wg, when
// not nil, counts them.
func (g *Registry) readDue(instances []string, stop <-chan struct{}, wg *sync.WaitGroup) {
	for _, inst := range instances {
		r := g.Ensure(inst)
		if !g.claimFetch(r, g.now()) {
			continue
		}
		select {
		case g.cfgSem <- struct{}{}:
		case <-stop:
			g.doneFetch(r)
			return
		}
		if !g.spawnRead(r, wg) {
			return
		}
	}
}

// ReadTerms reads, in the background and a few at a time, the /config of
// each of instances whose terms are due (unknown, or older than a day), so
// that searxgate knows an instance's limiter, link-token check and formats
// before it searches it. Call it with the pool's candidates, best first.
func (g *Registry) ReadTerms(instances []string) {
	g.cfg.Spawn(func() { g.readDue(instances, g.cfg.Stop.Done(), nil) })
}

// ReadTermsNow reads the /config of each of instances whose terms are due,
// a few at a time, and returns when every read has ended or ctx has: the
// operator's own instances are read this way before searxgate says it is
// ready, so that their first search already uses the right format. A read
// that fails is recorded (Caps.ConfigErr) and searching goes on without
// it; a read another search already started is not waited for.
func (g *Registry) ReadTermsNow(ctx context.Context, instances []string) {
	var wg sync.WaitGroup
	g.readDue(instances, ctx.Done(), &wg)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	for _, inst := range instances { // terms kept from an earlier run say it too
		g.adviseLimiter(g.Ensure(inst))
	}
}

// Terms returns what searxgate knows of r's terms for a search that must
// be sent by deadline. Terms never read, and no read under way, are read
// first, within ReadWait: an instance whose link-token check is on must
// get no search at all. Terms merely due, or being read already (the
// start-up reads), are read in the background and the search goes on with
// what is known: the HTML page, which every instance serves.
func (r *Record) Terms(now, deadline time.Time) Caps {
	g := r.g
	c := r.Caps()
	if !c.ConfigAt.IsZero() {
		g.maybeRead(r, now)
		return c
	}
	if !g.claimFetch(r, now) {
		return c // being read already (the start-up reads)
	}
	g.read(r, now.Add(ReadWait(deadline.Sub(now))))
	g.doneFetch(r)
	return r.Caps()
}

// read reads r's /config, giving up at deadline, and stores what it says.
func (g *Registry) read(r *Record, deadline time.Time) {
	if g.cfg.Stop.Err() != nil {
		return
	}
	inst := r.url
	now := g.now()
	rep, err := g.up.Get(inst, "config", nil, "en-US,en;q=0.9", deadline.Sub(now))
	var terms detect.Terms
	if err == nil && rep.Status == 200 {
		terms, err = detect.ParseConfig(rep.Body)
	} else if err == nil {
		err = &statusError{rep.Status}
	}
	if err != nil {
		g.cfg.Log.Debug("reading /config failed", "instance", inst, "err", err)
		ce := &ConfigReadError{}
		if se := (*statusError)(nil); errors.As(err, &se) {
			ce.Status = se.status
		} else {
			ce.Reason = upstream.Reason(err)
		}
		r.Update(func(c *Caps) { c.ConfigAt, c.ConfigOK, c.ConfigErr, c.ConfigStatus = now, false, ce.Error(), ce.Status })
		return
	}
	r.Update(func(c *Caps) {
		c.ConfigAt, c.ConfigOK, c.ConfigErr, c.ConfigStatus = now, true, "", 0
		c.Version, c.Limiter, c.LinkToken, c.Public = terms.Version, terms.Limiter, terms.LinkToken, terms.PublicInstance
		c.Autocomplete = terms.Autocomplete
		// A fresh slice: copies of the old Caps handed out may still read
		// the old one.
		c.Engines, c.EnginesV = EnginesOf(terms), EnginesVersion
	})
	if terms.LinkToken {
		g.cfg.Log.Info("instance has the link-token check on: no searches go to it", "instance", inst)
	}
	g.adviseLimiter(r)
}

// adviseLimiter logs, once per instance, that an own instance's limiter
// counts searxgate and how to lift it.
func (g *Registry) adviseLimiter(r *Record) {
	if !r.passDenied.Load() && r.Limited() && g.cfg.Pool.Stats(r.url).Tier == pool.Own && r.limiterSaid.CompareAndSwap(false, true) {
		g.cfg.Log.Warn("your own instance: "+LimiterAdvice, "instance", r.url)
	}
}

type statusError struct{ status int }

func (e *statusError) Error() string { return "status " + strconv.Itoa(e.status) }
