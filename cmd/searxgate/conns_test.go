package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/searxgate/searxgate/sim"
)

// startGatewayLogged is startGateway with the app's log going to log.
func startGatewayLogged(t *testing.T, log *slog.Logger, directory string, flags ...string) *gateway {
	t.Helper()
	args := append([]string{"--listen", "127.0.0.1:0", "--allow-private", "--directory", directory, "--data", t.TempDir()}, flags...)
	cfg, err := parseConfig(args, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.resolver = &failResolver{}
	g, err := runGateway(t, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// dialerFrom dials from a given loopback address: all of 127/8 is
// loopback on Linux, so each is a client address of its own.
func dialerFrom(ip string) *net.Dialer {
	return &net.Dialer{Timeout: 15 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
}

// clientFrom is an HTTP client whose connections come from ip.
func clientFrom(ip string) *http.Client {
	return &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{DialContext: dialerFrom(ip).DialContext}}
}

// connBudget is how many connections a test may hold open: the test
// process holds both ends of each loopback connection it accepts, plus the
// gateway's, the fleet's and Go's own descriptors.
func connBudget(t *testing.T, want int) int {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	// Go raises the soft limit to the hard one at start; try again in case
	// it could not.
	if need := uint64(want + 1024); lim.Cur < need && lim.Max > lim.Cur {
		lim.Cur = min(need, lim.Max)
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
		_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
	n := min(want, int(lim.Cur)-1024)
	if n < 500 {
		t.Skipf("RLIMIT_NOFILE is %d: too few descriptors for this test", lim.Cur)
	}
	return n
}

// TestIdleConnectionsFromOneAddress: thousands of idle connections from
// one address take at most --max-conns-per-ip of the server's connections;
// a client at another address still searches. --max-conns is set below
// the flood, so without the per-address cap the flood would take every
// connection and the other client would get 503.
func TestIdleConnectionsFromOneAddress(t *testing.T) {
	_, dir := startFleet(t, 21, []sim.InstanceConfig{{Behaviour: sim.Fast, Latency: -1, JSON: true}})
	flood := connBudget(t, 5000)
	// Timeouts well past the test's length: the flood must be held off by
	// the cap, not by connections timing out.
	g := startGateway(t, dir, "", "--max-conns", fmt.Sprint(flood/2), "--max-conns-per-ip", "64",
		"--read-timeout", "2m", "--idle-timeout", "10m")

	conns := make([]net.Conn, flood)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := dialerFrom("127.0.0.1")
			for i := w; i < flood; i += 4 {
				c, err := d.Dial("tcp", g.addr)
				if err != nil {
					errs <- fmt.Errorf("connection %d: %w", i, err)
					return
				}
				conns[i] = c
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	// Another address searches as usual, several times.
	other := clientFrom("127.0.0.2")
	for i := range 3 {
		resp, err := other.Get("http://" + g.addr + fmt.Sprintf("/search?format=json&q=idle+flood+%d", i))
		if err != nil {
			t.Fatalf("search %d from 127.0.0.2: %v", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("search %d from 127.0.0.2 during %d idle connections from 127.0.0.1: %d %s", i, flood, resp.StatusCode, body)
		}
	}

	// The flooding address's connections past the cap were refused with
	// 429 and closed.
	refused := 0
	for _, c := range conns[len(conns)-20:] {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("a connection past the cap: %v, want a 429", err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests {
			refused++
		}
	}
	if refused != 20 {
		t.Errorf("%d of the last 20 connections were refused with 429, want all", refused)
	}
}

// TestSlowClientsAreCutOff: a client that dribbles its request header one
// byte at a time, and a kept-alive connection that sends nothing more, are
// closed once --read-timeout and --idle-timeout pass, not minutes later.
func TestSlowClientsAreCutOff(t *testing.T) {
	_, dir := startFleet(t, 22, []sim.InstanceConfig{{Behaviour: sim.Fast, Latency: -1, JSON: true}})
	const timeout = time.Second
	// Generous for a loaded machine, and far below the old 10 s and 2 min.
	const slack = 2500 * time.Millisecond
	g := startGateway(t, dir, "", "--read-timeout", timeout.String(), "--idle-timeout", timeout.String())

	type result struct {
		after time.Duration
		err   error
	}
	const slow = 8
	results := make(chan result, slow+1)
	stop := make(chan struct{})
	defer close(stop)
	var wg sync.WaitGroup
	defer wg.Wait()
	for range slow {
		c, err := net.DialTimeout("tcp", g.addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		start := time.Now()
		wg.Add(2)
		go func() { // dribble: a header that never ends
			defer wg.Done()
			if _, err := io.WriteString(c, "GET /search?q=slow&format=json HTTP/1.1\r\nHost: x\r\nX-Pad: "); err != nil {
				return
			}
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					if _, err := c.Write([]byte("a")); err != nil {
						return
					}
				}
			}
		}()
		go func() { // wait for the server to close it
			defer wg.Done()
			_ = c.SetReadDeadline(time.Now().Add(timeout + slack + 5*time.Second))
			_, err := io.Copy(io.Discard, c)
			results <- result{time.Since(start), err}
		}()
	}

	// A kept-alive connection that goes quiet after one request.
	c, err := net.DialTimeout("tcp", g.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("/healthz: %d, close %v; want a kept-alive 200", resp.StatusCode, resp.Close)
	}
	idleStart := time.Now()
	_ = c.SetReadDeadline(time.Now().Add(timeout + slack + 5*time.Second))
	_, idleErr := io.Copy(io.Discard, br)
	idleAfter := time.Since(idleStart)

	for range slow {
		r := <-results
		var ne net.Error
		if errors.As(r.err, &ne) && ne.Timeout() {
			t.Errorf("a slow header was still open after %v", r.after)
			continue
		}
		if r.after > timeout+slack {
			t.Errorf("a slow header was closed after %v, want within %v (+%v)", r.after, timeout, slack)
		}
	}
	var ne net.Error
	switch {
	case errors.As(idleErr, &ne) && ne.Timeout():
		t.Errorf("an idle kept-alive connection was still open after %v", idleAfter)
	case idleAfter > timeout+slack:
		t.Errorf("an idle kept-alive connection was closed after %v, want within %v (+%v)", idleAfter, timeout, slack)
	}

	// The server still serves.
	if a := g.get(t, "/search?format=json&q=after+the+slow+ones", nil); a.status != 200 {
		t.Fatalf("a search after the slow clients: %d %s", a.status, a.body)
	}
}

// logSink is a log sink the server's goroutines write to.
type logSink struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestServerErrorLogKeepsNoRequestData: malformed requests that carry a
// bearer token, a cookie and a query reach the log as their kind only,
// without the client's address, and a flood of them writes a few lines.
func TestServerErrorLogKeepsNoRequestData(t *testing.T) {
	_, dir := startFleet(t, 23, []sim.InstanceConfig{{Behaviour: sim.Fast, Latency: -1, JSON: true}})
	var sink logSink
	log := slog.New(slog.NewTextHandler(&sink, &slog.HandlerOptions{Level: slog.LevelDebug}))
	g := startGatewayLogged(t, log, dir, "--admin-token", "the-real-admin-token")
	before := len(sink.String())

	const (
		token  = "tok-7c1f9e2a5b"
		cookie = "cookie-d41d8cd98f"
		query  = "hushhush-query-31337"
		client = "127.0.0.3"
	)
	secrets := "Authorization: Bearer " + token + "\r\nCookie: sid=" + cookie + "\r\n"
	malformed := []string{
		// A header line without a colon.
		"GET /search?q=" + query + "&format=json HTTP/1.1\r\nHost: x\r\n" + secrets + "Not a header\r\n\r\n",
		// A Content-Length that is not a number.
		"POST /search?q=" + query + " HTTP/1.1\r\nHost: x\r\n" + secrets + "Content-Length: lots\r\n\r\nq=" + query,
		// A request line with junk in the method.
		"G\x01T /search?q=" + query + " HTTP/1.1\r\nHost: x\r\n" + secrets + "\r\n",
		// Two Content-Lengths that disagree.
		"POST /search HTTP/1.1\r\nHost: x\r\n" + secrets + "Content-Length: 5\r\nContent-Length: 7\r\n\r\nq=" + query,
	}
	const total = 2000
	var wg sync.WaitGroup
	statuses := make([]map[int]int, 4)
	errs := make(chan error, 4)
	for w := range 4 {
		statuses[w] = map[int]int{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := dialerFrom(client)
			for i := w; i < total; i += 4 {
				c, err := d.Dial("tcp", g.addr)
				if err != nil {
					errs <- err
					return
				}
				_ = c.SetDeadline(time.Now().Add(10 * time.Second))
				_, _ = io.WriteString(c, malformed[i%len(malformed)])
				status := 0
				if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
					status = resp.StatusCode
					resp.Body.Close()
				}
				statuses[w][status]++
				c.Close()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	count := map[int]int{}
	for _, m := range statuses {
		for k, v := range m {
			count[k] += v
		}
	}
	if count[http.StatusBadRequest] == 0 {
		t.Errorf("no malformed request was answered 400: %v", count)
	}
	// The log is written by the connections' goroutines; the gateway's
	// stop waits for them.
	if err := g.stop(); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	out := sink.String()[before:]
	for _, s := range []string{token, cookie, query, "Bearer", "Cookie", "sid=", client} {
		if strings.Contains(out, s) {
			t.Errorf("the log holds %q:\n%.2000s", s, out)
		}
	}
	var httpLines []string
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "component=http") {
			httpLines = append(httpLines, line)
		}
	}
	if len(httpLines) == 0 {
		t.Errorf("%d malformed requests left no line in the log: %v", total, count)
	}
	if n := len(strings.Join(httpLines, "\n")); n > 2048 || len(httpLines) > 10 {
		t.Errorf("%d malformed requests wrote %d lines, %d bytes:\n%s", total, len(httpLines), n, strings.Join(httpLines, "\n"))
	}
	t.Logf("%d malformed requests (answers %v) wrote:\n%s", total, count, strings.Join(httpLines, "\n"))
}

// TestConnLimitFlags: the connection and instance-API limits have sane
// defaults (timeouts in seconds, WriteTimeout above the search deadline),
// are read from flags and the environment, and their errors name both.
func TestConnLimitFlags(t *testing.T) {
	d := defaultConfig()
	if d.MaxConnsPerIP != 64 || d.MaxOwnInstances != 100 {
		t.Errorf("defaults: max-conns-per-ip %d, max-own-instances %d", d.MaxConnsPerIP, d.MaxOwnInstances)
	}
	if d.ReadTimeout > 10*time.Second || d.IdleTimeout > 30*time.Second {
		t.Errorf("defaults: read-timeout %v, idle-timeout %v: a search gateway's are seconds, not minutes", d.ReadTimeout, d.IdleTimeout)
	}
	if err := d.Validate(); err != nil {
		t.Fatalf("the defaults do not validate: %v", err)
	}

	c, err := parseConfig([]string{"--max-conns-per-ip", "0", "--idle-timeout", "90s"},
		env(map[string]string{"SEARXGATE_MAX_CONNS_PER_IP": "5", "SEARXGATE_READ_TIMEOUT": "3s", "SEARXGATE_MAX_OWN_INSTANCES": "7"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxConnsPerIP != 0 || c.IdleTimeout != 90*time.Second || c.ReadTimeout != 3*time.Second || c.MaxOwnInstances != 7 {
		t.Errorf("parsed %d %v %v %d", c.MaxConnsPerIP, c.IdleTimeout, c.ReadTimeout, c.MaxOwnInstances)
	}

	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--max-conns-per-ip", "-1"}, []string{"--max-conns-per-ip", "SEARXGATE_MAX_CONNS_PER_IP"}},
		{[]string{"--read-timeout", "0s"}, []string{"--read-timeout", "SEARXGATE_READ_TIMEOUT"}},
		{[]string{"--idle-timeout", "1h"}, []string{"--idle-timeout", "SEARXGATE_IDLE_TIMEOUT"}},
		{[]string{"--max-own-instances", "0"}, []string{"--max-own-instances", "SEARXGATE_MAX_OWN_INSTANCES"}},
	} {
		_, err := parseConfig(tc.args, env(nil), io.Discard)
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %v, want it to name %q", tc.args, err, w)
			}
		}
	}
}
