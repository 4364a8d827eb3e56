package detect

import (
	"net/netip"
	"net/url"
	"strings"
)

// A redirect to an instance under another spelling of its own address is
// its limiter's too: an instance on 127.0.0.1:8888 that sends a "!!g"
// search to http://localhost:8888/ or http://[::1]:8888/ sends the client
// back to itself, not to a bang's site. Loopback names and addresses
// (localhost, *.localhost, 127/8, ::1) and the unspecified addresses a
// client reaches this machine by (0.0.0.0, ::) are one host here; an
// address counts in its one form (IPv4-mapped read as IPv4, no zone), on
// the same port (a missing one is the scheme's). A host written as a
// number in a form no address parser reads alike ("2130706433",
// "0x7f.1", "127.1") is refused outright: no bang sends there.

// loopbackHost stands for every loopback name and address.
const loopbackHost = "\x00loopback"

// selfHost is a host as a client reaches it (see above); odd is true for
// a numeric host in a legacy form.
func selfHost(h string) (host string, odd bool) {
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return loopbackHost, false
	}
	a, err := netip.ParseAddr(h)
	if err != nil {
		return h, numeric(h)
	}
	a = a.Unmap().WithZone("")
	if a.IsLoopback() || a.IsUnspecified() {
		return loopbackHost, false
	}
	return a.String(), false
}

// port is u's port, or its scheme's.
func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// toInstanceAddr reports whether loc sends the client to inst's own
// address under another spelling, or to a numeric host in a legacy form.
func toInstanceAddr(inst, loc *url.URL) bool {
	to, odd := selfHost(loc.Hostname())
	if odd {
		return true
	}
	from, _ := selfHost(inst.Hostname())
	return from == to && port(inst) == port(loc)
}

// numeric reports whether h is an IPv4 address in one of the forms
// inet_aton reads and netip does not: one to four parts, each decimal,
// octal or 0x-hex ("2130706433", "0x7f.1", "127.1", "0177.0.0.1").
func numeric(h string) bool {
	parts := strings.Split(h, ".")
	if len(parts) > 4 {
		return false
	}
	for _, p := range parts {
		digits := "0123456789"
		if len(p) > 2 && p[:2] == "0x" {
			p, digits = p[2:], "0123456789abcdef"
		}
		if p == "" || strings.Trim(p, digits) != "" {
			return false
		}
	}
	return true
}
