package operator

import (
	"github.com/searxgate/searxgate/directory"
	"github.com/searxgate/searxgate/egress"
	"github.com/searxgate/searxgate/pool"
)

// Seeded is what seeding the pool from a directory list did.
type Seeded struct {
	// Instances is how many of the list's entries the pool was seeded with.
	Instances int
	// Refused are the entries the address guard refused (a private or
	// loopback address without AllowPrivate), with why.
	Refused []Refusal
}

// Refusal is one directory entry the address guard refused.
type Refusal struct {
	URL string
	Err error
}

// Seed seeds the pool with a directory list: every entry but those the
// operator removed and those the address guard refuses, each with its
// prior and the engines the directory saw never answer there. The
// operator's own instances and what was learned of the others are kept
// (pool.Seed). Names are not resolved here (that would be a lookup per
// entry at every refresh): the dialer checks the addresses they resolve
// to at connect time; literal addresses and localhost names are refused
// now.
func (o *Operator) Seed(list directory.List) Seeded {
	removed := o.RemovedSet()
	g := egress.Guard{AllowPrivate: o.cfg.AllowPrivate}
	var out Seeded
	priors := make([]pool.Prior, 0, len(list.Entries))
	var failing map[string][]string // engines searx.space saw never answer there
	for _, e := range list.Entries {
		if removed[e.URL] {
			continue
		}
		if err := g.CheckLiteral(e.URL); err != nil {
			out.Refused = append(out.Refused, Refusal{URL: e.URL, Err: err})
			continue
		}
		priors = append(priors, pool.Prior{URL: e.URL, Prior: e.Prior})
		if len(e.Failing) > 0 {
			if failing == nil {
				failing = make(map[string][]string)
			}
			failing[e.URL] = e.Failing
		}
	}
	o.cfg.Pool.Seed(priors)
	o.cfg.Pool.SeedFailing(failing)
	out.Instances = len(priors)
	return out
}

// Reseed is Seed for a refreshed list while searxgate serves: the terms
// of the pool's instances are read right after (in the background), so
// that a new instance's /config is known before it is searched (cheap,
// not rate limited, and one with the link-token check on must get no
// search at all). At start the caller reads them, and judges them.
func (o *Operator) Reseed(list directory.List) Seeded {
	s := o.Seed(list)
	o.cfg.Terms.ReadTerms(o.cfg.Pool.Rank(0, nil))
	return s
}
