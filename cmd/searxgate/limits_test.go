package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/searxgate/searxgate/sim"
)

// rawRequest sends raw bytes to addr and returns the status code of the
// answer, or 0 when the connection was closed without one.
func rawRequest(t *testing.T, addr, req string) int {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte(req)); err != nil {
		return 0
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestClientLimits: oversized requests are refused before they reach the
// search path, and the fleet never sees them.
func TestClientLimits(t *testing.T) {
	fleet, dir := startFleet(t, 10, []sim.InstanceConfig{{Behaviour: sim.Fast, Latency: -1}})
	g := startGateway(t, dir, "")

	body := "q=x&format=json&pad=" + strings.Repeat("a", 100<<10)
	if got := rawRequest(t, g.addr, fmt.Sprintf("POST /search HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n%s", len(body), body)); got != 413 {
		t.Errorf("a 100 KiB form: status %d, want 413", got)
	}
	if got := rawRequest(t, g.addr, "GET /search?q=x&format=json HTTP/1.1\r\nHost: x\r\nX-Big: "+strings.Repeat("b", 16<<10)+"\r\n\r\n"); got != 431 {
		t.Errorf("a 16 KiB header: status %d, want 431", got)
	}
	// Past proxy.MaxQueryLen (16 KiB; a query that long comes by POST).
	form := "format=json&q=" + strings.Repeat("long+", 3400)
	if a := g.do(t, http.MethodPost, "/search", strings.NewReader(form), map[string]string{"Content-Type": "application/x-www-form-urlencoded"}); a.status != 400 {
		t.Errorf("a 17,000-byte query: status %d, want 400: %.200s", a.status, a.body)
	}
	if n := totalSearches(fleet); n != 0 {
		t.Fatalf("oversized requests made %d upstream searches", n)
	}
	// Up to the cap, a long query is searched, as SearXNG searches it
	// (9,000 bytes): sent upstream as a form, not a request line over the
	// instance's limit.
	if a := g.get(t, "/search?format=json&q="+strings.Repeat("long+", 1800), nil); a.status != 200 {
		t.Errorf("a 9,000-byte query: status %d, want 200: %.900s", a.status, a.body)
	}
	// The server still answers.
	if a := g.get(t, "/search?format=json&q=fine", nil); a.status != 200 {
		t.Fatalf("a normal search after the oversized ones: %d %s", a.status, a.body)
	}
}
