// Command searxgate is a SearXNG-compatible search gateway: it answers
// SearXNG's API (/search in json, html, csv and rss, /, /config,
// /opensearch.xml, /autocompleter, /healthz) from a pool of public SearXNG
// instances, with its own status page, metrics and instance API.
//
// Subcommands: serve (the default), sim (a fleet of fake instances on
// 127.0.0.1), mcp (MCP on stdin/stdout, forwarded to a running
// searxgate's /mcp), healthcheck (GET /healthz on --listen, exit 0 or 1: the
// container image's HEALTHCHECK, which has no shell or curl) and version.
// Every setting of serve has a flag and a
// SEARXGATE_ environment variable; the flag wins. Config.Validate names
// both in its errors.
//
// main is wiring (App): it opens the store, restores the pool and the
// operator's changes (package operator), loads the instance list (--directory:
// a URL, a file, or none; a missing or broken file stops the start), reads
// the own instances' /config (briefly), and serves until SIGINT or
// SIGTERM, then stops accepting, lets in-flight searches finish within
// --shutdown-grace, and writes what was learned. Main runs all of it
// in-process, so the end-to-end tests start it on port 0.
//
// At start the list's /config reads run in the background; when they end
// and no instance can be searched, one ERROR line says why, counted by
// cause, and App.Problem gives the same text to the status page until an
// instance becomes usable (proxy.Usable, as /status and /metrics say it,
// and for a list instance its /config read). Instances and the list are reached only through
// the guarded dialer (egress.Dialer), which refuses non-public addresses unless
// --allow-private.
//
// /mcp is the MCP face (package mcp, with package reader for pages),
// mounted through fasthttp's adaptor. When searxgate can be reached beyond
// loopback (mcpExposed) it is off unless --mcp-token is set.
//
// The per-client limit (--client-rate) is web's ClientLimiter, wired as
// proxy.Config.Admit (only searches that would reach an instance) and
// around the handler for /autocompleter. With --redis, package redis
// shares budgets, refusals and answers with the other replicas (shared.go).
// Every loop and timer reads one clock (internal/clock), which tests fake.
package main
