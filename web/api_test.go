package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/sim"
)

// fakeOperator records the operator's calls.
type fakeOperator struct {
	mu    sync.Mutex // guards calls and known
	calls []string
	known map[string]bool
	fail  error
}

func (o *fakeOperator) log(s string) {
	o.mu.Lock()
	o.calls = append(o.calls, s)
	o.mu.Unlock()
}

func (o *fakeOperator) Add(_ context.Context, raw string) (string, error) {
	o.log("add " + raw)
	if o.fail != nil {
		return "", o.fail
	}
	if !strings.HasPrefix(raw, "https://") {
		return "", fmt.Errorf("%w: scheme of %q", ErrBadInstance, raw)
	}
	u := strings.TrimSuffix(raw, "/") + "/"
	o.mu.Lock()
	o.known[u] = true
	o.mu.Unlock()
	return u, nil
}

func (o *fakeOperator) Remove(raw string) (bool, error) {
	o.log("remove " + raw)
	o.mu.Lock()
	defer o.mu.Unlock()
	was := o.known[raw]
	delete(o.known, raw)
	return was, o.fail
}

func (o *fakeOperator) SetDisabled(raw string, disabled bool) (bool, error) {
	o.log(fmt.Sprintf("disabled=%v %s", disabled, raw))
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.known[raw], o.fail
}

func (o *fakeOperator) Reset() error { o.log("reset"); return o.fail }

func (o *fakeOperator) took() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := o.calls
	o.calls = nil
	return out
}

func TestInstanceAPI(t *testing.T) {
	const token = "s3cret-token"
	enc := url.PathEscape("https://a.example/")
	tests := []struct {
		name         string
		token        string // configured
		method, path string
		body, ctype  string
		auth         string
		status       int
		calls        string // the operator calls made, joined by ";"
		contains     string
	}{
		{"list needs no token", "", "GET", "/api/instances", "", "", "", 200, "", `"url":"https://listed.example/"`},
		{"writes off without a token", "", "POST", "/api/instances", `{"url":"https://b.example"}`, "application/json", "Bearer x", 403, "", "SEARXGATE_ADMIN_TOKEN"},
		{"delete off without a token", "", "DELETE", "/api/instances/" + enc, "", "", "", 403, "", "--admin-token"},
		{"reset off without a token", "", "POST", "/api/pool/reset", "", "", "Bearer " + token, 403, "", "--admin-token"},
		{"no Authorization", token, "POST", "/api/instances", `{"url":"https://b.example"}`, "application/json", "", 401, "", "Bearer"},
		{"wrong token", token, "POST", "/api/pool/reset", "", "", "Bearer nope", 401, "", "Bearer"},
		{"token prefix", token, "POST", "/api/pool/reset", "", "", "Bearer s3cret", 401, "", "Bearer"},
		{"wrong scheme", token, "POST", "/api/pool/reset", "", "", "Basic " + token, 401, "", "Bearer"},
		{"add by JSON", token, "POST", "/api/instances", `{"url":"https://b.example"}`, "application/json", "Bearer " + token, 201, "add https://b.example", `"url":"https://b.example/"`},
		{"add by form", token, "POST", "/api/instances", "url=https%3A%2F%2Fc.example%2F", "", "bearer " + token, 201, "add https://c.example/", `"status":"added"`},
		{"add a bad URL", token, "POST", "/api/instances", `{"url":"gopher://d.example"}`, "application/json", "Bearer " + token, 400, "add gopher://d.example", "scheme"},
		{"add nothing", token, "POST", "/api/instances", `{}`, "application/json", "Bearer " + token, 400, "", `{\"url\"`},
		{"remove, encoded", token, "DELETE", "/api/instances/" + enc, "", "", "Bearer " + token, 200, "remove https://a.example/", `"status":"removed"`},
		{"remove unknown", token, "DELETE", "/api/instances/" + url.PathEscape("https://zz.example/"), "", "", "Bearer " + token, 404, "remove https://zz.example/", "not in the pool"},
		{"disable, encoded", token, "POST", "/api/instances/" + enc + "/disable", "", "", "Bearer " + token, 200, "disabled=true https://a.example/", `"status":"disabled"`},
		{"enable, unencoded", token, "POST", "/api/instances/https://a.example//enable", "", "", "Bearer " + token, 200, "disabled=false https://a.example/", `"status":"enabled"`},
		{"enable unknown", token, "POST", "/api/instances/" + url.PathEscape("https://zz.example/") + "/enable", "", "", "Bearer " + token, 404, "disabled=false https://zz.example/", "not in the pool"},
		{"GET on an instance", token, "GET", "/api/instances/" + enc, "", "", "Bearer " + token, 405, "", ""},
		{"reset", token, "POST", "/api/pool/reset", "", "", "Bearer " + token, 200, "reset", `"status":"reset"`},
	}
	p := pool.New(pool.Config{})
	p.Add("https://listed.example/", pool.Public)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op := &fakeOperator{known: map[string]bool{"https://a.example/": true}}
			_, c := serve(t, Config{Search: &fakeSearch{}, Pool: p, Operator: op, AdminToken: tt.token})
			var h []string
			if tt.auth != "" {
				h = append(h, "Authorization", tt.auth)
			}
			if tt.ctype != "" {
				h = append(h, "Content-Type", tt.ctype)
			}
			r := c.do(tt.method, tt.path, tt.body, h...)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.body)
			}
			if !strings.Contains(r.body, tt.contains) {
				t.Errorf("body %q lacks %q", r.body, tt.contains)
			}
			if got := strings.Join(op.took(), ";"); got != tt.calls {
				t.Errorf("operator calls %q, want %q", got, tt.calls)
			}
			if r.status == 401 && r.header["Www-Authenticate"] == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}
}

