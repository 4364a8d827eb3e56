//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package sim

import (
	"io"
	"net"
	"strconv"
)

// reservePort learns a free port by listening on it and closing the
// listener at once: on these systems the port is not held, so another
// program may take it while the fleet runs.
func reservePort(host string, port int) (int, io.Closer, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return 0, nil, err
	}
	port = ln.Addr().(*net.TCPAddr).Port
	return port, io.NopCloser(nil), ln.Close()
}
