//go:build unix

package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tavilyPost posts a Tavily search with key and returns the status and
// body.
func tavilyPost(t *testing.T, g *gateway, key, query string) (int, string) {
	t.Helper()
	a := g.do(t, http.MethodPost, "/tavily/search", strings.NewReader(`{"query":"`+query+`","max_results":3}`),
		map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"})
	return a.status, string(a.body)
}

// TestAPIKeysAreClients: each API key is one client for the per-client
// rate, whatever address it comes from (here all from 127.0.0.1): one
// key over its rate is refused (Tavily's 429) while another key still
// searches. A SIGHUP reads the key file again: a key taken out is
// refused, a key put in is taken, without a restart. No key shows in
// /status, /status.json or /metrics.
func TestAPIKeysAreClients(t *testing.T) {
	const keyA, keyB, keyC = "key-a-0123456789abcdef", "key-b-0123456789abcdef", "key-c-0123456789abcdef"
	file := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(file, []byte(keyA+"\n"+keyB+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	g := startAPIGateway(t, "--api-key-file", file, "--client-rate", "1", "--client-burst", "1")
	if s, body := tavilyPost(t, g, keyA, "alpha"); s != 200 {
		t.Fatalf("key A's first search: %d %s", s, body)
	}
	if s, body := tavilyPost(t, g, keyA, "beta"); s != 429 || !strings.Contains(body, "too many searches") {
		t.Fatalf("key A over its rate: %d %s", s, body)
	}
	if s, body := tavilyPost(t, g, keyB, "gamma"); s != 200 {
		t.Fatalf("key B, another client from the same address: %d %s", s, body)
	}
	if s, body := tavilyPost(t, g, testAPIKey, "delta"); s != 200 {
		t.Fatalf("the --api-key key beside the file's: %d %s", s, body)
	}
	for _, path := range []string{"/status", "/status.json", "/metrics"} {
		body := string(g.get(t, path, nil).body)
		for _, k := range []string{keyA, keyB, testAPIKey} {
			if strings.Contains(body, k) {
				t.Errorf("%s shows an API key", path)
			}
		}
	}

	if err := os.WriteFile(file, []byte("# rotated\n"+keyC+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		s, _ := tavilyPost(t, g, keyC, "epsilon")
		if s == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("key C still refused (%d) 20 s after SIGHUP", s)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if s, _ := tavilyPost(t, g, keyB, "zeta"); s != 401 {
		t.Errorf("key B, taken out of the file: %d", s)
	}
	if s, _ := tavilyPost(t, g, testAPIKey, "delta"); s != 200 { // cached: no new search to count
		t.Errorf("the --api-key key after a reload: %d", s)
	}
}
