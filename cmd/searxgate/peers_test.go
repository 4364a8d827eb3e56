package main

import (
	"context"
	"errors"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// TestPeerGone: a handler watching its client's connection sees its
// context end once the client closes it, with the cause; a client that
// stays keeps it.
func TestPeerGone(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("connections are watched on Linux only")
	}
	p := newPeers(nil)
	p.every = 10 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	srv := &fasthttp.Server{ConnState: p.state, Handler: func(rc *fasthttp.RequestCtx) {
		ctx, stop := p.watch(context.Background(), rc.RemoteAddr().String())
		defer stop()
		select {
		case <-ctx.Done():
			ended <- context.Cause(ctx)
		case <-time.After(30 * time.Second):
			ended <- nil
		}
	}}
	go func() { _ = srv.Serve(p.listener(ln)) }()
	t.Cleanup(func() { _ = srv.Shutdown() })

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-ended:
		t.Fatalf("ended while the client stayed: %v", err)
	case <-time.After(200 * time.Millisecond): // twenty looks at a connection still open
	}
	_ = c.Close()
	if err := <-ended; !errors.Is(err, errClientGone) {
		t.Errorf("after the client closed: %v, want errClientGone", err)
	}
	// The closed connection is forgotten (the server's ConnState hook),
	// so the table holds only connections still open.
	for i := 0; ; i++ {
		p.mu.Lock()
		n := len(p.conns)
		p.mu.Unlock()
		if n == 0 {
			break
		}
		if i == 5000 {
			t.Fatalf("%d connections still known after the only one closed", n)
		}
		time.Sleep(time.Millisecond)
	}
}
