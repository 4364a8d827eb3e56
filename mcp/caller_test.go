package mcp

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/searxgate/searxgate/reader"
)

// blockedRead is a Reader whose reads wait until their context ends, and
// say why.
type blockedRead struct {
	started chan struct{}
	ended   chan error
}

func (b blockedRead) Read(ctx context.Context, _ reader.Request) (*reader.Result, error) {
	b.started <- struct{}{}
	<-ctx.Done()
	b.ended <- ctx.Err()
	return nil, ctx.Err()
}

// TestReadEndsWithItsRequest: a web_url_read whose client closes its
// connection has its context ended (a PDF waiting for a worker then
// leaves the queue, one in a worker has its child killed); the SDK alone
// would let it run on.
func TestReadEndsWithItsRequest(t *testing.T) {
	br := blockedRead{started: make(chan struct{}, 1), ended: make(chan error, 1)}
	_, hs := serve(t, Config{Search: &fakeSearch{}, Read: br})
	var mu sync.Mutex
	var conns []net.Conn
	var d net.Dialer
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err == nil {
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
		return c, err
	}}}
	s := connect(t, hs, hc)
	go func() {
		_, _ = s.CallTool(context.Background(), &sdk.CallToolParams{Name: ToolRead, Arguments: map[string]any{"url": "https://a.example/x.pdf"}})
	}()
	select {
	case <-br.started:
	case <-time.After(time.Minute): // a watchdog
		t.Fatal("the read never started")
	}
	mu.Lock()
	for _, c := range conns {
		_ = c.Close()
	}
	mu.Unlock()
	select {
	case err := <-br.ended:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the read ended with %v, want cancelled", err)
		}
	case <-time.After(time.Minute): // a watchdog: it ends at once
		t.Fatal("the read ran on after its client closed the connection")
	}
}
