// Package redistest runs a real redis-server on loopback for tests: on a
// free port, in a temporary folder, with nothing saved. Without the binary
// a test is skipped, unless CI=true (then it fails: .ci/run installs
// Debian's redis-server). Under go test -short a test that starts one is
// skipped: the fast inner loop runs no process.
package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Server is one redis-server a test started. Stop and Start again keep
// its port (and lose its data, as a restarted Redis without persistence).
type Server struct {
	t    testing.TB
	bin  string
	dir  string
	Port int

	mu  sync.Mutex // guards cmd
	cmd *exec.Cmd
}

// Start starts redis-server on a free loopback port; it is stopped when
// the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skipping a test that starts redis-server")
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server is not installed, and CI=true requires the Redis tests (.ci/run installs Debian's redis-server)")
		}
		t.Skip("redis-server is not installed (apt-get install redis-server): skipping the Redis tests")
	}
	s := &Server{t: t, bin: bin, dir: t.TempDir()}
	// The port is free when picked, but a listener elsewhere (a test
	// running beside this one) may take it before redis-server binds it:
	// then another one is picked.
	for try := 1; ; try++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s.Port = ln.Addr().(*net.TCPAddr).Port
		_ = ln.Close()
		err = s.start()
		if err == nil {
			break
		}
		if try == 3 || !strings.Contains(err.Error(), "Address already in use") {
			t.Fatal(err)
		}
	}
	t.Cleanup(s.Stop)
	return s
}

// URL is the server's redis:// URL.
func (s *Server) URL() string { return "redis://127.0.0.1:" + strconv.Itoa(s.Port) + "/0" }

// Addr is the server's host:port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.Port) }

// Start starts the server (again) on its port and returns once it accepts
// connections.
func (s *Server) Start() {
	s.t.Helper()
	if err := s.start(); err != nil {
		s.t.Fatal(err)
	}
}

func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return nil
	}
	cmd := exec.Command(s.bin, "--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir, "--loglevel", "notice")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return err
	}
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		var log []string
		for sc.Scan() {
			line := sc.Text()
			if strings.Contains(line, "Ready to accept connections") {
				ready <- nil
				_, _ = io.Copy(io.Discard, out)
				return
			}
			log = append(log, line)
		}
		ready <- fmt.Errorf("redis-server ended before it was ready:\n%s", strings.Join(log, "\n"))
	}()
	select {
	case err := <-ready:
		if err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return err
		}
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return errors.New("redis-server was not ready within 20 s")
	}
	s.cmd = cmd
	return nil
}

// Pause stops the server's process (SIGSTOP) without closing its
// connections: a Redis that hangs. Resume lets it go on.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig os.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		if err := s.cmd.Process.Signal(sig); err != nil {
			s.t.Fatal(err)
		}
	}
}

// Do sends one command (spoken by hand, as Keys) and returns its reply:
// a status, a bulk string or an integer as text ("" for a nil reply); an
// error reply is returned as an error.
func (s *Server) Do(args ...string) (string, error) {
	c, err := net.DialTimeout("tcp", s.Addr(), 2*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(c, b.String()); err != nil {
		return "", err
	}
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	switch {
	case strings.HasPrefix(line, "+"), strings.HasPrefix(line, ":"):
		return line[1:], nil
	case strings.HasPrefix(line, "-"):
		return "", fmt.Errorf("redistest: %s", line[1:])
	case strings.HasPrefix(line, "$"):
		size, err := strconv.Atoi(line[1:])
		if err != nil || size < 0 {
			return "", err
		}
		v := make([]byte, size+2)
		if _, err := io.ReadFull(r, v); err != nil {
			return "", err
		}
		return string(v[:size]), nil
	}
	return "", fmt.Errorf("redistest: %s answered %q", args[0], line)
}

// Keys returns the keys matching pattern (KEYS, spoken by hand so that
// a test outside package redis needs no Redis client).
func (s *Server) Keys(pattern string) ([]string, error) {
	c, err := net.DialTimeout("tcp", s.Addr(), 2*time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := fmt.Fprintf(c, "*2\r\n$4\r\nKEYS\r\n$%d\r\n%s\r\n", len(pattern), pattern); err != nil {
		return nil, err
	}
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(line, "*") {
		return nil, fmt.Errorf("redistest: KEYS answered %q", line)
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, n)
	for range n {
		head, err := r.ReadString('\n')
		if err != nil || !strings.HasPrefix(head, "$") {
			return nil, fmt.Errorf("redistest: bad bulk string %q: %v", head, err)
		}
		size, err := strconv.Atoi(strings.TrimSpace(head[1:]))
		if err != nil {
			return nil, err
		}
		b := make([]byte, size+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		keys = append(keys, string(b[:size]))
	}
	return keys, nil
}

// Stop kills the server and waits for it to end.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Delay is a TCP proxy in front of a Server that holds each of the
// server's answers for the delay it is set to: a slow Redis, or a slow
// network to it.
type Delay struct {
	ln    net.Listener
	delay atomic.Int64 // ns
}

// Delayed starts a Delay in front of s (no delay until Set); it stops
// when the test ends.
func (s *Server) Delayed() *Delay {
	s.t.Helper()
	d := &Delay{}
	d.ln = proxyTo(s.t, s.Addr(), func(cl, up net.Conn, spawn func(func())) {
		spawn(func() { _, _ = io.Copy(up, cl); _ = up.Close() })
		spawn(func() { d.copyBack(cl, up) })
	})
	return d
}

// proxyTo listens on a loopback port and, for each connection it
// accepts, dials upAddr (none when it is "") and hands both to serve,
// which starts its goroutines with spawn. The listener, every
// connection and every goroutine end with the test.
func proxyTo(t testing.TB, upAddr string, serve func(cl, up net.Conn, spawn func(func()))) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex // guards conns
	var conns []net.Conn
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	spawn := func(f func()) { wg.Add(1); go func() { defer wg.Done(); f() }() }
	spawn(func() {
		for {
			cl, err := ln.Accept()
			if err != nil {
				return
			}
			var up net.Conn
			if upAddr != "" {
				if up, err = net.Dial("tcp", upAddr); err != nil {
					_ = cl.Close()
					continue
				}
			}
			mu.Lock()
			conns = append(conns, cl)
			if up != nil {
				conns = append(conns, up)
			}
			mu.Unlock()
			serve(cl, up, spawn)
		}
	})
	return ln
}

// copyBack copies the server's answers to the client, each read held
// for the delay.
func (d *Delay) copyBack(cl, up net.Conn) {
	defer cl.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := up.Read(buf)
		if n > 0 {
			time.Sleep(time.Duration(d.delay.Load()))
			if _, werr := cl.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Set sets the delay of every answer from now on.
func (d *Delay) Set(delay time.Duration) { d.delay.Store(int64(delay)) }

// URL is the redis:// URL that reaches the server through the delay.
func (d *Delay) URL() string { return "redis://" + d.ln.Addr().String() + "/0" }
