// Command searxgate is a SearXNG-compatible search gateway: it answers
// SearXNG's API (/search in json, html, csv and rss, /, /config,
// /opensearch.xml, /autocompleter, /healthz) from a pool of public SearXNG
// instances, with its own status page, metrics and instance API.
//
// Subcommands: serve (the default), sim (a fleet of fake instances on
// 127.0.0.1) and version. Every setting of serve has a flag and a
// SEARXGATE_ environment variable; the flag wins. Config.Validate names
// both in its errors.
//
// main wires the packages together (App): it opens the store, restores the
// pool and the operator's changes, loads the instance list, and serves
// until SIGINT or SIGTERM, then stops accepting, lets in-flight searches
// finish within --shutdown-grace, and writes what was learned. Main runs
// all of it in-process, so the end-to-end tests start it on port 0.
package main
