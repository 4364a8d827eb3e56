package client

import (
	"net/netip"
	"strings"
)

// apiKeyPrefix starts the key of a client that sent an operator-issued
// API key (FromAPIKey).
const apiKeyPrefix = "key:"

// FromAddr is the key of a client at address a: the address itself for
// IPv4 (written as a /32), the /64 it is in for IPv6. One host is commonly
// given a whole /64, so counting addresses would let it take thousands of
// shares. An IPv4 address written as IPv6 is its IPv4 address. No address
// (invalid, or unspecified: fasthttp says 0.0.0.0) is "", one client for
// every request searxgate cannot name.
func FromAddr(a netip.Addr) string {
	if p := addrPrefix(a); p.IsValid() {
		return p.String()
	}
	return ""
}

// addrPrefix is the prefix a client at a is counted as (FromAddr); the
// zero Prefix when a names no client.
func addrPrefix(a netip.Addr) netip.Prefix {
	a = a.Unmap().WithZone("")
	if !a.IsValid() || a.IsUnspecified() {
		return netip.Prefix{}
	}
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p
	}
	return netip.PrefixFrom(a, 32)
}

// FromAPIKey is the key of the API key whose fingerprint is fp: every
// request with that key is one client for the per-client rate, the fair
// share and every per-client share, on every replica alike, wherever it
// comes from.
func FromAPIKey(fp string) string { return apiKeyPrefix + fp }

// IsAPIKey reports whether key names an API key (FromAPIKey), not an
// address.
func IsAPIKey(key string) bool { return strings.HasPrefix(key, apiKeyPrefix) }
