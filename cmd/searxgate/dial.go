package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"searxgate/directory"
)

// errPrivateDial is returned when an instance's name resolves to an address
// searxgate may not contact.
var errPrivateDial = errors.New("address is not public (use --allow-private for home networks)")

// ipResolver resolves names; *net.Resolver is one.
type ipResolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Why the dialer could not connect to a host, as dialNotes keeps it.
const (
	dialPrivate = "private" // the name resolved to an address that is not public
	dialDNS     = "dns"     // the name did not resolve
	dialRefused = "refused" // every address refused the connection
)

// maxDialNotes bounds the hosts dialNotes remembers.
const maxDialNotes = 4096

// dialNotes remembers, per host, why the last dial to it failed (and
// forgets a host once a dial succeeds), so that the start-up check can say
// why instances are unreachable.
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

// guardedDialer resolves each name itself and refuses loopback, private,
// link-local and other non-public addresses unless allowPrivate, so that
// neither a directory entry nor a name that changes its answer (DNS
// rebinding) can point searxgate into the network it runs in. Instances and
// the directory fetch both connect through it.
type guardedDialer struct {
	allowPrivate bool
	timeout      time.Duration
	resolver     ipResolver // nil is the system's
	notes        *dialNotes // nil: nothing noted
	d            net.Dialer
}

func newGuardedDialer(allowPrivate bool, timeout time.Duration, resolver ipResolver, notes *dialNotes) *guardedDialer {
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	return &guardedDialer{allowPrivate: allowPrivate, timeout: timeout, resolver: resolver, notes: notes,
		d: net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}}
}

// guardedDial returns the upstream dialer for fasthttp (see guardedDialer).
// resolver nil is the system's.
func guardedDial(allowPrivate bool, timeout time.Duration, resolver ipResolver) fasthttp.DialFunc {
	return newGuardedDialer(allowPrivate, timeout, resolver, nil).Dial
}

// Dial is the fasthttp.DialFunc: DialContext bounded by the timeout.
func (g *guardedDialer) Dial(addr string) (net.Conn, error) {
	return g.DialContext(context.Background(), "tcp", addr)
}

// DialContext connects to addr (host:port) over TCP once every address the
// host resolves to is allowed; ctx and the timeout bound the lookup and the
// connection together.
func (g *guardedDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, fmt.Errorf("dialing %s: network %q is not tcp", addr, network)
	}
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		found, err := g.resolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			g.notes.note(host, dialDNS)
			return nil, fmt.Errorf("resolving %s: %w", host, err)
		}
		ips = found
	}
	for _, ip := range ips {
		ip = ip.Unmap()
		if !g.allowPrivate && !directory.PublicAddr(ip) {
			g.notes.note(host, dialPrivate)
			return nil, fmt.Errorf("%s (%s): %w", host, ip, errPrivateDial)
		}
	}
	var lastErr error = fmt.Errorf("no address for %s", host)
	for _, ip := range ips {
		c, err := g.d.DialContext(ctx, network, net.JoinHostPort(ip.Unmap().String(), port))
		if err == nil {
			g.notes.note(host, "")
			return c, nil
		}
		lastErr = err
	}
	if errors.Is(lastErr, syscall.ECONNREFUSED) {
		g.notes.note(host, dialRefused)
	}
	return nil, lastErr
}
