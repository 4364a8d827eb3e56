// Package operator applies what the operator says about instances (add
// one of their own, remove, disable, enable, forget what was learned) to
// the pool and the search path, and keeps it in the store, written at
// once so that nothing is lost across a restart. It checks every URL it
// is given with the directory's normaliser and address guard.
//
// Caveats: the cap on added instances (Config.MaxOwn) counts what the
// store holds; instances given with --instance are the flag's to say
// again at every start and are never stored. Removing or disabling an
// instance that is not in the pool is still stored (a directory list may
// bring it later).
package operator
