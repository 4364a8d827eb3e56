// Package upstream is searxgate's client of the SearXNG instances. Client
// keeps one fasthttp HostClient per instance (a Host), so each has its own
// connections and their lifetime.
//
// What it sends: its own User-Agent, a complete header set, and the
// search's Accept-Language. Nothing of searxgate's client goes upstream.
// It never follows redirects. It asks for gzip and decodes it, within
// MaxBody both ways. Keep-alive connections are renewed after a jittered
// lifetime. When a server closes a kept-alive connection under a request,
// the request is retried once on a fresh one if Config.AllowRetry agrees.
//
// Its failures are told apart: dns, refused, tls, reset, timeout,
// too_large, and transport for anything else. ErrBusy means searxgate's
// own connections to the instance are all in use, which is not the
// instance's fault. A decoded body is the caller's. Reply.Release gives it
// back once read, to decode a later answer (bodies over 256 KiB are not
// kept).
//
// It knows nothing of searches, budgets or the pool. The proxy decides
// whom to ask and when, and judges the answer. Where each instance's Host
// lives is the caller's (Hosts): the proxy keeps it in its instance
// records.
package upstream
