// Package web is searxgate's HTTP face: SearXNG's endpoints (/search in
// json, html, csv and rss; /, /healthz), answered through the proxy.
//
// Caveats: fasthttp reuses a RequestCtx and its buffers after a handler
// returns, so nothing here keeps them; every upstream string is untrusted
// and is escaped by html/template, and only http(s) links are rendered.
package web
