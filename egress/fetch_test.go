package egress

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/searxgate/searxgate/internal/nettest"
)

// site is a test server on 127.0.0.1 that the fetcher reaches under public
// addresses: names resolve through siteNames, and every connection the guard
// allows is routed to the server. It records the addresses dialled.
type site struct {
	srv   *httptest.Server
	mu    sync.Mutex // guards dials
	dials []string
}

func startSite(t *testing.T, h http.Handler) *site {
	t.Helper()
	s := &site{srv: httptest.NewServer(h)}
	t.Cleanup(s.srv.Close)
	return s
}

func (s *site) connect(ctx context.Context, network, addr string) (net.Conn, error) {
	s.mu.Lock()
	s.dials = append(s.dials, addr)
	s.mu.Unlock()
	var d net.Dialer
	return d.DialContext(ctx, network, s.srv.Listener.Addr().String())
}

func (s *site) dialed() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.dials
	s.dials = nil
	return out
}

var siteNames = nettest.NewResolver(nettest.Names{"a.example": "93.184.216.34", "b.example": "93.184.216.35", "inside.example": "10.0.0.9"})

// hops answers /hop/N with a redirect to /hop/N-1, and /hop/0 with "done".
func hops(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hop/"))
	if n > 0 {
		http.Redirect(w, r, "/hop/"+strconv.Itoa(n-1), http.StatusFound)
		return
	}
	_, _ = w.Write([]byte("done"))
}

// TestFetcherGuardsEveryHop: the URL and each redirect are checked by the
// guard, every name by the dialer, and the dialer's switch is the
// fetcher's own.
func TestFetcherGuardsEveryHop(t *testing.T) {
	var s *site
	s = startSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			http.SetCookie(w, &http.Cookie{Name: "track", Value: "1"})
			_, _ = w.Write([]byte("ok " + r.Header.Get("User-Agent") + " " + r.Header.Get("Cookie")))
		case "/to-b":
			http.Redirect(w, r, "http://b.example/ok", http.StatusFound)
		case "/to-loopback":
			http.Redirect(w, r, s.srv.URL+"/ok", http.StatusFound)
		case "/to-inside":
			http.Redirect(w, r, "http://inside.example/ok", http.StatusFound)
		case "/to-ftp":
			http.Redirect(w, r, "ftp://b.example/ok", http.StatusFound)
		}
	}))
	// A shared dialer that allows private addresses: the fetcher's own
	// switch (off) is what counts.
	shared := &Dialer{AllowPrivate: true, Resolver: siteNames, Connect: s.connect}
	f := NewFetcher(Config{Dialer: shared, UserAgent: "searxgate/test"})
	ctx := context.Background()
	get := func(u string) (string, error) {
		resp, err := f.Get(ctx, u, nil)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := resp.ReadAll()
		return string(b), err
	}

	if body, err := get("http://a.example/ok"); err != nil || body != "ok searxgate/test " {
		t.Fatalf("a public name: %q %v", body, err)
	}
	if body, err := get("http://a.example/ok"); err != nil || strings.Contains(body, "track") {
		t.Errorf("a cookie was kept: %q %v", body, err)
	}
	if got := s.dialed(); !slices.Contains(got, "93.184.216.34:80") || len(got) > 2 {
		t.Errorf("dialled %v", got)
	}
	if body, err := get("http://a.example/to-b"); err != nil || !strings.HasPrefix(body, "ok") {
		t.Errorf("a redirect to a public name: %q %v", body, err)
	}
	for _, tc := range []struct {
		url  string
		want []error
	}{
		{s.srv.URL + "/ok", []error{ErrPrivateAddress}},
		{"http://localhost/ok", []error{ErrPrivateAddress}},
		{"file:///etc/passwd", []error{ErrScheme}},
		{"http://inside.example/ok", []error{ErrNotPublic}},
		{"http://a.example/to-loopback", []error{ErrRedirect, ErrPrivateAddress}},
		{"http://a.example/to-ftp", []error{ErrRedirect, ErrScheme}},
		{"http://a.example/to-inside", []error{ErrNotPublic}},
	} {
		s.dialed()
		_, err := get(tc.url)
		for _, w := range tc.want {
			if !errors.Is(err, w) {
				t.Errorf("%s: %v, want %v", tc.url, err, w)
			}
		}
		for _, a := range s.dialed() {
			if !strings.HasPrefix(a, "93.184.216.") {
				t.Errorf("%s: dialled %s", tc.url, a)
			}
		}
	}
	var re *RedirectError
	if _, err := get("http://a.example/to-loopback"); !errors.As(err, &re) || re.To.Host != s.srv.Listener.Addr().String() {
		t.Errorf("the refused redirect does not say where it pointed: %v", err)
	}

	open := NewFetcher(Config{AllowPrivate: true, Resolver: siteNames, Connect: s.connect})
	if resp, err := open.Get(ctx, "http://a.example/to-inside", nil); err != nil || resp.StatusCode != 200 {
		t.Errorf("with AllowPrivate, a private name: %v", err)
	} else {
		resp.Body.Close()
	}
}

