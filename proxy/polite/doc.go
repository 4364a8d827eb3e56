// Package polite is searxgate's manners towards the instances, as
// arithmetic: how many searches each may get (Politeness: sliding
// windows below SearXNG's limiter, per class of instance, with a margin),
// how many extra searches hedges and retries may add (ExtraBudget), how a
// client's share of the public budget is kept (Fair), and the slot queue's
// own structure (Queue: the waiters, bounded, served by turns of client,
// and Slot: when the first slot a waiter may use frees).
//
// It knows no search, no pool and no network: the proxy asks it, with
// the times of its own clock, whether an instance or a client may have
// one more search and when one frees, tells it what was sent, and says
// what serving a waiter means. Where each instance's ring of search times
// is kept is the caller's (Rings): the proxy keeps it in its instance
// records. Every type is safe for concurrent use.
package polite
