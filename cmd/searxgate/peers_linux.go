package main

import (
	"errors"
	"net"
	"syscall"
)

// watchable reports whether peerClosed can look at c.
func watchable(c net.Conn) bool {
	_, ok := c.(syscall.Conn)
	return ok
}

// peerClosed reports whether the client closed c: a peek at its socket,
// taking nothing from it, finds its end (or a reset). Bytes waiting (a
// request pipelined after this one) say nothing: it is taken as open.
func peerClosed(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	closed := false
	_ = rc.Control(func(fd uintptr) {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == nil:
			closed = n == 0
		case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EINTR):
		default:
			closed = true // reset, or the socket is gone
		}
	})
	return closed
}
