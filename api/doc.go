// Package api is searxgate's other front doors: the search APIs that
// agents' frameworks already speak. Each runs the same search as /search
// and /mcp. It uses the same proxy, cache, budgets, blame rules and typed
// reasons.
//
//   - Tavily: POST /tavily/search and POST /tavily/extract (base URL
//     <searxgate>/tavily);
//   - Brave's web search: GET /res/v1/web/search, also under /brave (base
//     URL <searxgate>/res/v1 or <searxgate>/brave/res/v1);
//   - Open WebUI's "External" web search: POST /openwebui.
//
// Each door reads its API's request and asks the proxy. For page contents
// it also asks the page reader. It writes its API's answer. Every error is
// in the API's own shape. The reasons a search ends without an answer
// (proxy.Stop) are worded in one table (stopTable).
//
// Who may use the doors: with operator-issued API keys (Keys), a request
// must carry one. Each key is one client (client.FromAPIKey) for every
// per-client rate and share. Without keys, the doors follow /mcp's rule.
// They are open to this machine when searxgate is reached only on
// loopback, and closed (403, saying why) otherwise.
//
// Caveats: SearXNG has no country, no start or end date and no domain
// filter of its own. Those are mapped as far as SearXNG's parameters go
// (language, time_range, "site:" in the query). The answer is filtered
// after, so fewer results than asked may come back. An answer is only
// what the instances gave (a SearXNG answer or an infobox), never made up.
package api
