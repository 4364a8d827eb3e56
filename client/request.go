package client

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"

	"github.com/valyala/fasthttp"
)

// FromRequest is the key of a request's client (FromAddr of Addr): ""
// when the request has no address.
func FromRequest(ctx *fasthttp.RequestCtx, trusted []netip.Prefix) string {
	return FromAddr(Addr(ctx, trusted))
}

// Of is FromRequest with the trusted proxies given once, as the faces'
// Config.Client takes it.
func Of(trusted []netip.Prefix) func(*fasthttp.RequestCtx) string {
	return func(ctx *fasthttp.RequestCtx) string { return FromRequest(ctx, trusted) }
}

// OfHTTP is Of for a net/http request (the MCP face, behind fasthttp's
// adaptor): the same rule read from RemoteAddr and the request's header.
func OfHTTP(trusted []netip.Prefix) func(*http.Request) string {
	return func(r *http.Request) string {
		var peer netip.Addr
		if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
			peer = ap.Addr()
		}
		return FromAddr(addrFrom(peer, r.Header.Values("X-Forwarded-For"), trusted))
	}
}

// Addr is the address a request counts against: the peer's, or, when the
// peer is one of the trusted reverse proxies, the nearest address in
// X-Forwarded-For that is not one of them (addrFrom).
func Addr(ctx *fasthttp.RequestCtx, trusted []netip.Prefix) netip.Addr {
	peer, _ := netip.AddrFromSlice(ctx.RemoteIP())
	return addrFrom(peer, ctx.Request.Header.PeekAll("X-Forwarded-For"), trusted)
}

// addrFrom is the address a request from peer counts against, given its
// X-Forwarded-For lines: peer, or, when peer is one of the trusted reverse
// proxies, the nearest hop that is not one of them, walking from the
// right (as nginx's real_ip_recursive does). Every line is read, in
// order: a proxy that appends a line of its own instead of extending the
// client's must not let the client's line choose the address. (A client
// can put anything in that header; only the hops a trusted proxy appended
// are believed.)
func addrFrom[S ~string | ~[]byte](peer netip.Addr, lines []S, trusted []netip.Prefix) netip.Addr {
	addr := peer.Unmap().WithZone("")
	if !inPrefixes(addr, trusted) {
		return addr
	}
	var hops []string
	for _, line := range lines {
		hops = append(hops, strings.Split(string(line), ",")...)
	}
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return addr // a hop we cannot read: stop at the last one we trust
		}
		addr = a.Unmap()
		if !inPrefixes(addr, trusted) {
			return addr
		}
	}
	return addr
}

func inPrefixes(a netip.Addr, ps []netip.Prefix) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ParsePrefixes reads the trusted reverse proxies: IP addresses and CIDR
// prefixes.
func ParsePrefixes(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not an IP address or CIDR prefix", s)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}
