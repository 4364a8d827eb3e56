package egress

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"
)

// ErrProxy is wrapped when the outbound proxy could not be reached or
// refused to open a tunnel.
var ErrProxy = errors.New("outbound proxy")

// ProxyFunc says through which HTTP proxy to reach host:port; a nil URL
// means directly. cmd builds one from HTTPS_PROXY, HTTP_PROXY and
// NO_PROXY.
type ProxyFunc func(host, port string) (*url.URL, error)

// tunnel opens a connection to target ("ip:port", already resolved and
// checked by the guard) through the HTTP proxy at p, with CONNECT. The
// proxy is given the address searxgate checked, never the name, so that
// it cannot resolve the name to somewhere else. The proxy itself is the
// operator's, reached as it is configured (it is not a target the guard
// judges).
func (d *Dialer) tunnel(ctx context.Context, p *url.URL, target string) (net.Conn, error) {
	addr := p.Host
	if p.Port() == "" {
		addr = net.JoinHostPort(p.Hostname(), "80")
	}
	var nd net.Dialer
	c, err := nd.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrProxy, addr, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	} else {
		_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	}
	req := "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n"
	if p.User != nil {
		pw, _ := p.User.Password()
		req += "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(p.User.Username()+":"+pw)) + "\r\n"
	}
	req += "\r\n"
	if _, err := c.Write([]byte(req)); err != nil {
		c.Close()
		return nil, fmt.Errorf("%w %s: %w", ErrProxy, addr, err)
	}
	br := bufio.NewReaderSize(c, 1024)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("%w %s: %w", ErrProxy, addr, err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		c.Close()
		return nil, fmt.Errorf("%w %s refused the tunnel to %s: %s", ErrProxy, addr, target, resp.Status)
	}
	_ = c.SetDeadline(time.Time{})
	if br.Buffered() > 0 {
		return &readFirst{Conn: c, r: br}, nil
	}
	return c, nil
}

// readFirst is a connection whose first bytes were read into r already.
type readFirst struct {
	net.Conn
	r *bufio.Reader
}

func (c *readFirst) Read(b []byte) (int, error) {
	if c.r.Buffered() > 0 {
		return c.r.Read(b)
	}
	return c.Conn.Read(b)
}
