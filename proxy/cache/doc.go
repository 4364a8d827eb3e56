// Package cache is the search path's cache: the answers and the
// suggestions in memory, the keyed hashing of what leaves memory, the
// sealing of stored answers, and the write-behind over a file of them.
//
// # Keys
//
// In memory a search is its plain key (Key.Plain): a hit costs no
// hashing. What leaves memory, for the Store or the Shared cache of the
// replicas, is keyed by a keyed hash of the search (Keyer). Its first
// half names the entry; its second half seals the answer (SealAnswer)
// and is never stored. So no query text is kept outside memory, and a
// stored answer can be read back only by a process asked the same search
// again.
//
// # Layers
//
// Cache.Get looks in memory, then the Shared cache, then the Store.
// Cache.Put writes to all three; the Store may queue the write
// (WriteBehind is one). Cache.Join lets one replica search what several
// are asked at once. Config.NoCache keeps nothing anywhere.
//
// Drops and purges reach every layer that can drop (Dropper): an
// instance the operator removed or disabled serves nothing more from the
// cache.
//
// The package imports nothing of searxgate but the clock. The search path
// (package proxy) uses it; it never calls back up.
package cache
