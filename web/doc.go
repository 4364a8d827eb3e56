// Package web is searxgate's HTTP face.
//
// To SearXNG clients it is a SearXNG instance: /search (GET and POST; json,
// html, csv and rss), / (which searches when given q), /opensearch.xml,
// /autocompleter (both answer shapes), /config and /healthz, with
// SearXNG's parameter checks and error forms. To people it is a search
// page (results, answers, infobox, suggestions, corrections, category
// tabs, time range, safe search, pagination; light and dark; no script)
// and /status, which shows every instance the pool knows, best first, with
// a latency sparkline and an outcome bar drawn server-side. To machines it
// is /status.json, /metrics (Prometheus text format, names prefixed
// searxgate_) and the instance API under /api/, whose writes need
// "Authorization: Bearer <token>" and an Operator.
//
// Every response carries a Content-Security-Policy that allows no script
// at all and only searxgate's own stylesheet, plus nosniff, no-referrer
// and frame denial.
//
// Caveats:
//   - fasthttp reuses a RequestCtx and its buffers after a handler
//     returns, so nothing here keeps them.
//   - Every upstream string is untrusted: it is cleaned (valid UTF-8, no
//     control or bidi-override characters, bounded length) and escaped by
//     html/template; only http(s) links and images are rendered.
//   - Thumbnails are loaded by the browser from where upstream says they
//     are (no image proxy), as a SearXNG without image_proxy does; the
//     page sends no referrer with them.
//   - /config cannot list engines: searxgate does not know which engines
//     each instance runs. It names SearXNG's default categories and the
//     autocomplete backend most usable instances offer.
//   - /metrics names at most MaxInstanceLabels instances (the first in URL
//     order) and sums the rest under instance="other"; upstream reasons
//     are detect's, anything else is "other".
//   - The instance API takes instance URLs percent-encoded in the path
//     (DELETE /api/instances/https%3A%2F%2Fexample.org%2F); clients and
//     proxies in front must not decode %2F.
package web
