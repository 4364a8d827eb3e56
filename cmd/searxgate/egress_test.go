package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/searxgate/searxgate/internal/nettest"
	"github.com/searxgate/searxgate/mcp"
	"github.com/searxgate/searxgate/sim"
)

// startEnv runs searxgate with args and the environment env (the proxy
// variables among it), logging into logs, until the test ends; resolver
// answers its lookups.
func startEnv(t *testing.T, resolver ipResolver, env map[string]string, logs io.Writer, args ...string) (*gateway, string) {
	t.Helper()
	data := t.TempDir()
	cfg, err := parseConfig(append([]string{"--listen", "127.0.0.1:0", "--data", data}, args...),
		func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.resolver = resolver
	g, err := runGateway(t, cfg, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-g.app.checked:
	case <-time.After(30 * time.Second):
		t.Fatal("the start-up check did not end")
	}
	return g, data
}

// TestOwnInstanceBasicAuth: an own instance behind HTTP basic auth
// (--instance http://user:password@…) answers, gets the credentials on
// every request, and the password appears nowhere: not in the logs, the
// headers, /status, /metrics, the instance API, the MCP answer or the
// data folder.
func TestOwnInstanceBasicAuth(t *testing.T) {
	const user, pw = "ops", "s3cr3t-Pa55"
	fleet, _ := startFleet(t, 41, []sim.InstanceConfig{{ID: "home", Behaviour: sim.Fast, Latency: -1, JSON: true, Autocomplete: "duckduckgo"}})
	backend, _ := url.Parse(fleet.Instance("home").URL())
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pw))
	var authed, refused atomic.Int64
	rp := httputil.NewSingleHostReverseProxy(backend)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != want {
			refused.Add(1)
			w.Header().Set("WWW-Authenticate", `Basic realm="searx"`)
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		authed.Add(1)
		r.Header.Del("Authorization")
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	withCreds := strings.Replace(front.URL, "http://", "http://"+user+":"+pw+"@", 1) + "/"

	var logs logLines
	g, data := startEnv(t, &failResolver{}, nil, &logs, "--allow-private", "--directory", "none", "--instance", withCreds)
	plain := front.URL + "/"

	a := g.get(t, "/search?q=tidal+locking&format=json", nil)
	if a.status != 200 || a.header.Get("X-Searxgate-Instance") != plain {
		t.Fatalf("search: %d, instance %q\n%s", a.status, a.header.Get("X-Searxgate-Instance"), logs.String())
	}
	s := connectMCP(t, g, nil)
	res := callTool(t, s, mcp.ToolSearch, map[string]any{"query": "another search", "response_format": "json"})
	if res.IsError || !strings.Contains(resultText(res), `"instance": "`+plain+`"`) {
		t.Errorf("MCP search: %v %s", res.IsError, resultText(res))
	}
	if sug := callTool(t, s, mcp.ToolSuggestions, map[string]any{"query": "tidal"}); sug.IsError {
		t.Errorf("suggestions from the instance behind basic auth: %s", resultText(sug))
	}
	if authed.Load() < 3 || refused.Load() != 0 {
		t.Errorf("the instance saw %d requests with its credentials and %d without", authed.Load(), refused.Load())
	}

	secret := []string{pw, base64.StdEncoding.EncodeToString([]byte(user + ":" + pw)), user + ":" + pw}
	check := func(where string, b []byte) {
		t.Helper()
		for _, x := range secret {
			if bytes.Contains(b, []byte(x)) {
				t.Errorf("%s holds the instance's credentials (%q)", where, x)
			}
		}
	}
	var headers strings.Builder
	_ = a.header.Write(&headers)
	check("the search's headers", []byte(headers.String()))
	check("the search's body", a.body)
	check("the MCP answer", []byte(resultText(res)))
	for _, path := range []string{"/status", "/status.json", "/metrics", "/api/instances", "/config"} {
		r := g.get(t, path, nil)
		if r.status != 200 {
			t.Errorf("%s: %d", path, r.status)
		}
		check(path, r.body)
	}
	if err := g.stop(); err != nil {
		t.Fatal(err)
	}
	check("the logs", []byte(logs.String()))
	files := 0
	_ = filepath.WalkDir(data, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			check(p, b)
			files++
		}
		return nil
	})
	if files == 0 {
		t.Error("the data folder is empty")
	}
}

