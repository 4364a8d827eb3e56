// Package web is searxgate's HTTP face.
//
// To SearXNG clients it is a SearXNG instance: /search (GET and POST; json,
// html, csv and rss), / (which redirects to /search, 308, when given q), /opensearch.xml,
// /autocompleter (both answer shapes), /config, /healthz and /robots.txt,
// with SearXNG's parameter checks and error forms, checked against
// captures of SearXNG 2024.10.5 (testdata/searxng): a format SearXNG does
// not know (format=xml, or format=JSON: names are case-sensitive) is the
// HTML page; one the operator left out of Config.Formats is Werkzeug's 403
// page; RSS is text/xml; an empty answer has every key, with empty lists,
// and the "Sorry! No results were found" page; a 404 is a page for every
// client that takes HTML. To people it is a search page (results with
// their count and a web archive "cached" link, answers, infobox,
// suggestions, corrections, category tabs, language, time range, safe
// search, pagination, image results as a grid with a :target detail
// view; light and dark; no script needed), /preferences, /about and
// /status, which
// shows every instance the pool knows, best first, with a latency
// sparkline and an outcome bar drawn server-side, the slot queue and the
// per-client refusals among its totals, and Config.Problem as a banner. To
// machines it is /status.json, /metrics (Prometheus text format, names
// prefixed searxgate_) and the instance API under /api/, whose writes need
// "Authorization: Bearer <token>" and an Operator.
//
// A request with a header name that is not an HTTP token (a space, a
// separator) is answered 400, before any route.
//
// A search that gets no answer says so in the format asked (JSON, the
// error page, SearXNG's empty searx.csv with the reason in
// X-Searxgate-Error, or SearXNG's feed with one "Error" item): 429 when its client asked
// more than its share (proxy.LimitedError), 503 otherwise with what was
// tried. Retry-After, in whole seconds rounded up, is sent only when the
// proxy knows when to come back; never a made-up constant.
//
// /about tells people what is kept and for how long from Config.CacheTTL
// and CacheKeep (cmd passes proxy.CacheLifetime: both 0, "keeps no
// answers", with --cache-ttl 0, when nothing at all is cached).
//
// /status and /metrics render proxy.Instances: whether an instance is
// usable now, and why not, is the search path's judgement, never computed
// here. The per-client limiter (ClientLimiter: an IPv4 address or an IPv6
// /64 a client, behind trusted proxies the nearest untrusted
// X-Forwarded-For hop, every header line read from the right; the
// quietest tenth evicted when full) is wired by cmd as proxy.Config.Admit
// and around the handler for /autocompleter (Wrap).
//
// Preferences (prefs.go) are SearXNG's, by name, one cookie each and no
// state on the server; a request's parameter beats its cookie, and the
// search parameters among them (language, safesearch, categories,
// time_range) fill in a search that does not give them, so they go
// upstream as the client's own would. /opensearch.xml's template carries
// them (then Cache-Control: private), and its suggestions URL only when
// autocomplete is on, as SearXNG's; query_in_title is off by default, as
// SearXNG's. A settings URL
// (/preferences?...&save=1) saves them in a browser that forgets cookies.
//
// Every response carries a Content-Security-Policy that allows only
// searxgate's own stylesheet, script and images (script-src 'self',
// connect-src 'self', img-src 'self' data:; no inline code, no eval),
// plus nosniff, no-referrer and frame denial. The script
// (/static/searxgate.js) is loaded only when a preference needs it:
// suggestions as you type (calling /autocompleter after a pause, from
// three characters, each answer cached, quiet after a refusal), vim-style
// hotkeys and infinite scroll. Every page works without it.
//
// Every page is checked by the browser test with axe-core (WCAG 2 A and
// AA: nothing serious or critical, light and dark, 1280 and 375 px).
//
// Result thumbnails and infobox images come through /image_proxy, as
// SearXNG's image_proxy: the page links /image_proxy?url=...&h=..., h
// being an HMAC-SHA256 of the URL under Config.Images.Key (random per
// process when not given), so it fetches only what a page of ours linked.
// Each fetch and each redirect (at most 3) goes through the address guard
// (directory.PublicAddr on every address a name resolves to, the URL's
// literal forms checked by directory.Guard), takes only image types (no
// SVG) up to 5 MiB within 5 s, sends the gateway's own User-Agent and
// nothing of the browser's (no cookie, referrer, language or address) and
// passes back no header but the type. Config.Images.Off leaves images out
// of the pages instead. The browser never loads an address an instance
// chose.
//
// Links that must be absolute (/opensearch.xml, RSS) are built from
// Config.PublicURL (--public-url) when set, and the Host header is then
// ignored. Without it they follow the Host the client sent (a malformed
// one becomes localhost; X-Forwarded-Host is never read), and those
// answers are Cache-Control: private with Vary: Host, so that no shared
// cache keeps a copy made for a poisoned Host and serves it to others.
//
// CSV cells that a spreadsheet would run as a formula (starting with =, +,
// -, @, a tab or a carriage return) get a leading single quote, in every
// column (OWASP's advice on CSV injection).
//
// Caveats:
//   - fasthttp reuses a RequestCtx and its buffers after a handler
//     returns, so nothing here keeps them.
//   - Every upstream string is untrusted: it is cleaned (valid UTF-8, no
//     control or bidi-override characters, bounded length) and escaped by
//     html/template; only http(s) links and images are rendered.
//   - Image links are signed with a per-process key unless
//     Config.Images.Key is given: a page kept from before a restart loses
//     its images. The proxy's fetches are bounded (MaxConcurrent, 32 by
//     default; past it 503 at once), not rate limited per client.
//   - A query may be up to proxy.MaxQueryLen (16 KiB); SearXNG has no cap.
//     A q of white space is answered as SearXNG answers it (200, nothing
//     found) without asking an instance.
//     A GET must fit the HTTP server's read buffer with its headers:
//     clients with the longest queries should POST them.
//   - /config lists the engines the pool's instances said they run in
//     their own /config, in SearXNG's shape, merged: each can do what any
//     instance's can (paging, language_support, safesearch,
//     time_range_support), in all their languages and regions, within
//     the longest of their timeouts, with how many instances run it. Its
//     categories are those engines' (SearXNG's defaults until a /config
//     is read), its autocomplete the backend most usable instances offer.
//   - /metrics names at most MaxInstanceLabels instances: the first it
//     sees (a scrape's newcomers in URL order) keep their label until the
//     process ends, even after they leave the pool, and every later one
//     is summed under instance="other" for good, so no counter ever goes
//     down. Upstream reasons are detect's, anything else is "other".
//     Every sample is written by VictoriaMetrics' metrics: the search
//     path's counters and histograms from the proxy's set, the process's
//     gauges from the Server's, what is read at scrape time (instances,
//     shared replicas, tool calls) through its Write* helpers, and its
//     process_* metrics (read from /proc); its go_* ones are left out, as
//     they stop the world. The HELP and TYPE lines are searxgate's own
//     (webFamilies, proxy.Families): the library's carry no HELP text and
//     its switch for them is process-wide, so /metrics drops them.
//   - The instance API takes instance URLs percent-encoded in the path
//     (DELETE /api/instances/https%3A%2F%2Fexample.org%2F); clients and
//     proxies in front must not decode %2F.
package web
