package main

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/internal/clock"
)

// peers knows the client connections searxgate holds, by the client's
// address and port, so that a handler can learn that its client has gone
// (closed the connection) and stop the work done for it: fasthttp's
// request context ends only when the server stops.
type peers struct {
	clk   clock.Clock
	every time.Duration // how often a watched connection is looked at

	mu    sync.Mutex // guards conns
	conns map[string]net.Conn
}

func newPeers(clk clock.Clock) *peers {
	return &peers{clk: clock.Or(clk), every: 250 * time.Millisecond, conns: map[string]net.Conn{}}
}

// listener records the connections ln accepts, as they are, before the
// server wraps any (its per-address cap does): the socket is what a watch
// looks at. Each is returned unwrapped: fasthttp writes a response's
// header and body in one writev only to a *net.TCPConn, so a wrapped one
// would cost every answer a second system call.
func (p *peers) listener(ln net.Listener) net.Listener { return &peerListener{Listener: ln, p: p} }

type peerListener struct {
	net.Listener
	p *peers
}

func (l *peerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return c, err
	}
	key := c.RemoteAddr().String()
	l.p.mu.Lock()
	l.p.conns[key] = c
	l.p.mu.Unlock()
	return c, nil
}

// state is the server's ConnState hook: a connection closed or hijacked
// is forgotten (by its client's address and port, which no other open
// connection has).
func (p *peers) state(c net.Conn, st fasthttp.ConnState) {
	if st != fasthttp.StateClosed && st != fasthttp.StateHijacked {
		return
	}
	key := c.RemoteAddr().String()
	p.mu.Lock()
	delete(p.conns, key)
	p.mu.Unlock()
}

// watch returns ctx, ended too when the client at remote (address:port)
// closes its connection, and the function that stops watching. A
// connection searxgate cannot look at (not one it accepted, not a TCP
// socket) is not watched.
func (p *peers) watch(ctx context.Context, remote string) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	p.mu.Lock()
	c := p.conns[remote]
	p.mu.Unlock()
	if c == nil || !watchable(c) {
		return ctx, func() { cancel(nil) }
	}
	tick, stop := p.clk.NewTicker(p.every)
	go func() {
		defer stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick:
				if peerClosed(c) {
					cancel(errClientGone)
					return
				}
			}
		}
	}()
	return ctx, func() { cancel(nil) }
}

// errClientGone is the cause of a watched context ended by its client.
var errClientGone = errors.New("the client closed its connection")
