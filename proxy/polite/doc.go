// Package polite is searxgate's manners towards the instances, as
// arithmetic: how many searches each may get (Politeness: sliding
// windows below SearXNG's limiter, per class of instance, with a margin),
// how many extra searches hedges and retries may add (ExtraBudget), and
// how a client's share of the public budget is kept (Fair).
//
// It knows no search, no pool and no network: the proxy asks it, with
// the times of its own clock, whether an instance or a client may have
// one more search and when one frees, and tells it what was sent. Where
// each instance's ring of search times is kept is the caller's (Rings):
// the proxy keeps it in its instance records. Every type is safe for
// concurrent use.
package polite
