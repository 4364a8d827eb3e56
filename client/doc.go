// Package client is who a client is, in one place, and how much it may
// ask. Every face asks it: the HTTP face, the search APIs, the MCP face,
// and through them the proxy and the reader.
//
// A client's key is a string, made once as a request arrives and never
// read again. FromAddr makes it from an address: an IPv4 address as its
// /32, an IPv6 one as the /64 it is in. One host is commonly given a whole
// /64. FromRequest and Of take the address of a fasthttp request; OfHTTP
// does the same for a net/http one. When the peer is a trusted reverse
// proxy (ParsePrefixes reads --trust-proxy), the client is the nearest
// X-Forwarded-For hop that is not one, read from the right. A request with
// no address is the key "", shared by every such request.
//
// FromAPIKey is the key of a request that carried an operator-issued API
// key: "key:" and the key's fingerprint. It is one client wherever it
// comes from, on every replica alike.
//
// A request to /mcp that carries the MCP token is counted by its address,
// as any other. The token is the operator's, one for every agent, so it
// names no client.
//
// Limiter is the per-client rate: a token bucket per key. The proxy asks
// it for each search that would reach a public instance (Admit), and for
// retries and hedges, which may borrow a stated share ahead (AdmitExtra).
// The reader asks it for each page it fetches, the MCP face for each
// suggestion, and the HTTP face for /autocompleter (Allow). Its buckets
// are swept once a minute and bounded in number. WithCapacity bounds every
// client by what the public pool serves.
//
// The fair shares (proxy/polite, reader/internal/fair) stay arithmetic
// keyed by the same string: they take the key as the face made it.
package client
