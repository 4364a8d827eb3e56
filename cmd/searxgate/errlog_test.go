package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/internal/clock"
	"github.com/searxgate/searxgate/sim"
)

// newManualClock is a clock a test moves by hand.
func newManualClock() *clock.Fake {
	return clock.NewFake(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
}

func deadlineErr() error { return os.ErrDeadlineExceeded }

func tcpAddrOf(s string) net.Addr {
	a, _ := net.ResolveTCPAddr("tcp", s)
	return a
}

func sinkLines(b *logSink) []string {
	return strings.FieldsFunc(b.String(), func(r rune) bool { return r == '\n' })
}

func newTestErrorLog(b *logSink, c *clock.Fake, every time.Duration) *errorLog {
	return newErrorLog(slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), every, c)
}

// TestErrorLogOneLinePerKind: a kind is logged once per interval; the next
// line after the interval says how many were left out; kinds are counted
// apart.
func TestErrorLogOneLinePerKind(t *testing.T) {
	var b logSink
	clk := newManualClock()
	l := newTestErrorLog(&b, clk, time.Minute)
	serving := func(err error) {
		l.Printf("error when serving connection %q<->%q: %v", tcpAddrOf("127.0.0.1:8888"), tcpAddrOf("192.0.2.7:40000"), err)
	}
	bad := errors.New("error when reading request headers: cannot find whitespace in the first line of request. Buffer size=12, contents: \"Bearer abc\"")

	for range 100 {
		serving(bad)
	}
	serving(deadlineErr())
	if got := sinkLines(&b); len(got) != 2 {
		t.Fatalf("100 malformed requests and a timeout: %d lines, want 2 (one per kind):\n%s", len(got), b.String())
	}
	clk.Advance(59 * time.Second)
	serving(bad)
	if got := sinkLines(&b); len(got) != 2 {
		t.Fatalf("within the minute: %d lines, want still 2", len(got))
	}
	clk.Advance(time.Second)
	serving(bad)
	lines := sinkLines(&b)
	if len(lines) != 3 {
		t.Fatalf("after the minute: %d lines, want 3:\n%s", len(lines), b.String())
	}
	if !strings.Contains(lines[2], "suppressed=100") || !strings.Contains(lines[2], kindMalformedHeader) {
		t.Errorf("the line after the interval: %s; want the kind and suppressed=100 (99 + 1 left out)", lines[2])
	}
	for _, s := range []string{"192.0.2.7", "40000", "Bearer", "abc", "8888"} {
		if strings.Contains(b.String(), s) {
			t.Errorf("the log holds %q:\n%s", s, b.String())
		}
	}
}

func TestErrorLogKinds(t *testing.T) {
	local, remote := tcpAddrOf("127.0.0.1:1"), tcpAddrOf("198.51.100.9:5")
	conn := func(err error) (string, []any) {
		return "error when serving connection %q<->%q: %v", []any{local, remote, err}
	}
	cases := []struct {
		format string
		args   []any
		kind   string
	}{
		{"The number of connections from %s exceeds MaxConnsPerIP=%d", []any{"198.51.100.9", 64}, kindPerIP},
		{"The incoming connection cannot be served, because %d concurrent connections are served. Try increasing Server.Concurrency", []any{10}, kindConcurrency},
		{"Permanent error when accepting new connections: %v", []any{errors.New("accept4: too many open files")}, kindAccept},
		{"%.3f %s - %s", []any{1.0, "#0 - 198.51.100.9:5<->127.0.0.1:1 - GET http://x/?q=secret", "msg"}, kindOther},
	}
	for _, c := range []struct {
		err  error
		kind string
	}{
		{&fasthttp.ErrSmallBuffer{}, kindHeaderTooLarge},
		{fmt.Errorf("reading body: %w", fasthttp.ErrBodyTooLarge), kindBodyTooLarge},
		{fasthttp.ErrBrokenChunk{}, kindBrokenChunk},
		{deadlineErr(), kindReadTimeout},
		{errors.New("error when reading request headers: nope"), kindMalformedHeader},
		{errors.New("cannot parse URI"), kindMalformed},
		{nil, kindOther},
	} {
		f, a := conn(c.err)
		cases = append(cases, struct {
			format string
			args   []any
			kind   string
		}{f, a, c.kind})
	}
	for _, c := range cases {
		var b logSink
		l := newTestErrorLog(&b, newManualClock(), time.Minute)
		l.Printf(c.format, c.args...)
		out := b.String()
		if !strings.Contains(out, c.kind) {
			t.Errorf("%q: logged %q, want the kind %q", c.format, out, c.kind)
		}
		if strings.Contains(out, "198.51.100.9") || strings.Contains(out, "secret") {
			t.Errorf("%q: the client's address or request reached the log: %s", c.format, out)
		}
	}
	// An accept error is about the listener: its text is kept.
	var b logSink
	newTestErrorLog(&b, newManualClock(), time.Minute).Printf("Permanent error when accepting new connections: %v", errors.New("accept4: too many open files"))
	if !strings.Contains(b.String(), "too many open files") {
		t.Errorf("an accept error lost its text: %s", b.String())
	}
}

// TestRequestErrorStatus: what the server answers a request it could not
// read (the kinds the error log names).
func TestRequestErrorStatus(t *testing.T) {
	_, dir := startFleet(t, 24, []sim.InstanceConfig{{Behaviour: sim.Fast, Latency: -1, JSON: true}})
	g := startGateway(t, dir, "", "--read-timeout", "1s")
	c, err := net.DialTimeout("tcp", g.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	// Half a request, then nothing: the read timeout answers 408.
	if _, err := io.WriteString(c, "GET /search?q=x HTTP/1.1\r\nHost: x\r\n"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.Contains(line, " 408 ") {
		t.Errorf("a request cut off by the read timeout: %q, %v; want 408", line, err)
	}
}
