package main

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"sync"
	"time"

	"github.com/searxgate/searxgate/directory"
)

// ipResolver resolves names for the upstream dialer; tests give their own.
type ipResolver = directory.IPResolver

// maxDialNotes bounds the hosts dialNotes remembers.
const maxDialNotes = 4096

// dialNotes remembers, per host, why the last dial to it failed
// (directory.DialPrivate, DialDNS, DialRefused; forgotten once a dial
// succeeds), so that the start-up check can say why instances are
// unreachable. Its note method is the dialer's OnFailure.
type dialNotes struct {
	mu     sync.Mutex // guards byHost
	byHost map[string]string
}

func (n *dialNotes) note(host, why string) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if why == "" {
		delete(n.byHost, host)
		return
	}
	if n.byHost == nil {
		n.byHost = make(map[string]string)
	}
	if _, ok := n.byHost[host]; !ok && len(n.byHost) >= maxDialNotes {
		return
	}
	n.byHost[host] = why
}

// why is the reason the last dial to host failed, "" when none is known.
func (n *dialNotes) why(host string) string {
	if n == nil {
		return ""
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.byHost[host]
}

// sourceAddr returns the proxy's SourceAddr: the address this machine
// sends from to an instance, as its routing table says (a UDP socket
// connected to the instance's address, which sends nothing), for the
// advice when an own instance's limiter does not pass searxgate. Names
// are resolved with resolver (nil: the system's). Behind NAT the instance
// sees another address; "" when none can be told.
func sourceAddr(resolver ipResolver) func(inst string) string {
	return func(inst string) string {
		u, err := url.Parse(inst)
		if err != nil || u.Hostname() == "" {
			return ""
		}
		port := u.Port()
		if port == "" {
			port = "443"
			if u.Scheme == "http" {
				port = "80"
			}
		}
		ip, err := netip.ParseAddr(u.Hostname())
		if err != nil {
			r := resolver
			if r == nil {
				r = net.DefaultResolver
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			ips, err := r.LookupNetIP(ctx, "ip", u.Hostname())
			cancel()
			if err != nil || len(ips) == 0 {
				return ""
			}
			ip = ips[0]
		}
		c, err := net.Dial("udp", net.JoinHostPort(ip.Unmap().String(), port))
		if err != nil {
			return ""
		}
		defer c.Close()
		if a, ok := c.LocalAddr().(*net.UDPAddr); ok {
			return a.IP.String()
		}
		return ""
	}
}
