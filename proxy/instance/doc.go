// Package instance keeps what the search path knows of each SearXNG
// instance, one Record each, in a Registry.
//
// A record holds the instance's terms (Caps), its budget rings, its
// upstream host client and its recent outcomes. It alone says whether a
// search may go there now, and if not, why (Available, avail.go): the
// pool's part first, then its terms and its budget. Usable asks the same
// rule of a pool snapshot, and every face asks it. Instances is the view
// the status page, /metrics and the MCP face render.
//
// # Terms
//
// An instance's terms come from its /config, read at most once a day
// (ReadTerms, ReadTermsNow), and from the formats its results page lists.
// JSON is used only where the limiter is off and JSON is offered, or where
// an own instance passes searxgate (Config.OwnPassIP). The HTML page is
// used otherwise. A limiter that refuses such an own instance all the same
// is diagnosed once (PassIPDenied). No search goes to an instance with
// the link-token check on, unless Config.AllowLinkToken says so.
//
// Forget drops a record in one step. An attempt still running holds the
// record it started with: what it learns late never brings the instance
// back.
//
// The package imports nothing of proxy. What it needs of its owner (the
// clock, background work, the logger, the shutdown) is given in Config.
package instance
