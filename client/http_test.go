package client

import (
	"net"
	"net/http"
	"testing"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
)

// TestOfHTTPMatchesOf: the MCP face, behind fasthttp's adaptor, names a
// client as the HTTP face does, trusted proxies and every
// X-Forwarded-For line included.
func TestOfHTTPMatchesOf(t *testing.T) {
	trusted, _ := ParsePrefixes([]string{"127.0.0.1", "10.0.0.0/8"})
	cases := []struct {
		peer  net.Addr
		lines []string
		want  string
	}{
		{&net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 1234}, nil, "192.0.2.7/32"},
		{&net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 1234}, []string{"198.51.100.1"}, "192.0.2.7/32"},
		{&net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 1234}, []string{"198.51.100.1"}, "198.51.100.1/32"},
		{&net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 1234}, []string{"203.0.113.5, 198.51.100.1", "10.1.2.3"}, "198.51.100.1/32"},
		{&net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 1234}, []string{"junk"}, "127.0.0.1/32"},
		{&net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 1234}, []string{"2001:db8::7", "10.1.2.3"}, "2001:db8::/64"},
		{&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2::9"), Port: 1234}, nil, "2001:db8:1:2::/64"},
		{&net.UnixAddr{Name: "/run/searxgate.sock", Net: "unix"}, nil, ""},
	}
	for _, c := range cases {
		var ctx fasthttp.RequestCtx
		var req fasthttp.Request
		for _, line := range c.lines {
			req.Header.Add("X-Forwarded-For", line)
		}
		ctx.Init(&req, c.peer, nil)
		want := Of(trusted)(&ctx)
		if want != c.want {
			t.Errorf("peer %s, X-Forwarded-For %q: %q, want %q", c.peer, c.lines, want, c.want)
		}
		var got string
		fasthttpadaptor.NewFastHTTPHandler(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			got = OfHTTP(trusted)(r)
		}))(&ctx)
		if got != want {
			t.Errorf("peer %s, X-Forwarded-For %q: net/http names %q, fasthttp %q", c.peer, c.lines, got, want)
		}
	}
}
