package proxy

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

// maybeReadConfig starts a background read of inst's /config when one is
// due and a reader is free. It never blocks a search: while the terms are
// unknown the instance is searched through its HTML page, which every
// instance serves.
func (p *Proxy) maybeReadConfig(r *record, now time.Time) {
	if !p.recs.claimFetch(r, now) {
		return
	}
	select {
	case p.cfgSem <- struct{}{}:
	default:
		p.recs.doneFetch(r) // all readers busy: try again on a later search
		return
	}
	p.spawnRead(r, nil)
}

// spawnRead reads r's /config in the background; the caller holds a
// reader's place (cfgSem) and inst's claim, which the read gives back. wg,
// when not nil, counts the read. It reports false when the proxy is
// shutting down and nothing was started.
func (p *Proxy) spawnRead(r *record, wg *sync.WaitGroup) bool {
	if wg != nil {
		wg.Add(1)
	}
	ok := p.spawn(func() {
		if wg != nil {
			defer wg.Done()
		}
		defer func() { <-p.cfgSem }()
		defer p.recs.doneFetch(r)
		p.readConfig(r)
	})
	if !ok {
		if wg != nil {
			wg.Done()
		}
		<-p.cfgSem
		p.recs.doneFetch(r)
	}
	return ok
}

// readDue starts the reads of the /config of each of instances whose
// terms are due, a few at a time (cfgSem), until stop is closed; wg, when
// not nil, counts them.
func (p *Proxy) readDue(instances []string, stop <-chan struct{}, wg *sync.WaitGroup) {
	for _, inst := range instances {
		r := p.recs.ensure(inst)
		if !p.recs.claimFetch(r, p.now()) {
			continue
		}
		select {
		case p.cfgSem <- struct{}{}:
		case <-stop:
			p.recs.doneFetch(r)
			return
		}
		if !p.spawnRead(r, wg) {
			return
		}
	}
}

// ReadTerms reads, in the background and a few at a time, the /config of
// each of instances whose terms are due (unknown, or older than a day), so
// that searxgate knows an instance's limiter, link-token check and formats
// before it searches it. Call it with the pool's candidates, best first.
func (p *Proxy) ReadTerms(instances []string) {
	p.spawn(func() { p.readDue(instances, p.bg.Done(), nil) })
}

// ReadTermsNow reads the /config of each of instances whose terms are due,
// a few at a time, and returns when every read has ended or ctx has: the
// operator's own instances are read this way before searxgate says it is
// ready, so that their first search already uses the right format. A read
// that fails is recorded (Caps.ConfigErr) and searching goes on without
// it; a read another search already started is not waited for.
func (p *Proxy) ReadTermsNow(ctx context.Context, instances []string) {
	var wg sync.WaitGroup
	p.readDue(instances, ctx.Done(), &wg)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	for _, inst := range instances { // terms kept from an earlier run say it too
		p.adviseLimiter(p.recs.ensure(inst))
	}
}

// terms returns what searxgate knows of inst's terms for a search that
// must be sent by deadline. Terms never read, and no read under way, are
// read first, within a quarter of the time left: an instance whose
// link-token check is on must get no search at all. Terms merely due, or
// being read already (the start-up reads), are read in the background and
// the search goes on with what is known: the HTML page, which every
// instance serves.
func (p *Proxy) terms(r *record, now, deadline time.Time) Caps {
	c := p.recs.capsOf(r)
	if !c.ConfigAt.IsZero() {
		p.maybeReadConfig(r, now)
		return c
	}
	if !p.recs.claimFetch(r, now) {
		return c // being read already (the start-up reads)
	}
	p.readConfigBy(r, now.Add(min(configReadLimit, deadline.Sub(now)/4)))
	p.recs.doneFetch(r)
	return p.recs.capsOf(r)
}

// readConfig reads r's /config and stores what it says.
func (p *Proxy) readConfig(r *record) {
	p.readConfigBy(r, p.now().Add(configReadLimit))
}

// readConfigBy reads r's /config, giving up at deadline.
func (p *Proxy) readConfigBy(r *record, deadline time.Time) {
	if p.bg.Err() != nil {
		return
	}
	inst := r.url
	now := p.now()
	rep, err := p.up.Get(inst, "config", nil, "en-US,en;q=0.9", deadline.Sub(now))
	var terms detect.Terms
	if err == nil && rep.Status == 200 {
		terms, err = detect.ParseConfig(rep.Body)
	} else if err == nil {
		err = &statusError{rep.Status}
	}
	if err != nil {
		p.log.Debug("reading /config failed", "instance", inst, "err", err)
		ce := &ConfigReadError{}
		if se := (*statusError)(nil); errors.As(err, &se) {
			ce.Status = se.status
		} else {
			ce.Reason = upstream.Reason(err)
		}
		p.recs.updateCaps(r, func(c *Caps) { c.ConfigAt, c.ConfigOK, c.ConfigErr, c.ConfigStatus = now, false, ce.Error(), ce.Status })
		return
	}
	p.recs.updateCaps(r, func(c *Caps) {
		c.ConfigAt, c.ConfigOK, c.ConfigErr, c.ConfigStatus = now, true, "", 0
		c.Version, c.Limiter, c.LinkToken, c.Public = terms.Version, terms.Limiter, terms.LinkToken, terms.PublicInstance
		c.Autocomplete = terms.Autocomplete
		// A fresh slice: copies of the old Caps handed out may still read
		// the old one.
		c.Engines, c.EnginesV = EnginesOf(terms), enginesVersion
	})
	if terms.LinkToken {
		p.log.Info("instance has the link-token check on: no searches go to it", "instance", inst)
	}
	p.adviseLimiter(r)
}

// adviseLimiter logs, once per instance, that an own instance's limiter
// counts searxgate and how to lift it.
func (p *Proxy) adviseLimiter(r *record) {
	if !r.passDenied.Load() && r.limited() && p.pool.Stats(r.url).Tier == pool.Own && r.limiterSaid.CompareAndSwap(false, true) {
		p.log.Warn("your own instance: "+LimiterAdvice, "instance", r.url)
	}
}

type statusError struct{ status int }

func (e *statusError) Error() string { return "status " + strconv.Itoa(e.status) }
