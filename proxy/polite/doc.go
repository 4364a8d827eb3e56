// Package polite is searxgate's manners towards the instances, as
// arithmetic. Its main types:
//   - Politeness: how many searches each instance may get, in sliding
//     windows below SearXNG's limiter, per class of instance.
//   - ExtraBudget: how many searches hedges and retries may add.
//   - Fair: each client's share of the public budget among the clients
//     active now, and a seat kept for the next one (fair.go).
//   - Queue: the searches waiting for a slot, bounded, served by turns of
//     client.
//   - Slot: when the first slot a waiter may use frees.
//
// It knows no search, no pool and no network. The proxy asks it, with the
// times of its own clock, whether one more search fits and when one frees.
// The proxy then tells it what was sent, and says what serving a waiter
// means. Where each instance's ring of search times lives is the caller's
// (Rings): the proxy keeps it in its instance records.
//
// Politeness, ExtraBudget, Fair and Queue are safe for concurrent use. A
// Slot belongs to the one search that fills it.
package polite
