package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/searxgate/searxgate/sim"
)

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestAccessLogKeepsNoQuery: with the access log on, requests are logged,
// and no query text, in the query string or a POSTed form, is.
func TestAccessLogKeepsNoQuery(t *testing.T) {
	_, dir := startFleet(t, 9, []sim.InstanceConfig{{Behaviour: sim.Fast, Latency: -1}})
	cfg, err := parseConfig([]string{"--listen", "127.0.0.1:0", "--allow-private", "--directory", dir,
		"--data", t.TempDir(), "--access-log", "--log-level", "debug"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	app, err := NewApp(ctx, cfg, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx) }()

	resp, err := http.Get("http://" + app.Addr() + "/search?q=confidential+diagnosis&format=json")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = http.Post("http://"+app.Addr()+"/search", "application/x-www-form-urlencoded",
		strings.NewReader("q=private+matter&format=json"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	if strings.Count(out, "log=access") < 2 {
		t.Fatalf("the access log did not log both requests:\n%s", out)
	}
	for _, secret := range []string{"confidential", "diagnosis", "private", "matter"} {
		if strings.Contains(out, secret) {
			t.Fatalf("the log holds the query word %q:\n%s", secret, out)
		}
	}
}
