// Package nettest fakes the network's edges for tests: a resolver that
// answers from a table and never asks the network, and a listener on a
// free loopback port. Nothing a test does through it leaves the machine.
package nettest

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
)

// Names maps each name to the addresses it resolves to, separated by
// spaces ("192.0.2.1 2001:db8::1").
type Names map[string]string

// Resolver answers lookups from its Names, never the network: a name not
// in them is "no such host" (a *net.DNSError, IsNotFound). It remembers
// every name it was asked. The zero value resolves nothing. Safe for
// concurrent use.
type Resolver struct {
	names Names
	mu    sync.Mutex // guards asked
	asked []string
}

// NewResolver is a Resolver answering from names. An address that does
// not parse panics at the lookup that returns it: a broken test table.
func NewResolver(names Names) *Resolver { return &Resolver{names: names} }

// LookupNetIP is net.Resolver.LookupNetIP on the table.
func (r *Resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	r.asked = append(r.asked, host)
	r.mu.Unlock()
	v, ok := r.names[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []netip.Addr
	for _, s := range strings.Fields(v) {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

// LookupIPAddr is net.Resolver.LookupIPAddr on the table.
func (r *Resolver) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	out := make([]net.IPAddr, len(addrs))
	for i, a := range addrs {
		out[i] = net.IPAddr{IP: a.AsSlice(), Zone: a.Zone()}
	}
	return out, nil
}

// Asked is every name looked up so far, in order.
func (r *Resolver) Asked() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.asked...)
}

// Listen is a TCP listener on a free port of 127.0.0.1, closed when the
// test ends.
func Listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return ln
}