func TestInstanceAPIServerErrors(t *testing.T) {
	op := &fakeOperator{known: map[string]bool{}, fail: errors.New("disk full")}
	_, c := serve(t, Config{Search: &fakeSearch{}, Operator: op, AdminToken: "t"})
	r := c.do("POST", "/api/pool/reset", "", "Authorization", "Bearer t")
	if r.status != 500 || strings.Contains(r.body, "disk full") {
		t.Fatalf("an operator's failure: %d %s (want 500, without the internal error)", r.status, r.body)
	}
	_, c = serve(t, Config{Search: &fakeSearch{}, AdminToken: "t"})
	if r := c.do("POST", "/api/pool/reset", "", "Authorization", "Bearer t"); r.status != 503 {
		t.Fatalf("no operator: %d %s", r.status, r.body)
	}
}

func TestInstanceListHasThePoolsFieldNames(t *testing.T) {
	p := pool.New(pool.Config{})
	p.Add("https://own.example/", pool.Own)
	p.Add("https://pub.example/", pool.Public)
	p.Disable("https://pub.example/")
	_, c := serve(t, Config{Search: &fakeSearch{}, Pool: p})
	r := c.get("/api/instances")
	var list []map[string]any
	if err := json.Unmarshal([]byte(r.body), &list); err != nil || len(list) != 2 {
		t.Fatalf("%v: %s", err, r.body)
	}
	want, _ := json.Marshal(p.Snapshot())
	var wantList []map[string]any
	_ = json.Unmarshal(want, &wantList)
	for i := range list {
		for k := range wantList[i] {
			if _, ok := list[i][k]; !ok {
				t.Errorf("instance %d lacks the pool's field %q", i, k)
			}
		}
	}
	if list[0]["url"] != "https://own.example/" || list[0]["tier"] != "own" || list[1]["disabled"] != true {
		t.Errorf("list %v", list)
	}
}

func TestInstancePath(t *testing.T) {
	tests := []struct {
		raw, inst, action string
		ok                bool
	}{
		{"/api/instances/https%3A%2F%2Fa.example%2F", "https://a.example/", "", true},
		{"/api/instances/https%3A%2F%2Fa.example%2F/disable", "https://a.example/", "disable", true},
		{"/api/instances/https%3A%2F%2Fa.example%2Fsub%2F/enable", "https://a.example/sub/", "enable", true},
		{"/api/instances/https://a.example/", "https://a.example/", "", true},
		{"/api/instances/", "", "", false},
		{"/api/instances//disable", "", "", false},
		{"/api/instances/%zz", "", "", false},
		{"/other", "", "", false},
	}
	for _, tt := range tests {
		inst, action, ok := instancePath([]byte(tt.raw))
		if inst != tt.inst || action != tt.action || ok != tt.ok {
			t.Errorf("instancePath(%q) = %q, %q, %v; want %q, %q, %v", tt.raw, inst, action, ok, tt.inst, tt.action, tt.ok)
		}
	}
}

// POST /api/cache/purge is a write like the others: it needs the token,
// and then drops every cached answer.
func TestCachePurgeAPI(t *testing.T) {
	live := startLive(t, []sim.InstanceConfig{{Behaviour: sim.Fast, Latency: -1, JSON: true}})
	op := &fakeOperator{known: map[string]bool{}}
	_, c := serve(t, Config{Proxy: live.proxy, Pool: live.pool, Operator: op, AdminToken: "t"})
	if r := c.get("/search?q=cached+words&format=json"); r.status != 200 {
		t.Fatalf("search: %d %s", r.status, r.body)
	}
	if r := c.get("/search?q=cached+words&format=json"); r.header[HeaderCache] != "hit" {
		t.Fatalf("the second search was not a cache hit: %q", r.header[HeaderCache])
	}
	for _, tt := range []struct {
		method, auth string
		status       int
	}{
		{"POST", "", 401},
		{"POST", "Bearer nope", 401},
		{"GET", "Bearer t", 405},
	} {
		var h []string
		if tt.auth != "" {
			h = []string{"Authorization", tt.auth}
		}
		if r := c.do(tt.method, "/api/cache/purge", "", h...); r.status != tt.status {
			t.Fatalf("%s with %q: %d, want %d: %s", tt.method, tt.auth, r.status, tt.status, r.body)
		}
	}
	if r := c.get("/search?q=cached+words&format=json"); r.header[HeaderCache] != "hit" {
		t.Fatal("a refused purge dropped the cache")
	}
	r := c.do("POST", "/api/cache/purge", "", "Authorization", "Bearer t")
	if r.status != 200 || !strings.Contains(r.body, `"status":"purged"`) || !strings.Contains(r.body, `"entries":1`) {
		t.Fatalf("purge: %d %s", r.status, r.body)
	}
	if r := c.get("/search?q=cached+words&format=json"); r.header[HeaderCache] == "hit" {
		t.Fatal("served from the cache after a purge")
	}
	// Without a token configured, writes are off.
	_, c = serve(t, Config{Proxy: live.proxy, Operator: op})
	if r := c.do("POST", "/api/cache/purge", "", "Authorization", "Bearer t"); r.status != 403 {
		t.Fatalf("purge without --admin-token: %d %s", r.status, r.body)
	}
}