// tunnelProxy is an HTTP proxy on 127.0.0.1 that opens CONNECT tunnels
// and remembers the targets it was asked for.
type tunnelProxy struct {
	addr  string
	mu    sync.Mutex // guards asked
	asked []string
}

func startTunnelProxy(t *testing.T) *tunnelProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tunnelProxy{addr: ln.Addr().String()}
	var wg sync.WaitGroup
	var mu sync.Mutex // guards open
	open := map[net.Conn]bool{}
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range open {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	track := func(c net.Conn, on bool) {
		mu.Lock()
		defer mu.Unlock()
		if on {
			open[c] = true
		} else {
			delete(open, c)
		}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			track(c, true)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { track(c, false); c.Close() }()
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil || req.Method != http.MethodConnect {
					return
				}
				p.mu.Lock()
				p.asked = append(p.asked, req.Host)
				p.mu.Unlock()
				up, err := net.Dial("tcp", req.Host)
				if err != nil {
					_, _ = io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
					return
				}
				track(up, true)
				defer func() { track(up, false); up.Close() }()
				_, _ = io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
				go func() { _, _ = io.Copy(up, c); up.Close() }()
				_, _ = io.Copy(c, up)
			}()
		}
	}()
	return p
}

func (p *tunnelProxy) targets() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.asked...)
}

// TestOutboundProxy: with HTTPS_PROXY set, the searches to an instance and
// the pages web_url_read fetches go through the proxy, which is asked for
// the address searxgate resolved and checked; NO_PROXY sends a host
// directly but never past the address guard.
func TestOutboundProxy(t *testing.T) {
	fleet, _ := startFleet(t, 42, []sim.InstanceConfig{{ID: "home", Behaviour: sim.Fast, Latency: -1, JSON: true}})
	_, simPort, _ := net.SplitHostPort(fleet.Instance("home").Addr())
	site := pageSite(t)
	_, sitePort, _ := net.SplitHostPort(site.Listener.Addr().String())
	// Names, not loopback addresses: Go's proxy rules never proxy
	// loopback targets.
	names := nettest.NewResolver(nettest.Names{"home.test": "127.0.0.1", "pages.test": "127.0.0.1"})
	px := startTunnelProxy(t)
	var logs logLines
	g, _ := startEnv(t, names, map[string]string{"HTTPS_PROXY": "http://" + px.addr, "NO_PROXY": "direct.test"}, &logs,
		"--allow-private", "--reader-allow-private", "--directory", "none", "--instance", "http://home.test:"+simPort+"/")
	if len(logs.lines("outbound connections go through a proxy")) != 1 {
		t.Errorf("the start did not say a proxy is in use:\n%s", logs.String())
	}
	if a := g.get(t, "/search?q=tidal+locking&format=json", nil); a.status != 200 {
		t.Fatalf("search through the proxy: %d %s\n%s", a.status, a.body, logs.String())
	}
	s := connectMCP(t, g, nil)
	if r := callTool(t, s, mcp.ToolRead, map[string]any{"url": "http://pages.test:" + sitePort + "/article"}); r.IsError {
		t.Errorf("read through the proxy: %s", resultText(r))
	}
	got := strings.Join(px.targets(), " ")
	if !strings.Contains(got, "127.0.0.1:"+simPort) || !strings.Contains(got, "127.0.0.1:"+sitePort) || strings.Contains(got, ".test") {
		t.Errorf("the proxy was asked for %q; want the checked addresses of the instance and of the page", got)
	}

	// Without --reader-allow-private, a loopback target is refused before
	// the proxy hears of it, and a NO_PROXY host is refused too.
	px2 := startTunnelProxy(t)
	names2 := nettest.NewResolver(nettest.Names{"pages.test": "127.0.0.1", "direct.test": "127.0.0.1"})
	g2, _ := startEnv(t, names2, map[string]string{"https_proxy": px2.addr, "no_proxy": "direct.test"}, io.Discard,
		"--allow-private=false", "--directory", "none")
	s2 := connectMCP(t, g2, nil)
	for _, host := range []string{"pages.test", "direct.test"} {
		r := callTool(t, s2, mcp.ToolRead, map[string]any{"url": "http://" + host + ":" + sitePort + "/article"})
		if !r.IsError || !strings.Contains(resultText(r), "--reader-allow-private") {
			t.Errorf("%s without --reader-allow-private: %v %s", host, r.IsError, resultText(r))
		}
	}
	if got := px2.targets(); len(got) != 0 {
		t.Errorf("the proxy heard of refused targets: %q", got)
	}
}

