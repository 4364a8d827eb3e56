package egress

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/searxgate/searxgate/internal/nettest"
)

// connectProxy is an HTTP proxy on 127.0.0.1 that opens CONNECT tunnels
// (or refuses them with status) and remembers what it was asked.
type connectProxy struct {
	addr   string
	status int
	mu     sync.Mutex // guards asked, auth
	asked  []string
	auth   []string
}

func startConnectProxy(t *testing.T, status int) *connectProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &connectProxy{addr: ln.Addr().String(), status: status}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				p.mu.Lock()
				p.asked = append(p.asked, req.Method+" "+req.Host)
				p.auth = append(p.auth, req.Header.Get("Proxy-Authorization"))
				p.mu.Unlock()
				if p.status != http.StatusOK {
					_, _ = io.WriteString(c, "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
					return
				}
				up, err := net.Dial("tcp", req.Host)
				if err != nil {
					_, _ = io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
					return
				}
				defer up.Close()
				_, _ = io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
				go func() { _, _ = io.Copy(up, c); up.Close() }()
				_, _ = io.Copy(c, up)
			}()
		}
	}()
	return p
}

func (p *connectProxy) seen() ([]string, []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.asked...), append([]string(nil), p.auth...)
}

// TestTunnel: with a proxy, the target is resolved and checked first and
// the proxy is asked for the checked address; a private target is refused
// before the proxy hears of it, and so is one the proxy is skipped for.
func TestTunnel(t *testing.T) {
	echo := nettest.Listen(t)
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	_, port, _ := net.SplitHostPort(echo.Addr().String())
	table := nettest.Names{"instance.test": "127.0.0.1", "inside.test": "10.9.9.9"}
	names := nettest.NewResolver(table) // sees what the test adds to table

	ok := startConnectProxy(t, http.StatusOK)
	via := func(p *connectProxy, user string) ProxyFunc {
		return func(host, _ string) (*url.URL, error) {
			if host == "direct.test" {
				return nil, nil
			}
			u := &url.URL{Scheme: "http", Host: p.addr}
			if user != "" {
				u.User = url.UserPassword(user, "pw")
			}
			return u, nil
		}
	}
	d := &Dialer{AllowPrivate: true, Resolver: names, Proxy: via(ok, "me")}
	c, err := d.DialContext(context.Background(), "tcp", "instance.test:"+port)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(c, "ping"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("through the tunnel: %q %v", buf, err)
	}
	c.Close()
	asked, auth := ok.seen()
	if len(asked) != 1 || asked[0] != "CONNECT 127.0.0.1:"+port || auth[0] != "Basic bWU6cHc=" {
		t.Errorf("the proxy was asked %q with %q; want the checked address, with the proxy's credentials", asked, auth)
	}

	guarded := &Dialer{Resolver: names, Proxy: via(ok, "")}
	for _, target := range []string{"instance.test:" + port, "inside.test:443", "127.0.0.1:" + port} {
		if _, err := guarded.DialContext(context.Background(), "tcp", target); !errors.Is(err, ErrNotPublic) {
			t.Errorf("%s through the proxy: %v, want ErrNotPublic", target, err)
		}
	}
	table["direct.test"] = "10.1.1.1"
	if _, err := guarded.DialContext(context.Background(), "tcp", "direct.test:443"); !errors.Is(err, ErrNotPublic) {
		t.Errorf("a host the proxy is skipped for: %v, want ErrNotPublic", err)
	}
	if asked, _ := ok.seen(); len(asked) != 1 {
		t.Errorf("the proxy heard of refused targets: %q", asked)
	}

	refusing := startConnectProxy(t, http.StatusForbidden)
	d = &Dialer{AllowPrivate: true, Resolver: names, Proxy: via(refusing, "")}
	_, err = d.DialContext(context.Background(), "tcp", "instance.test:"+port)
	if !errors.Is(err, ErrProxy) || !strings.Contains(err.Error(), "403") {
		t.Errorf("a proxy that refuses: %v", err)
	}
	d = &Dialer{AllowPrivate: true, Resolver: names, Proxy: func(string, string) (*url.URL, error) { return nil, errors.New("bad proxy setting") }}
	if _, err := d.DialContext(context.Background(), "tcp", "instance.test:"+port); !errors.Is(err, ErrProxy) {
		t.Errorf("a proxy setting that fails: %v", err)
	}
}
