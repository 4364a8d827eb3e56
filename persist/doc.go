// Package persist maps what searxgate learned to the store's records and
// back. It covers the pool's per-instance state, the instances' terms
// (proxy.Caps), the sealed answers of the write-behind cache and the saved
// directory list. It alone knows both sides' shapes. The store knows only
// bytes under keys; pool and proxy know no store.
package persist
