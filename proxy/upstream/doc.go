// Package upstream is searxgate's client of the SearXNG instances: one
// fasthttp HostClient per instance, so that each keeps its own
// connections and their lifetime.
//
// It says who it is in its User-Agent, sends a complete header set with
// the search's own Accept-Language, nothing of the client's, never follows
// redirects, caps and decodes gzip bodies within MaxBody, and renews
// keep-alive connections after a jittered lifetime. A kept-alive
// connection the server closed under a request is retried once on a
// fresh one, when Config.AllowRetry (the caller's budget) says so. Its
// failures are told apart as dns, refused, tls, reset, timeout (and
// transport for anything else), and busy when searxgate's own connections
// to the instance are all in use. A decoded body is the caller's; given
// back with Reply.Release once it is read, its buffer decodes a later
// answer (bodies over 256 KiB are not kept).
//
// It knows nothing of searches, budgets or the pool: the proxy decides
// whom to ask and when, and judges the answer. Where each instance's Host
// is kept is the caller's (Hosts): the proxy keeps it in its instance
// records.
package upstream
