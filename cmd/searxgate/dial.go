package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
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

// guardedDial returns the upstream dialer: it resolves the instance's name
// itself and refuses loopback, private, link-local and other non-public
// addresses unless allowPrivate, so that neither a directory entry nor a
// name that changes its answer (DNS rebinding) can point searxgate into the
// network it runs in.
//
// resolver nil is the system's.
func guardedDial(allowPrivate bool, timeout time.Duration, resolver ipResolver) fasthttp.DialFunc {
	d := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	return func(addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		var ips []netip.Addr
		if ip, err := netip.ParseAddr(host); err == nil {
			ips = []netip.Addr{ip}
		} else {
			found, err := resolver.LookupNetIP(ctx, "ip", host)
			if err != nil {
				return nil, fmt.Errorf("resolving %s: %w", host, err)
			}
			ips = found
		}
		var lastErr error = fmt.Errorf("no address for %s", host)
		for _, ip := range ips {
			ip = ip.Unmap()
			if !allowPrivate && !directory.PublicAddr(ip) {
				return nil, fmt.Errorf("%s (%s): %w", host, ip, errPrivateDial)
			}
		}
		for _, ip := range ips {
			c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(ip.Unmap().String(), port))
			if err == nil {
				return c, nil
			}
			lastErr = err
		}
		return nil, lastErr
	}
}
