package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/searxgate/searxgate/internal/nettest"
)

// dirEntry is one instance of a directory file a test writes: its URL and
// the median search time searx.space would claim for it, which becomes its
// prior and so decides which instance the pool tries first.
type dirEntry struct {
	url    string
	median float64 // seconds
}

// writeDirectory writes a minimal searx.space-shaped instances.json that
// keeps every entry (normal network, probed with status 200, a version, full
// success and uptime) and returns its path.
func writeDirectory(t *testing.T, entries ...dirEntry) string {
	t.Helper()
	instances := make(map[string]any, len(entries))
	for _, e := range entries {
		instances[e.url] = map[string]any{
			"main":            true,
			"network_type":    "normal",
			"alternativeUrls": map[string]string{},
			"http":            map[string]any{"status_code": 200, "error": nil},
			"version":         "2024.10.5",
			"timing": map[string]any{
				"search": map[string]any{
					"success_percentage": 100,
					"all":                map[string]any{"median": e.median, "stdev": 0.01, "mean": e.median},
				},
			},
			"uptime": map[string]any{"uptimeDay": 100, "uptimeWeek": 100, "uptimeMonth": 100, "uptimeYear": 100},
		}
	}
	b, err := json.Marshal(map[string]any{
		"metadata":  map[string]any{"timestamp": 1700000000, "ips": map[string]any{}, "ipv6": false},
		"instances": instances,
		"hashes":    []any{},
		"engines":   map[string]any{},
	})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "instances.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// failResolver answers every lookup with "no such host" and counts them.
// Gateways in these tests use it, so that no name is ever looked up on the
// network: nothing a test does leaves the machine.
type failResolver struct {
	lookups atomic.Int64
	names   nettest.Resolver // the zero one: resolves nothing
}

func (r *failResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.lookups.Add(1)
	return r.names.LookupNetIP(ctx, network, host)
}

func (r *failResolver) looked() []string { return r.names.Asked() }

// startGatewayWith runs searxgate in-process with the given flags (and
// --listen on a free port, --allow-private, a temp data folder unless
// given) until stop. resolver, when not nil, replaces the system's in the
// upstream dialer, so that names are never resolved on the network.
func startGatewayWith(t *testing.T, resolver ipResolver, directory, data string, flags ...string) *gateway {
	t.Helper()
	if data == "" {
		data = t.TempDir()
	}
	args := append([]string{"--listen", "127.0.0.1:0", "--allow-private", "--directory", directory, "--data", data}, flags...)
	cfg, err := parseConfig(args, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.resolver = resolver
	g, err := runGateway(t, cfg, testLog())
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// runGateway runs an App of cfg, logging to log, until the test ends.
// testLog is a gateway's log in a test: nothing, or its info lines with
// -v.
func testLog() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.DiscardHandler)
}

func runGateway(t *testing.T, cfg Config, log *slog.Logger) (*gateway, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	app, err := NewApp(ctx, cfg, log)
	if err != nil {
		cancel()
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx) }()
	var once sync.Once
	var runErr error
	stop := func() error {
		once.Do(func() { cancel(); runErr = <-done })
		return runErr
	}
	t.Cleanup(func() {
		if err := stop(); err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("gateway stopped with %v", err)
		}
	})
	return &gateway{addr: app.Addr(), app: app, stop: stop}, nil
}

// noAnswerBody is the 503 body: what searxgate tried and why each failed.
type noAnswerBody struct {
	Error string `json:"error"`
	Tried []struct {
		Instance, Outcome, Reason string
	} `json:"tried"`
}

// decodeNoAnswer asserts a is a 503 with SearXNG-style JSON error body and
// returns the body.
func decodeNoAnswer(t *testing.T, a answer) noAnswerBody {
	t.Helper()
	if a.status != 503 {
		t.Fatalf("status %d, want 503: %s", a.status, a.body)
	}
	var body noAnswerBody
	if err := json.Unmarshal(a.body, &body); err != nil {
		t.Fatalf("503 body is not JSON: %v: %s", err, a.body)
	}
	return body
}
