// Package operator applies what the operator says about instances to the
// pool and the search path. The operator may add an instance of their own,
// remove one, disable or enable one, and forget what the pool learned.
// Each change is written to the store at once, so a restart loses none.
//
// Every URL goes through the directory's normaliser. An added one also
// passes the address guard; a name that does not resolve yet is accepted.
// Disabling an instance also drops its cached answers.
//
// Seed holds the seeding rule: a directory list seeds the pool with every
// entry but those the operator removed and those the address guard
// refuses. The operator's own instances and what was learned stay.
//
// Caveats: the cap on added instances (Config.MaxOwn) counts what the
// store holds. Instances given with --instance are never stored: the flag
// says them again at every start. Removing or disabling an instance not in
// the pool is still stored, since a later directory list may bring it.
package operator
