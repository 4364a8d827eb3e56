package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// ErrNotPublic is wrapped by Dialer when a host resolves to an address
// that is not public (see PublicAddr) and private addresses are not
// allowed.
var ErrNotPublic = errors.New("address is not public") // each door names its own switch

// IPResolver resolves names; *net.Resolver is one.
type IPResolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Why a Dialer could not reach a host, as it tells OnFailure.
const (
	DialPrivate = "private" // the name resolved to an address that is not public
	DialDNS     = "dns"     // the name did not resolve
	DialRefused = "refused" // every address refused the connection
)

// Dialer connects to hosts the way every outgoing connection of searxgate
// must: it resolves each name itself and refuses loopback, private,
// link-local and other non-public addresses unless AllowPrivate, checking
// every address the name gives, so that neither a URL (an instance, the
// directory, an image, a page an agent reads) nor a name that changes its
// answer (DNS rebinding), nor a redirect, can point searxgate into the
// network it runs in. Guard checks URLs before; Dialer checks what they
// resolve to, at the moment of connecting.
type Dialer struct {
	AllowPrivate bool
	Resolver     IPResolver // nil is the system's
	// Timeout bounds the lookup and the connection together (0: ctx only).
	Timeout time.Duration
	// Connect opens the TCP connection to an allowed address ("ip:port");
	// nil is a net.Dialer. Tests route it to loopback.
	Connect func(ctx context.Context, network, addr string) (net.Conn, error)
	// OnFailure, when set, is told why a host could not be reached
	// (DialPrivate, DialDNS, DialRefused), and "" when it was.
	OnFailure func(host, why string)
	// Proxy, when set, says which HTTP proxy to reach a host through
	// (HTTPS_PROXY, NO_PROXY). The host is resolved and every address
	// checked first, whatever Proxy says: a proxy, or a host that it
	// reaches directly, never skips the guard. The tunnel goes to the
	// checked address (CONNECT ip:port).
	Proxy ProxyFunc
}

// Dial is DialContext for fasthttp's DialFunc.
func (d *Dialer) Dial(addr string) (net.Conn, error) {
	return d.DialContext(context.Background(), "tcp", addr)
}

// DialContext connects to addr (host:port) over TCP once every address the
// host resolves to is allowed, trying them in turn.
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, fmt.Errorf("dialing %s: network %q is not tcp", addr, network)
	}
	if d.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.Timeout)
		defer cancel()
	}
	ips, err := d.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	var via *url.URL
	if d.Proxy != nil {
		if via, err = d.Proxy(host, port); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrProxy, err)
		}
	}
	lastErr := fmt.Errorf("no address for %s", host)
	for _, ip := range ips {
		target := net.JoinHostPort(ip.String(), port)
		var c net.Conn
		var err error
		if via != nil {
			c, err = d.tunnel(ctx, via, target)
		} else {
			c, err = d.connect(ctx, network, target)
		}
		if err == nil {
			d.note(host, "")
			return c, nil
		}
		lastErr = err
	}
	if errors.Is(lastErr, syscall.ECONNREFUSED) {
		d.note(host, DialRefused)
	}
	return nil, lastErr
}

// resolve returns host's addresses, every one of them allowed.
func (d *Dialer) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		if ip.Is4In6() && !d.AllowPrivate {
			// Spelled so by a URL, not by a resolver (see Guard.check).
			d.note(host, DialPrivate)
			return nil, fmt.Errorf("%s: %w", host, ErrNotPublic)
		}
		ips = []netip.Addr{ip}
	} else {
		r := d.Resolver
		if r == nil {
			r = net.DefaultResolver
		}
		found, err := r.LookupNetIP(ctx, "ip", host)
		if err != nil {
			d.note(host, DialDNS)
			var dns *net.DNSError
			if !errors.As(err, &dns) {
				err = &net.DNSError{Err: err.Error(), Name: host, IsNotFound: true}
			}
			return nil, fmt.Errorf("resolving %s: %w", host, err)
		}
		ips = found
	}
	for i, ip := range ips {
		ips[i] = ip.Unmap()
		if !d.AllowPrivate && !PublicAddr(ips[i]) {
			d.note(host, DialPrivate)
			return nil, fmt.Errorf("%s (%s): %w", host, ips[i], ErrNotPublic)
		}
	}
	return ips, nil
}

func (d *Dialer) connect(ctx context.Context, network, addr string) (net.Conn, error) {
	if d.Connect != nil {
		return d.Connect(ctx, network, addr)
	}
	var nd net.Dialer
	nd.KeepAlive = 30 * time.Second
	return nd.DialContext(ctx, network, addr)
}

func (d *Dialer) note(host, why string) {
	if d.OnFailure != nil {
		d.OnFailure(host, why)
	}
}