// TestProxySettings: the proxy variables are checked at start, without
// echoing credentials.
func TestProxySettings(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		says string
	}{
		{map[string]string{"HTTPS_PROXY": "https://u:hunter2@proxy.example:3128"}, "HTTPS_PROXY: https:// proxies are not supported"},
		{map[string]string{"HTTP_PROXY": "socks5://u:hunter2@proxy.example:1080"}, "HTTP_PROXY: socks5:// proxies"},
		{map[string]string{"https_proxy": "http://"}, "HTTPS_PROXY: has no host"},
	} {
		_, err := parseConfig(nil, func(k string) string { return tc.env[k] }, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.says) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%v: %v, want an error saying %q without the password", tc.env, err, tc.says)
		}
	}
	c, err := parseConfig(nil, func(k string) string {
		return map[string]string{"HTTPS_PROXY": "proxy.example:3128", "NO_PROXY": "home.example"}[k]
	}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	pf := c.proxyFunc()
	for _, tc := range []struct{ host, port, want string }{
		{"searx.example", "443", "http://proxy.example:3128"},
		{"home.example", "443", ""},
		{"searx.example", "80", ""}, // no HTTP_PROXY
	} {
		u, err := pf(tc.host, tc.port)
		got := ""
		if u != nil {
			got = u.String()
		}
		if err != nil || got != tc.want {
			t.Errorf("%s:%s: %q %v, want %q", tc.host, tc.port, got, err, tc.want)
		}
	}
}

// TestCAFile: an own instance and a page under a private CA are reached
// with --ca-file, and refused (tls) without it.
func TestCAFile(t *testing.T) {
	fleet, _ := startFleet(t, 43, []sim.InstanceConfig{{ID: "home", Behaviour: sim.Fast, Latency: -1, JSON: true}})
	backend, _ := url.Parse(fleet.Instance("home").URL())
	front := httptest.NewTLSServer(httputil.NewSingleHostReverseProxy(backend))
	t.Cleanup(front.Close)
	article, err := os.ReadFile("../../reader/testdata/article.html")
	if err != nil {
		t.Fatal(err)
	}
	pages := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write(article)
	}))
	t.Cleanup(pages.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	var pemBytes []byte
	for _, srv := range []*httptest.Server{front, pages} {
		pemBytes = append(pemBytes, pemOf(srv.Certificate().Raw)...)
	}
	if err := os.WriteFile(ca, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}

	g, _ := startEnv(t, &failResolver{}, nil, io.Discard, "--allow-private", "--reader-allow-private", "--directory", "none", "--instance", front.URL+"/", "--ca-file", ca)
	if a := g.get(t, "/search?q=tidal+locking&format=json", nil); a.status != 200 {
		t.Errorf("search of an instance under the private CA: %d %s", a.status, a.body)
	}
	if r := callTool(t, connectMCP(t, g, nil), mcp.ToolRead, map[string]any{"url": pages.URL + "/article"}); r.IsError {
		t.Errorf("read of a page under the private CA: %s", resultText(r))
	}

	without, _ := startEnv(t, &failResolver{}, nil, io.Discard, "--allow-private", "--directory", "none", "--instance", front.URL+"/")
	if a := without.get(t, "/search?q=tidal+locking&format=json", nil); a.status != 503 || !strings.Contains(string(a.body), "tls") {
		t.Errorf("without --ca-file: %d %s; want a tls failure", a.status, a.body)
	}

	if _, err := NewApp(context.Background(), Config{CAFile: filepath.Join(t.TempDir(), "none.pem")}, slog.New(slog.DiscardHandler)); err == nil ||
		!strings.Contains(err.Error(), "--ca-file (SEARXGATE_CA_FILE)") {
		t.Errorf("a missing --ca-file: %v", err)
	}
}

