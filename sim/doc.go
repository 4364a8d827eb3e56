// Package sim runs a fleet of fake SearXNG instances, on loopback or on
// in-memory listeners. searxgate's tests, benchmarks and offline demo use
// it.
//
// Each instance has a Behaviour. It answers well after a latency, or it
// misbehaves as public instances do: rate limits, SearXNG's limiter and
// link token, JSON disabled, bot challenges, off-topic, echo-spam,
// partial-echo-spam and empty answers, hangs, resets, bad bodies,
// flapping, redirects, thin answers with big engines suspended and
// partial ones with one (see the Behaviour constants). An instance may
// lack categories (InstanceConfig.Categories). Answers look like real SearXNG 2024.10.5's (see
// shared/fixtures/searxng): its JSON keys, the simple theme's HTML, its
// 403 and 429 bodies, and its other pages. Search syntax it knows (":de",
// "<3", a bang it runs, "!!") is not searched or echoed, as in SearXNG.
// Results echo the query's words and carry the instance's id. Thumbnails and linked pages are served by
// the instance itself (--local-links), so nothing shown leaves loopback.
// So a test can tell who served what, and
// whether it was on-topic. A query starting with NoResultsPrefix honestly
// finds nothing: 200, no result, no unresponsive engine.
//
// Every instance counts what it received (Truth): requests, searches,
// refusals, searches SearXNG's bot check refuses, requests that leak the
// client, /config reads. Tests read it directly; the control handler
// serves it as JSON. Fleet.Directory gives a searx.space-shaped list for
// the fleet, with entries a reader must filter out and priors that
// sometimes lie. Mix names whole fleets (MixNames), and RunCLI runs one as
// `searxgate sim`.
//
// Caveats:
//   - Latencies are waited in real time. Limiter windows, Retry-After
//     windows and flapping follow Config.Now, so tests move that clock.
//   - Instances count clients by peer IP, or by the first X-Forwarded-For
//     entry. Every in-memory client shares one address.
//   - The limiter counts format=json from the query string and the POST
//     form alike. SearXNG reads only the query string; sim is stricter.
//   - A Dead instance in a TCP fleet with BasePort 0 let its free port go.
//     Another process could take it later.
//   - GzipBomb's body is built once per size and kept for the fleet's life
//     (64 MiB inflated by default, about 64 KiB kept).
//   - Close waits up to 5 s for servers to drain. Answers that watch the
//     fleet (latency waits, hangs, stalls) end at once.
package sim
