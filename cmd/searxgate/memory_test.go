package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// TestMemoryLimitFromTheCaches: serve sets Go's soft memory limit to what
// the caches may hold (answers 64 MiB, suggestions 4 MiB, read pages 32
// MiB), what the PDFs being read may hold (32 MiB, --reader-queue-mib)
// and a margin of 64 MiB, says so in its log, leaves GOMEMLIMIT's alone,
// and counts no cache with --cache-ttl 0.
func TestMemoryLimitFromTheCaches(t *testing.T) {
	for _, c := range []struct {
		name   string
		flags  []string
		env    string
		want   int64 // 0: not set
		logged string
	}{
		{"defaults", nil, "", (64 + 4 + 32 + 32 + 64) << 20, "limit_mib=196 caches_mib=132 margin_mib=64"},
		{"no cache", []string{"--cache-ttl", "0"}, "", (32 + 64) << 20, "limit_mib=96 caches_mib=32"},
		{"smaller PDF queue", []string{"--reader-queue-mib", "8"}, "", (64 + 4 + 32 + 8 + 64) << 20, "limit_mib=172 caches_mib=108"},
		{"GOMEMLIMIT", nil, "300MiB", 0, "GOMEMLIMIT=300MiB"},
	} {
		cfg, err := parseConfig(append([]string{"--listen", "127.0.0.1:0", "--directory", "none", "--data", t.TempDir()}, c.flags...), env(nil), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		var logs bytes.Buffer
		app, err := NewApp(context.Background(), cfg, slog.New(slog.NewTextHandler(&logs, nil)))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var set int64
		app.setMemoryLimit(func(k string) string {
			if k == "GOMEMLIMIT" {
				return c.env
			}
			return ""
		}, func(n int64) int64 { set = n; return 0 })
		app.closeOpened()
		_ = app.ln.Close()
		if set != c.want || !strings.Contains(logs.String(), c.logged) {
			t.Errorf("%s: limit %d, want %d; log %q, want it to say %q", c.name, set, c.want, logs.String(), c.logged)
		}
	}
}