func pemOf(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// imageLink is the gateway's /image_proxy link for u, signed as its pages
// sign them (HMAC-SHA256 under the key derived from its secret).
func imageLink(g *gateway, u string) string {
	m := hmac.New(sha256.New, imageKey(g.app.cacheSecret()))
	m.Write([]byte(u))
	return "/image_proxy?" + url.Values{"url": {u}, "h": {hex.EncodeToString(m.Sum(nil))}}.Encode()
}

// TestImageProxyEgress: /image_proxy goes out as every fetch does: through
// the outbound proxy, which is asked for the checked address, trusting
// --ca-file; and only past its own switch, --image-proxy-allow-private.
func TestImageProxyEgress(t *testing.T) {
	px := startTunnelProxy(t) // first, so that it stops last
	const png = "\x89PNG\r\n\x1a\nthumbnail"
	img := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = io.WriteString(w, png)
	}))
	t.Cleanup(img.Close)
	_, port, _ := net.SplitHostPort(img.Listener.Addr().String())
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pemOf(img.Certificate().Raw), 0o600); err != nil {
		t.Fatal(err)
	}
	// The test certificate names example.com; a name, not a loopback
	// address, because Go's proxy rules never proxy loopback targets.
	names := nettest.NewResolver(nettest.Names{"example.com": "127.0.0.1"})
	thumb := "https://example.com:" + port + "/thumb.png"
	env := map[string]string{"HTTPS_PROXY": "http://" + px.addr}

	g, _ := startEnv(t, names, env, io.Discard, "--image-proxy-allow-private", "--directory", "none", "--ca-file", ca)
	if a := g.get(t, imageLink(g, thumb), nil); a.status != 200 || string(a.body) != png || a.header.Get("Content-Type") != "image/png" {
		t.Fatalf("an image through the proxy under the private CA: %d %q %q", a.status, a.header.Get("Content-Type"), a.body)
	}
	if got := px.targets(); len(got) != 1 || got[0] != "127.0.0.1:"+port {
		t.Errorf("the proxy was asked for %q; want the checked address 127.0.0.1:%s", got, port)
	}

	without, _ := startEnv(t, names, env, io.Discard, "--image-proxy-allow-private", "--directory", "none")
	if a := without.get(t, imageLink(without, thumb), nil); a.status != 502 {
		t.Errorf("an image under a CA not given with --ca-file: %d, want 502", a.status)
	}

	// The other doors' switches do not open this one.
	before := len(px.targets())
	other, _ := startEnv(t, names, env, io.Discard, "--allow-private", "--reader-allow-private", "--directory", "none", "--ca-file", ca)
	if a := other.get(t, imageLink(other, thumb), nil); a.status != 502 {
		t.Errorf("an image on a private address without --image-proxy-allow-private: %d, want 502", a.status)
	}
	if got := px.targets(); len(got) != before {
		t.Errorf("the proxy heard of a target refused by the guard: %q", got[before:])
	}
}
