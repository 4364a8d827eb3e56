// Package mcp is searxgate's MCP face. Agents connect to searxgate itself,
// and search and read over the Model Context Protocol.
//
// Its tools carry mcp-searxng 2.4.0's names and argument names, so prompts
// carry over (see SearchArgs and the other Args types):
//   - searxng_web_search runs the same search path as /search. The
//     client's key counts in the per-client limit and the fair share.
//     searxgate adds one argument, fanout.
//   - searxng_search_suggestions asks the instances' autocompleters
//     through the proxy, under autocompletion's own budget.
//   - searxng_instance_info sums up the pool's state and what the
//     instances' /config said. It asks no instance.
//   - web_url_read reads one page through package reader.
//
// Each tool answers in text an LLM reads well, and the same as
// structuredContent under an output schema. A failure is a tool error
// whose text says what to do ("… retry in 12 s"). The resource
// searxgate://status (StatusURI) shows the pool in brief. Server.Counts
// gives the tool calls by tool and outcome, for /metrics.
//
// Server.Handler serves Streamable HTTP with the official Go SDK. It is
// stateless: one JSON answer per POST, no session kept. Bridge serves the
// same tools over stdio, forwarding each call to a running searxgate's
// /mcp.
//
// Access rules, checked before the SDK sees a request:
//   - a browser Origin must be loopback or one of Config.Origins;
//   - on a searxgate reached only locally, the Host must be loopback too;
//   - an exposed searxgate without a token refuses /mcp: web_url_read
//     would make it an open fetcher;
//   - without a token, a forwarded request is refused too;
//   - with a token, every request must carry it as a bearer token.
//
// Caveats: being stateless, the server sends no notifications and makes no
// requests of the client (no progress, no sampling). The SDK refuses a
// protocol version it does not know with 400.
package mcp
