package web

import (
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/egress"
)

// origin is a host and port, compared as a browser would reach them: the
// host lower-cased, without a trailing dot, an address in its one form
// (legacy IPv4 forms and IPv4-mapped IPv6 read as the IPv4 address) and
// every loopback name or address (localhost, *.localhost, 127/8, ::1, and
// the unspecified addresses a browser sends to this machine) as one host.
// An empty port is the default ports: a name without one is reached on 80
// and, through a proxy that terminates TLS, on 443.
type origin struct{ host, port string }

// loopbackHost stands for every name and address of this machine's loopback.
const loopbackHost = "\x00loopback"

func normHost(h string) string {
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return loopbackHost
	}
	if a, ok := egress.LiteralAddr(h); ok {
		a = a.Unmap().WithZone("")
		if a.IsLoopback() || a.IsUnspecified() {
			return loopbackHost
		}
		return a.String()
	}
	return h
}

// hostOrigin is the origin a Host header or a URL's host names ("" port
// when it names none).
func hostOrigin(hostport string) origin {
	u := url.URL{Host: hostport}
	return origin{normHost(u.Hostname()), u.Port()}
}

// reaches reports whether a browser sent to target (whose port is
// explicit) reaches o.
func (o origin) reaches(target origin) bool {
	if o.host != target.host {
		return false
	}
	return o.port == target.port || o.port == "" && (target.port == "80" || target.port == "443")
}

// selfRedirect reports whether loc, an absolute http(s) URL, sends the
// browser back to searxgate itself: to the Host the client used, to
// Config.PublicURL, to the address the request came in on, or to a
// loopback name or address, the machine's host name or one of its
// addresses on searxgate's port. Such a redirect is never
// passed on (it would make a hostile instance's answer a link that fires
// searxgate's own endpoints from the client's browser). Another port of
// the same address is another site: the real feeling-lucky redirect of an
// instance on 127.0.0.1 to 127.0.0.1:80 goes through.
func (s *Server) selfRedirect(ctx *fasthttp.RequestCtx, loc string) bool {
	u, err := url.Parse(loc)
	if err != nil || u.Host == "" {
		return true // unreadable: not passed on either
	}
	target := hostOrigin(u.Host)
	if target.port == "" {
		target.port = "80"
		if strings.EqualFold(u.Scheme, "https") {
			target.port = "443"
		}
	}
	own := make([]origin, 0, 4)
	if h := string(ctx.Host()); h != "" {
		own = append(own, hostOrigin(h))
	}
	if s.cfg.PublicURL != "" {
		if pu, err := url.Parse(s.cfg.PublicURL); err == nil && pu.Host != "" {
			own = append(own, hostOrigin(pu.Host))
		}
	}
	if la, ok := ctx.LocalAddr().(*net.TCPAddr); ok && la.Port > 0 {
		port := strconv.Itoa(la.Port)
		if a, ok := netip.AddrFromSlice(la.IP); ok {
			own = append(own, origin{normHost(a.Unmap().String()), port})
		}
		own = append(own, origin{loopbackHost, port})
		own = append(own, machineOrigins(port)...)
	}
	for _, o := range own {
		if o.reaches(target) {
			return true
		}
	}
	return false
}
