package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// Errors of the address guard.
var (
	// ErrPrivateAddress: the host is, or resolves to, an address that is not
	// public.
	ErrPrivateAddress = errors.New("egress: not a public address")
	// ErrResolve: the host name did not resolve.
	ErrResolve = errors.New("egress: cannot resolve host")
	// ErrScheme: the URL's scheme is not http or https.
	ErrScheme = errors.New("egress: scheme is not http or https")
	// ErrBadURL: the URL does not parse, has no host, has a port outside
	// 1 to 65535, or is longer than MaxURLLength.
	ErrBadURL = errors.New("egress: not a URL to fetch")
)

// MaxURLLength is the longest URL the guard accepts. Real URLs of
// instances, pages and images are a few hundred bytes at most.
const MaxURLLength = 2048

// Resolver resolves host names; *net.Resolver satisfies it.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// Guard refuses URLs that are not http(s) or whose host is, or resolves
// to, an address that is not public (see PublicAddr). With AllowPrivate it
// checks only the scheme and host syntax: for home networks and tests.
type Guard struct {
	AllowPrivate bool
	Resolver     Resolver // nil is net.DefaultResolver
}

// Check returns nil when rawURL may be fetched: ErrScheme,
// ErrBadURL (no host, a port outside 1 to 65535, longer than
// MaxURLLength), ErrPrivateAddress (the host is such an address, or a name
// that resolves to any), or ErrResolve.
func (g Guard) Check(ctx context.Context, rawURL string) error {
	return g.check(ctx, rawURL, true)
}

// check is Check; without resolve, a name that is not a localhost name
// passes (CheckLiteral).
func (g Guard) check(ctx context.Context, rawURL string, resolve bool) error {
	rawURL = strings.TrimSpace(rawURL)
	if len(rawURL) > MaxURLLength {
		return fmt.Errorf("%w: longer than %d bytes", ErrBadURL, MaxURLLength)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadURL, err)
	}
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
		return fmt.Errorf("%w: %q", ErrScheme, u.Scheme)
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return fmt.Errorf("%w: no host in %q", ErrBadURL, rawURL)
	}
	if err := checkPort(u.Port()); err != nil {
		return fmt.Errorf("%w: %v in %q", ErrBadURL, err, rawURL)
	}
	if g.AllowPrivate {
		return nil
	}
	if addr, ok := literalAddr(host); ok {
		// A URL that spells an IPv4 address as IPv4-mapped IPv6
		// ("[::ffff:1.2.3.4]") is refused: the registry's row is not
		// globally reachable, and no instance or page needs the form.
		if !PublicAddr(addr) || addr.Is4In6() {
			return fmt.Errorf("%w: %s", ErrPrivateAddress, host)
		}
		return nil
	}
	// RFC 6761: localhost names are loopback whatever a resolver says.
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return fmt.Errorf("%w: %s", ErrPrivateAddress, host)
	}
	if !resolve {
		return nil
	}
	var r Resolver = net.DefaultResolver
	if g.Resolver != nil {
		r = g.Resolver
	}
	addrs, err := r.LookupIPAddr(ctx, host)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrResolve, host, err)
	}
	if len(addrs) == 0 {
		return fmt.Errorf("%w: %s: no address", ErrResolve, host)
	}
	for _, a := range addrs {
		addr, ok := netip.AddrFromSlice(a.IP)
		if !ok || !PublicAddr(addr) {
			return fmt.Errorf("%w: %s resolves to %s", ErrPrivateAddress, host, a.IP)
		}
	}
	return nil
}

// checkPort checks a URL's port ("" when it has none): a TCP port is 1 to
// 65535.
func checkPort(p string) error {
	if p == "" {
		return nil
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		if len(p) > 8 {
			p = p[:8] + "…"
		}
		return fmt.Errorf("port %q is outside 1 to 65535", p)
	}
	return nil
}

// LiteralAddr reads a host that is an IP address as a resolver or a
// browser would: the usual forms, and the legacy IPv4 forms
// ("2130706433", "0x7f.1", "0177.0.0.1"); false for a name.
func LiteralAddr(host string) (netip.Addr, bool) { return literalAddr(host) }

// literalAddr reads a host that is an IP address: the usual forms, and the
// legacy IPv4 forms that inet_aton, and so some resolvers, accept
// ("2130706433", "0x7f.1", "0177.0.0.1").
func literalAddr(host string) (netip.Addr, bool) {
	// A name with a letter no literal form has is not parsed: most hosts
	// are such names, and a failed parse costs allocations.
	if !strings.Contains(host, ":") && strings.TrimLeft(host, "0123456789abcdefxABCDEFX.") != "" {
		return netip.Addr{}, false
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return a, true
	}
	return legacyIPv4(host)
}

// legacyIPv4 parses the inet_aton forms of an IPv4 address: one to four
// parts, each decimal, octal (leading 0) or hex (leading 0x), the last part
// filling the remaining bytes.
func legacyIPv4(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		if p == "" {
			return netip.Addr{}, false
		}
		base := 10
		switch {
		case len(p) > 2 && (p[:2] == "0x" || p[:2] == "0X"):
			base, p = 16, p[2:]
		case len(p) > 1 && p[0] == '0':
			base, p = 8, p[1:]
		}
		v, err := strconv.ParseUint(p, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	var n uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 0xff {
			return netip.Addr{}, false
		}
		n |= v << (24 - 8*uint(i))
	}
	last := vals[len(vals)-1]
	if last >= 1<<(32-8*uint(len(vals)-1)) {
		return netip.Addr{}, false
	}
	n |= last
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

// embeds4 are IPv6 ranges that carry an IPv4 address whose publicness
// decides theirs: NAT64 (the last 4 bytes) and 6to4 (bytes 2 to 5).
var (
	nat64  = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4 = netip.MustParsePrefix("2002::/16")
)

// PublicAddr reports whether a is a public unicast address: in no row of
// the IANA special-purpose registries (special.go: loopback, private,
// link-local, shared, documentation, benchmarking, reserved, discard,
// local-use NAT64, Teredo, ORCHID, SRv6, ...), not multicast, and for IPv6
// within 2000::/3. IPv4-mapped (as resolvers give IPv4 addresses), NAT64
// (64:ff9b::/96) and 6to4 forms are judged by the IPv4 address they
// carry.
func PublicAddr(a netip.Addr) bool {
	if !a.IsValid() {
		return false
	}
	a = a.WithZone("").Unmap()
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64.Contains(a):
			return PublicAddr(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
		case sixTo4.Contains(a):
			return PublicAddr(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
		}
	}
	return !inSpecial(a)
}

// CheckLiteral is Check without resolving: it judges only what rawURL
// itself says (a literal address in any form, a localhost name) and leaves
// the addresses a name resolves to to the Dialer, which checks them when it
// connects. Every URL searxgate connects to through a Dialer is judged so;
// g.Resolver is not used.
func (g Guard) CheckLiteral(rawURL string) error {
	return g.check(context.Background(), rawURL, false)
}
