package web

import (
	"net"
	"os"
	"strings"
	"testing"
)

// TestBangRedirectToTheMachine: a bang's redirect to this machine's host
// name or one of its interface addresses on searxgate's port reaches
// searxgate too: 502, not passed on; another port goes through.
func TestBangRedirectToTheMachine(t *testing.T) {
	host, err := os.Hostname()
	if err != nil || host == "" {
		t.Skip("no host name")
	}
	refused := []string{"http://" + strings.ToUpper(host) + ":8888/admin"}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			refused = append(refused, "http://"+n.IP.String()+":8888/")
		}
	}
	for _, loc := range refused {
		_, c := serve(t, Config{Search: bangTo(loc)})
		c.ln.SetLocalAddr(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8888})
		if r := c.get("/search?q=%21%21g+foo&format=json"); r.status != 502 || !strings.Contains(r.body, "redirects back to searxgate itself") {
			t.Errorf("%s: %d %.200q; want 502 naming why", loc, r.status, r.body)
		}
	}
	_, c := serve(t, Config{Search: bangTo("http://" + host + ":9999/")})
	c.ln.SetLocalAddr(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8888})
	if r := c.get("/search?q=%21%21g+foo&format=json"); r.status != 302 {
		t.Errorf("the host name on another port: %d, want the redirect passed on", r.status)
	}
}
