package client

import (
	"net"
	"net/netip"
	"strings"
)

// LoopbackHost reports whether host[:port] names this machine: localhost
// (and *.localhost), or a loopback address.
func LoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// ForwardHeader reports whether a header of this name says a proxy
// forwarded the request: any X-Forwarded-* header (a proxy may add only
// X-Forwarded-Host or X-Forwarded-Proto), or one with which proxies, CDNs
// and load balancers say a request passed them or name the client behind
// them. A face that opens only to this machine refuses such a request.
func ForwardHeader(name string) bool {
	const xf = "X-Forwarded-"
	if len(name) > len(xf) && strings.EqualFold(name[:len(xf)], xf) {
		return true
	}
	for _, h := range forwardHeaders {
		if strings.EqualFold(name, h) {
			return true
		}
	}
	return false
}

// forwardHeaders are the headers, other than X-Forwarded-*, that say a
// proxy passed the request.
var forwardHeaders = [...]string{
	"Forwarded", "Via", "X-Real-IP", // RFC 7239, RFC 9110, nginx
	"Forwarded-For", "X-Original-Forwarded-For", "X-Client-IP", "X-Cluster-Client-IP", "Client-IP",
	"CF-Connecting-IP", "CF-Connecting-IPv6", "True-Client-IP", // Cloudflare, Akamai
	"Fastly-Client-IP", "X-Envoy-External-Address", "X-ProxyUser-IP", "X-Azure-ClientIP",
}
