// Package mcp is searxgate's MCP face: agents connect to searxgate itself
// and search and read, over the Model Context Protocol.
//
// The tools of mcp-searxng 2.4.0, with its names and argument names (and
// the types it gives them) so that prompts carry over:
// searxng_web_search (query, pageno, time_range, language, safesearch as
// a number or a string, categories, engines, num_results, min_score,
// response_format, result_detail, and searxgate's fanout) runs the same
// search path as /search (the proxy, with the client's key for the
// per-client limit and fair share); searxng_search_suggestions asks the
// instances' autocompleters through the proxy, under autocompletion's own
// budget; searxng_instance_info sums up what the instances' /config said
// (categories, engines) and the pool's state, asking no instance; and
// web_url_read (url, maxLength, startChar, section, paragraphRange,
// readHeadings) reads one page through package reader. Each answers with
// text an LLM reads well and the same as structuredContent, under an
// output schema. Failures are tool errors whose text says what to do
// ("… retry in 12 s").
//
// Server.Handler serves MCP over Streamable HTTP with the official Go SDK:
// stateless (no session to keep), one JSON answer per POST. In front of it,
// access refuses browser Origins other than loopback and Config.Origins and,
// on a searxgate reached only locally, Host names that are not loopback
// (DNS-rebinding protection); refuses /mcp altogether on an exposed
// searxgate without a token (web_url_read would make it an open fetcher);
// and checks the bearer token when one is set.
//
// Bridge speaks the same tools (and resource) over stdio and forwards each call to a
// running searxgate's /mcp, for clients that only launch commands.
//
// The resource searxgate://status (StatusURI) shows the pool in brief and
// its best instances.
//
// Server.Counts gives the tool calls by tool and outcome, for /metrics.
//
// Caveats: being stateless, the server sends no notifications and makes no
// requests of the client (no progress, no sampling). The SDK reads each
// request's protocol version; versions it does not know are refused with
// 400.
package mcp
