package egress

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/searxgate/searxgate/internal/nettest"
)

func TestDialerChecksEveryAddress(t *testing.T) {
	ln := nettest.Listen(t)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	_, deadPort, _ := net.SplitHostPort(closed.Addr().String())
	closed.Close()

	res := nettest.NewResolver(nettest.Names{
		"public.example": "203.0.113.7",
		"mixed.example":  "203.0.113.7 10.0.0.5",
		"home.example":   "127.0.0.1",
	})
	notes := map[string]string{}
	d := &Dialer{Resolver: res, Timeout: 2 * time.Second, OnFailure: func(h, why string) { notes[h] = why }}
	for host, want := range map[string]string{"mixed.example": DialPrivate, "home.example": DialPrivate, "127.0.0.1": DialPrivate, "nowhere.invalid": DialDNS} {
		_, err := d.Dial(net.JoinHostPort(host, port))
		if err == nil || notes[host] != want {
			t.Errorf("%s: err %v, noted %q; want refused, noted %q", host, err, notes[host], want)
		}
		if want == DialPrivate && !errors.Is(err, ErrNotPublic) {
			t.Errorf("%s: %v does not wrap ErrNotPublic", host, err)
		}
		var dns *net.DNSError
		if want == DialDNS && !errors.As(err, &dns) {
			t.Errorf("%s: %v is no DNS error", host, err)
		}
	}
	// Allowed: home.example connects; a dead port is noted refused.
	d.AllowPrivate = true
	c, err := d.Dial(net.JoinHostPort("home.example", port))
	if err != nil {
		t.Fatalf("allowed private: %v", err)
	}
	c.Close()
	if notes["home.example"] != "" {
		t.Errorf("a good dial left the note %q", notes["home.example"])
	}
	if _, err := d.Dial(net.JoinHostPort("home.example", deadPort)); err == nil || notes["home.example"] != DialRefused {
		t.Errorf("dead port: %v, noted %q", err, notes["home.example"])
	}
	if _, err := d.DialContext(context.Background(), "udp", "127.0.0.1:53"); err == nil {
		t.Error("udp dialled")
	}
}
