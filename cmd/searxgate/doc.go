// Command searxgate is a SearXNG-compatible search gateway. It answers
// SearXNG's API from a pool of public SearXNG instances: /search in json,
// html, csv and rss, /, /config, /opensearch.xml, /autocompleter and
// /healthz. It adds its own status page, metrics and instance API.
//
// Subcommands:
//   - serve, the default.
//   - sim: a fleet of fake instances on 127.0.0.1.
//   - mcp: MCP on stdin and stdout, forwarded to a running searxgate's /mcp.
//   - healthcheck: GET /healthz on --listen, exit 0 or 1. It is the
//     container image's HEALTHCHECK, since the image has no shell or curl.
//   - version.
//
// Every setting of serve has a flag and a SEARXGATE_ environment variable;
// the flag wins. Config.Validate names both in its errors.
//
// main is wiring (App), not policy. It opens the store and restores the
// pool, the terms and the answers (package persist) and the operator's
// changes (package operator). It loads the instance list from
// --directory (a URL, a file, or none) and seeds the pool by the
// operator's rule (operator.Seed). A missing or
// broken file stops the start. It reads the own instances' /config, then
// serves until SIGINT or SIGTERM. Then it stops accepting, lets in-flight
// searches finish within --shutdown-grace, and writes what was learned.
// Main runs all of it in-process, so end-to-end tests start it on port 0.
//
// The list's /config reads run in the background. When they end and no
// instance can be searched, one ERROR line says why, counted by cause.
// App.Problem gives the status page the same text until an instance is
// usable. Usable means instance.Registry.Usable says so and, for a list instance, its
// /config was read.
//
// Other wiring:
//   - Instances and the list are reached only through the guarded dialer
//     (egress.Dialer). It refuses non-public addresses unless
//     --allow-private.
//   - /mcp is package mcp, with package reader for pages. When searxgate
//     can be reached beyond loopback (mcpExposed), it is off unless
//     --mcp-token is set.
//   - --client-rate is client.Limiter, keyed by client.Of (and
//     client.OfHTTP for /mcp) with the --trust-proxy proxies. It is
//     proxy.Config.Admit, for searches that would reach an instance,
//     proxy.Config.AdmitExtra for their retries and hedges (which may
//     borrow proxy.DefaultExtraRatio of a minute's rate ahead), the
//     reader's and the MCP face's Admit, and wraps /autocompleter.
//   - With --redis, package redis shares budgets, refusals and answers with
//     the other replicas (shared.go).
//   - Every loop and timer reads one clock (internal/clock), which tests
//     fake.
package main
