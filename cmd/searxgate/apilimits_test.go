package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/searxgate/searxgate/sim"
)

// TestInstanceAPIEdges: through the real server, a URL with a port outside
// 1 to 65535 or over the length cap is the client's error (400, not 500),
// and the operator may add at most --max-own-instances instances.
func TestInstanceAPIEdges(t *testing.T) {
	_, dir := startFleet(t, 25, []sim.InstanceConfig{{Behaviour: sim.Fast, Latency: -1, JSON: true}})
	const token = "edge-token"
	g := startGateway(t, dir, "", "--admin-token", token, "--max-own-instances", "3")
	do := func(method, path string, body any) (int, string) {
		t.Helper()
		var r io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			r = bytes.NewReader(b)
		}
		a := g.do(t, method, path, r, map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json"})
		return a.status, string(a.body)
	}
	add := func(u string) (int, string) {
		t.Helper()
		return do(http.MethodPost, "/api/instances", map[string]string{"url": u})
	}

	for _, u := range []string{
		"http://127.0.0.1:0/",
		"http://127.0.0.1:99999/",
		"http://127.0.0.1:65536/",
		"http://127.0.0.1/" + strings.Repeat("a", 60<<10),
	} {
		status, body := add(u)
		if status != http.StatusBadRequest {
			t.Errorf("adding %.40q…: %d %.200s, want 400", u, status, body)
		}
		if len(body) > 4096 {
			t.Errorf("adding %.40q…: a %d-byte answer", u, len(body))
		}
	}
	for _, p := range []string{
		"/api/instances/" + url.PathEscape("http://127.0.0.1:0/"),
		"/api/instances/" + url.PathEscape("http://127.0.0.1:99999/") + "/disable",
	} {
		method := http.MethodDelete
		if strings.HasSuffix(p, "/disable") {
			method = http.MethodPost
		}
		if status, body := do(method, p, nil); status != http.StatusBadRequest {
			t.Errorf("%s %s: %d %s, want 400", method, p, status, body)
		}
	}

	// Up to the cap; adding one already there again is no new instance.
	for i := 1; i <= 3; i++ {
		if status, body := add(fmt.Sprintf("http://127.0.0.1:%d/", 1000+i)); status != http.StatusCreated {
			t.Fatalf("adding instance %d of 3: %d %s", i, status, body)
		}
	}
	if status, body := add("http://127.0.0.1:1001"); status != http.StatusCreated {
		t.Errorf("adding an instance already added: %d %s, want 201", status, body)
	}
	status, body := add("http://127.0.0.1:1004/")
	if status != http.StatusBadRequest || !strings.Contains(body, "--max-own-instances") {
		t.Errorf("adding a 4th of 3: %d %s, want 400 naming --max-own-instances", status, body)
	}
	// Removing one makes room.
	if status, body := do(http.MethodDelete, "/api/instances/"+url.PathEscape("http://127.0.0.1:1002/"), nil); status != http.StatusOK {
		t.Fatalf("removing one: %d %s", status, body)
	}
	if status, body := add("http://127.0.0.1:1004/"); status != http.StatusCreated {
		t.Errorf("adding after a removal: %d %s, want 201", status, body)
	}
	// And one removed may not come back past the cap.
	if status, body := add("http://127.0.0.1:1002/"); status != http.StatusBadRequest {
		t.Errorf("re-adding a removed one past the cap: %d %s, want 400", status, body)
	}
}
