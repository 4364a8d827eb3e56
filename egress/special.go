package egress

import "net/netip"

// special is one row of the IANA special-purpose address registries
// (iana-ipv4-special-registry, iana-ipv6-special-registry, as of 2026:
// IPv6 last updated 2025-10). Every row is refused, whatever its
// "Globally Reachable" column says: the rows that say true are anycast
// service addresses (PCP, TURN, AMT, AS112's DNS sinks) and identifiers
// (ORCHIDv2, drone tags), none a host a page or an instance lives on.
// Three rows carry an IPv4 address and are judged by it instead (see
// PublicAddr): 64:ff9b::/96, 2002::/16, and ::ffff:0:0/96 as a resolver
// gives an IPv4 address (a URL that spells one so is refused).
type special struct {
	prefix netip.Prefix
	name   string // the row's name in the registry
	global string // its "Globally Reachable" column: "true", "false" or "n/a"
}

func row(p, name, global string) special {
	return special{netip.MustParsePrefix(p), name, global}
}

// specialV4 is the IPv4 Special-Purpose Address Registry, row by row.
var specialV4 = []special{
	row("0.0.0.0/8", "This network (RFC 791)", "false"),
	row("0.0.0.0/32", "This host on this network (RFC 1122)", "false"),
	row("10.0.0.0/8", "Private-Use (RFC 1918)", "false"),
	row("100.64.0.0/10", "Shared Address Space (RFC 6598)", "false"),
	row("127.0.0.0/8", "Loopback (RFC 1122)", "false"),
	row("169.254.0.0/16", "Link Local (RFC 3927)", "false"),
	row("172.16.0.0/12", "Private-Use (RFC 1918)", "false"),
	row("192.0.0.0/24", "IETF Protocol Assignments (RFC 6890)", "false"),
	row("192.0.0.0/29", "IPv4 Service Continuity Prefix (RFC 7335)", "false"),
	row("192.0.0.8/32", "IPv4 dummy address (RFC 7600)", "false"),
	row("192.0.0.9/32", "Port Control Protocol Anycast (RFC 7723)", "true"),
	row("192.0.0.10/32", "Traversal Using Relays around NAT Anycast (RFC 8155)", "true"),
	row("192.0.0.170/32", "NAT64/DNS64 Discovery (RFC 8880)", "false"),
	row("192.0.0.171/32", "NAT64/DNS64 Discovery (RFC 8880)", "false"),
	row("192.0.2.0/24", "Documentation (TEST-NET-1) (RFC 5737)", "false"),
	row("192.31.196.0/24", "AS112-v4 (RFC 7535)", "true"),
	row("192.52.193.0/24", "AMT (RFC 7450)", "true"),
	row("192.88.99.0/24", "Deprecated (6to4 Relay Anycast) (RFC 7526)", "n/a"),
	row("192.88.99.2/32", "6a44-relay anycast address (RFC 6751)", "false"),
	row("192.168.0.0/16", "Private-Use (RFC 1918)", "false"),
	row("192.175.48.0/24", "Direct Delegation AS112 Service (RFC 7534)", "true"),
	row("198.18.0.0/15", "Benchmarking (RFC 2544)", "false"),
	row("198.51.100.0/24", "Documentation (TEST-NET-2) (RFC 5737)", "false"),
	row("203.0.113.0/24", "Documentation (TEST-NET-3) (RFC 5737)", "false"),
	row("240.0.0.0/4", "Reserved (RFC 1112)", "false"),
	row("255.255.255.255/32", "Limited Broadcast (RFC 919)", "false"),
}

// specialV6 is the IPv6 Special-Purpose Address Registry, row by row.
var specialV6 = []special{
	row("::1/128", "Loopback Address (RFC 4291)", "false"),
	row("::/128", "Unspecified Address (RFC 4291)", "false"),
	row("::ffff:0:0/96", "IPv4-mapped Address (RFC 4291)", "false"),
	row("64:ff9b::/96", "IPv4-IPv6 Translat. (RFC 6052)", "true"),
	row("64:ff9b:1::/48", "IPv4-IPv6 Translat. (RFC 8215)", "false"),
	row("100::/64", "Discard-Only Address Block (RFC 6666)", "false"),
	row("100:0:0:1::/64", "Dummy IPv6 Prefix (RFC 9780)", "false"),
	row("2001::/23", "IETF Protocol Assignments (RFC 2928)", "false"),
	row("2001::/32", "TEREDO (RFC 4380, RFC 8190)", "n/a"),
	row("2001:1::1/128", "Port Control Protocol Anycast (RFC 7723)", "true"),
	row("2001:1::2/128", "Traversal Using Relays around NAT Anycast (RFC 8155)", "true"),
	row("2001:1::3/128", "DNS-SD Service Registration Protocol Anycast (RFC 9665)", "true"),
	row("2001:2::/48", "Benchmarking (RFC 5180)", "false"),
	row("2001:3::/32", "AMT (RFC 7450)", "true"),
	row("2001:4:112::/48", "AS112-v6 (RFC 7535)", "true"),
	row("2001:10::/28", "Deprecated (previously ORCHID) (RFC 4843)", "n/a"),
	row("2001:20::/28", "ORCHIDv2 (RFC 7343)", "true"),
	row("2001:30::/28", "Drone Remote ID Protocol Entity Tags (DETs) Prefix (RFC 9374)", "true"),
	row("2001:db8::/32", "Documentation (RFC 3849)", "false"),
	row("2002::/16", "6to4 (RFC 3056)", "n/a"),
	row("2620:4f:8000::/48", "Direct Delegation AS112 Service (RFC 7534)", "true"),
	row("3fff::/20", "Documentation (RFC 9637)", "false"),
	row("5f00::/16", "Segment Routing (SRv6) SIDs (RFC 9602)", "false"),
	row("fc00::/7", "Unique-Local (RFC 4193, RFC 8190)", "false"),
	row("fe80::/10", "Link-Local Unicast (RFC 4291)", "false"),
}

// beyond are ranges refused that are in neither registry: multicast
// (the multicast registries), the deprecated IPv4-compatible (::/96) and
// site-local (fec0::/10) forms. An IPv6 address outside 2000::/3, the
// only block IANA allocates as global unicast (IPv6 Address Space
// registry), is refused as well (PublicAddr).
var beyond = []netip.Prefix{
	netip.MustParsePrefix("224.0.0.0/4"),
	netip.MustParsePrefix("ff00::/8"),
	netip.MustParsePrefix("::/96"),
	netip.MustParsePrefix("fec0::/10"),
}

var globalUnicast = netip.MustParsePrefix("2000::/3")

// inSpecial reports whether a is in a special-purpose row or one of
// beyond. PublicAddr asks it only of addresses unmapped and outside the
// NAT64 and 6to4 rows, which it judges by their IPv4 address.
func inSpecial(a netip.Addr) bool {
	rows := specialV4
	if a.Is6() {
		rows = specialV6
		if !globalUnicast.Contains(a) {
			return true
		}
	}
	for _, r := range rows {
		if r.prefix.Contains(a) {
			return true
		}
	}
	for _, p := range beyond {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
