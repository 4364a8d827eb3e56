// Package persist maps what searxgate learned to the store's records and
// back: the pool's per-instance state, the instances' terms (proxy.Caps),
// the sealed answers the write-behind cache hands over, and the saved
// directory list. It is the one place that knows both sides' shapes;
// store knows only bytes and keys, pool and proxy know no store.
package persist
