//go:build linux || darwin || freebsd || netbsd || openbsd

package sim

import (
	"fmt"
	"io"
	"net/netip"
	"sync"
	"syscall"
)

// reservePort binds a TCP socket to host:port (0 = any free port) without
// listening on it: the port stays taken for as long as the returned closer
// is open, so no other program can take it, and a connection to it is
// refused, as to a dead instance.
func reservePort(host string, port int) (int, io.Closer, error) {
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return 0, nil, err
	}
	family, sa := syscall.AF_INET, syscall.Sockaddr(nil)
	if ip.Is4() {
		sa = &syscall.SockaddrInet4{Port: port, Addr: ip.As4()}
	} else {
		family = syscall.AF_INET6
		sa = &syscall.SockaddrInet6{Port: port, Addr: ip.As16()}
	}
	fd, err := syscall.Socket(family, syscall.SOCK_STREAM, 0)
	if err != nil {
		return 0, nil, fmt.Errorf("reserving a port: %w", err)
	}
	if err := syscall.Bind(fd, sa); err != nil {
		_ = syscall.Close(fd)
		return 0, nil, fmt.Errorf("reserving port %d: %w", port, err)
	}
	got, err := syscall.Getsockname(fd)
	if err != nil {
		_ = syscall.Close(fd)
		return 0, nil, err
	}
	switch a := got.(type) {
	case *syscall.SockaddrInet4:
		port = a.Port
	case *syscall.SockaddrInet6:
		port = a.Port
	}
	return port, &fdCloser{fd: fd}, nil
}

// fdCloser closes its descriptor once: a second close could close another
// file that was given the same number since.
type fdCloser struct {
	once sync.Once
	fd   int
}

func (c *fdCloser) Close() error {
	var err error
	c.once.Do(func() { err = syscall.Close(c.fd) })
	return err
}
