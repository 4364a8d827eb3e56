// Package web is searxgate's HTTP face.
//
// To SearXNG clients it is a SearXNG instance: /search (GET and POST; json,
// html, csv and rss), / (308 to /search when given q), /opensearch.xml,
// /autocompleter, /config, /healthz and /robots.txt. It keeps SearXNG's
// parameter checks and error forms, checked against captures of SearXNG
// 2024.10.5 (testdata/searxng). docs/parity.md lists every difference, such
// as the 16 KiB query cap (proxy.MaxQueryLen).
//
// To people it is a search page, /preferences, /about and /status. The
// pages need no script. /status shows every instance, best first, and
// Config.Problem as a banner. To machines it is /status.json, /metrics
// (Prometheus text) and the instance API under /api/. The API's writes need
// "Authorization: Bearer <token>" and an Operator.
//
// A search that gets no answer says so in the format asked. It is 429 when
// its client asked more than its share (proxy.LimitedError), else 503 with
// what was tried. Retry-After is sent only when the proxy knows when to
// come back. A header name that is not an HTTP token is answered 400,
// before any route.
//
// /status, /metrics and /about ask the search path whether an instance is
// usable now (Proxy.Instances: their view and Usable); nothing here computes it.
// /status words each proxy.Why in one table. /config offers the
// suggestions of instances the pool does not hold back (pool.Stats.PoolWhy).
// The per-client limit is client.Limiter: Wrap asks it for
// /autocompleter, the proxy for searches (proxy.Config.Admit). /about says
// what is kept and for how long, from Config.CacheTTL and CacheKeep.
//
// Preferences (prefs.go) are SearXNG's, one cookie each, with no state on
// the server. A request's parameter beats its cookie. The search
// preferences fill in a search that does not give them, so they go upstream
// as the client's own would.
//
// Safety rules:
//   - Every response carries a Content-Security-Policy that allows only
//     searxgate's own stylesheet, script and images, with no inline code.
//   - Result images come through /image_proxy, signed with an HMAC under
//     Config.Images.Key. So it fetches only what a page of ours linked,
//     through the guarded fetcher (egress.Fetcher), the outbound proxy and
//     --ca-file's roots. The browser never loads an address an instance
//     chose.
//   - Absolute links (/opensearch.xml, RSS) come from Config.PublicURL when
//     set. Without it they follow the client's Host, and those answers are
//     Cache-Control: private with Vary: Host.
//   - CSV cells a spreadsheet would run as a formula get a leading quote.
//   - Every upstream string is escaped by html/template; only http(s) links
//     and images are rendered.
//
// Caveats:
//   - fasthttp reuses a RequestCtx and its buffers after a handler returns,
//     so nothing here keeps them.
//   - Without Config.Images.Key, the key is random per process: a page kept
//     from before a restart loses its images. - A GET must fit the server's
//     read buffer with its headers: the longest queries should be POSTed.
//   - /metrics names at most MaxInstanceLabels instances; later ones are
//     summed under instance="other", so no counter goes down.
//   - The instance API takes instance URLs percent-encoded in the path. A
//     proxy in front must not decode %2F.
package web
