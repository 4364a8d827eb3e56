package web

import (
	"net"
	"net/netip"
	"os"
)

// machineOrigins are the other ways a browser on this machine or its
// network reaches searxgate's port: the machine's host name, and every
// address of its interfaces (searxgate listening on 0.0.0.0 answers on
// each). Read at each call: a bang's redirect is rare, and addresses come
// and go.
func machineOrigins(port string) []origin {
	var out []origin
	if h, err := os.Hostname(); err == nil && h != "" {
		out = append(out, origin{normHost(h), port})
	}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				out = append(out, origin{normHost(ip.Unmap().WithZone("").String()), port})
			}
		}
	}
	return out
}