// TestFetcherRedirectsAndSize: MaxRedirects redirects are followed and one
// more is refused; OnRedirect sees each hop; the body cap holds whether
// the size is announced or not.
func TestFetcherRedirectsAndSize(t *testing.T) {
	s := startSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/hop/"):
			hops(w, r)
		case r.URL.Path == "/big":
			_, _ = w.Write([]byte(strings.Repeat("x", 2048)))
		case r.URL.Path == "/big-chunked":
			for range 4 {
				_, _ = w.Write([]byte(strings.Repeat("x", 512)))
				w.(http.Flusher).Flush()
			}
		case r.URL.Path == "/fits":
			_, _ = w.Write([]byte(strings.Repeat("x", 1024)))
		}
	}))
	var (
		mu   sync.Mutex // guards seen
		seen []string
	)
	f := NewFetcher(Config{Resolver: siteNames, Connect: s.connect, MaxRedirects: 3, MaxBytes: 1024,
		OnRedirect: func(req *http.Request) error {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, req.URL.Path)
			if req.URL.Path == "/hop/refuse" {
				return errors.New("not this one")
			}
			return nil
		}})
	ctx := context.Background()
	read := func(path string) (int, error) {
		resp, err := f.Get(ctx, "http://a.example"+path, nil)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		b, err := resp.ReadAll()
		return len(b), err
	}
	if n, err := read("/hop/3"); err != nil || n != 4 {
		t.Errorf("3 redirects of 3: %d %v", n, err)
	}
	mu.Lock()
	if !slices.Equal(seen, []string{"/hop/2", "/hop/1", "/hop/0"}) {
		t.Errorf("OnRedirect saw %v", seen)
	}
	mu.Unlock()
	if _, err := read("/hop/4"); !errors.Is(err, ErrRedirect) || !errors.Is(err, ErrTooManyRedirects) {
		t.Errorf("4 redirects of 3: %v", err)
	}
	if n, err := read("/fits"); err != nil || n != 1024 {
		t.Errorf("a body of MaxBytes: %d %v", n, err)
	}
	for _, p := range []string{"/big", "/big-chunked"} {
		if _, err := read(p); !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: %v, want ErrTooLarge", p, err)
		}
	}
	resp, err := f.Get(ctx, "http://a.example/big", nil)
	if err != nil || !resp.Announced() {
		t.Errorf("an announced 2048 bytes: %v", err)
	}
	if resp != nil {
		resp.Body.Close()
	}
}

// TestFetcherTimeout: Timeout bounds a fetch whose server never answers.
func TestFetcherTimeout(t *testing.T) {
	release := make(chan struct{})
	s := startSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer close(release)
	f := NewFetcher(Config{Resolver: siteNames, Connect: s.connect, Timeout: 50 * time.Millisecond})
	_, err := f.Get(context.Background(), "http://a.example/hang", nil)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("a server that never answers: %v, want a timeout", err)
	}
}

// TestFetcherProxyAndRoots: the fetcher reaches a TLS site under a private
// CA through the outbound proxy, asking it for the checked address, and
// trusts the CA only when Roots has it.
func TestFetcherProxyAndRoots(t *testing.T) {
	// Started first, so that it stops last: the site's close ends the
	// tunnels the proxy holds.
	px := startConnectProxy(t, http.StatusOK)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("secure"))
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	roots, err := Roots(ca)
	if err != nil {
		t.Fatal(err)
	}
	via := func(host, port string) (*url.URL, error) { return &url.URL{Scheme: "http", Host: px.addr}, nil }
	// The test certificate names example.com and 127.0.0.1.
	names := nettest.NewResolver(nettest.Names{"example.com": "127.0.0.1"})
	tlsCfg := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	f := NewFetcher(Config{AllowPrivate: true, Resolver: names, Proxy: via, TLS: tlsCfg})
	resp, err := f.Get(context.Background(), "https://example.com:"+port+"/", nil)
	if err != nil {
		t.Fatalf("through the proxy, under the CA: %v", err)
	}
	b, err := resp.ReadAll()
	resp.Body.Close()
	if err != nil || string(b) != "secure" {
		t.Errorf("%q %v", b, err)
	}
	if asked, _ := px.seen(); !slices.Equal(asked, []string{"CONNECT 127.0.0.1:" + port}) {
		t.Errorf("the proxy was asked %v, want the checked address", asked)
	}

	without := NewFetcher(Config{AllowPrivate: true, Resolver: names, Proxy: via})
	if _, err := without.Get(context.Background(), "https://example.com:"+port+"/", nil); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without the CA: %v, want a certificate error", err)
	}

	if p, err := Roots(""); p != nil || err != nil {
		t.Errorf("Roots(\"\") = %v, %v", p, err)
	}
	empty := filepath.Join(t.TempDir(), "empty.pem")
	_ = os.WriteFile(empty, []byte("not a certificate"), 0o600)
	if _, err := Roots(empty); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("a file without certificates: %v", err)
	}
}
