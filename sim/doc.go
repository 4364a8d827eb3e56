// Package sim runs a fleet of fake SearXNG instances on loopback (or on
// in-memory listeners), for searxgate's tests, benchmarks and offline demo.
//
// Each instance has a Behaviour: it answers well after a latency, or it
// misbehaves the way public instances do (rate limits with and without
// Retry-After, SearXNG's limiter and link token, JSON disabled, Cloudflare,
// Anubis and DDoS-Guard challenges, off-topic and empty answers, hangs,
// resets, broken, huge and bomb bodies, flapping, 503, degrading, hostile
// markup, redirects). Answers look like real SearXNG 2024.10.5's (see
// shared/fixtures/searxng): the classic JSON keys, the simple theme's HTML
// results page with the same elements and classes, Werkzeug's 403 and
// SearXNG's 429 bodies, /config, /healthz, /opensearch.xml and
// /autocompleter. The search syntax an instance knows (":de", "<3", a bang
// naming one of its engines or "general", "!!") is not searched and not
// echoed, as SearXNG's; the HTML page's box shows the query as typed.
// Results echo the query's words and carry the instance's
// id in their URL path and content, so a test can tell who served what and
// whether the answer was on-topic. A query starting with NoResultsPrefix
// ("noresults") legitimately finds nothing: an instance that answers
// searches answers it 200 with no result and no unresponsive engine, in
// JSON and HTML alike, as real SearXNG does (a-search-*-noresults.txt).
//
// Every instance counts what it received (Truth): requests, searches,
// refusals, searches inside a running refusal window, searches with
// headers SearXNG's bot check refuses, requests that leak the client
// (forwarding headers, cookies), /config reads, searches answered with
// nothing found. Tests read it directly;
// the control handler serves it as JSON. Directory gives a
// searx.space-shaped instances.json for the fleet, with entries a reader
// must filter out and priors that sometimes lie. Mix names whole fleets
// ("healthy", "mixed", "hostile") and RunCLI runs one as `searxgate sim`.
//
// Caveats:
//   - Latencies are waited in real time; the limiter windows, Retry-After
//     windows and flapping follow Config.Now, so tests move that clock
//     instead of sleeping.
//   - Instances count clients by peer IP, or by the first X-Forwarded-For
//     entry when there is one (as an instance behind a trusted proxy
//     does); every in-memory client shares one address.
//   - The limiter counts format=json from the query string and the POST
//     form alike (SearXNG reads only the query string), to be the stricter.
//   - A Dead instance in a TCP fleet with BasePort 0 took a free port and
//     let it go; another process could take it later.
//   - HugeBody streams its answer; GzipBomb's body is built once per size
//     and kept for the fleet's life (64 MiB inflated by default, about
//     64 KiB kept).
//   - Close waits up to 5 s for servers to drain; answers that watch the
//     fleet (latency waits, hangs, stalls, slow loris) end at once.
package sim
