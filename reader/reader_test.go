package reader

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/searxgate/searxgate/internal/clock"
	"github.com/searxgate/searxgate/internal/nettest"
)

// publicIP is a public address no test ever reaches: the test dialer sends
// every connection to the test server on 127.0.0.1.
const publicIP = "93.184.215.14"

// site serves the pages the tests read, on 127.0.0.1.
func site(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	article, err := os.ReadFile("testdata/article.html")
	if err != nil {
		t.Fatal(err)
	}
	var hits atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/article", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Header.Get("Cookie") != "" {
			t.Errorf("the reader sent a cookie: %q", r.Header.Get("Cookie"))
		}
		if ua := r.Header.Get("User-Agent"); ua != "searxgate/test (+ops@example.org)" {
			t.Errorf("User-Agent %q", ua)
		}
		http.SetCookie(w, &http.Cookie{Name: "track", Value: "1"})
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(article)
	})
	mux.HandleFunc("/notes.txt", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("plain notes\nline two\n"))
	})
	mux.HandleFunc("/readme.md", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/markdown")
		_, _ = w.Write([]byte("# Title\n\nintro\n\n## Install\n\nrun it\n\n### Details\n\nmore\n\n## Use\n\nuse it\n"))
	})
	mux.HandleFunc("/file.pdf", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write([]byte("%PDF-1.4"))
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<p>" + strings.Repeat("x", 4096) + "</p>"))
	})
	mux.HandleFunc("/big-chunked", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		for range 8 {
			_, _ = w.Write([]byte(strings.Repeat("y", 1024)))
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "gone", http.StatusNotFound)
	})
	mux.HandleFunc("/to-loopback", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:"+portOf(r)+"/article", http.StatusFound)
	})
	mux.HandleFunc("/to-internal", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://internal.test:"+portOf(r)+"/article", http.StatusFound)
	})
	mux.HandleFunc("/to-article", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/article", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/to-ftp", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "ftp://public.test/x", http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, &hits
}

func portOf(r *http.Request) string {
	_, p, _ := net.SplitHostPort(r.Host)
	return p
}

// publicReader reads as a searxgate without --allow-private would, with
// public.test a public name whose connections the test sends to srv.
func publicReader(t *testing.T, srv *httptest.Server, mod func(*Config)) (*Reader, string) {
	t.Helper()
	target := srv.Listener.Addr().String()
	_, port, _ := net.SplitHostPort(target)
	cfg := Config{
		UserAgent: "searxgate/test (+ops@example.org)",
		Resolver:  nettest.NewResolver(nettest.Names{"public.test": publicIP, "internal.test": "10.1.2.3"}),
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, _ := net.SplitHostPort(addr)
			if host != publicIP {
				return nil, fmt.Errorf("test dialer: refusing %s", addr)
			}
			var d net.Dialer
			return d.DialContext(ctx, network, target)
		},
	}
	if mod != nil {
		mod(&cfg)
	}
	return New(cfg), "http://public.test:" + port
}

func TestReadArticle(t *testing.T) {
	srv, hits := site(t)
	r, base := publicReader(t, srv, nil)
	res, err := r.Read(context.Background(), Request{URL: base + "/article#frag"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Tidal locking happens", "bulges are dragged", "Pluto and Charon", "## How it happens",
		"(" + base + "/physics/torque)"} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("content lacks %q:\n%s", want, res.Content)
		}
	}
	for _, junk := range []string{"SCRIPT-SECRET", "NAV-NEWS", "NAV-SHOP", "COOKIE-BANNER", "ASIDE-RELATED", "FOOTER-COPYRIGHT", "HEADER-BRAND", "font-family", "Accept all"} {
		if strings.Contains(res.Content, junk) {
			t.Errorf("content keeps %q:\n%s", junk, res.Content)
		}
	}
	if res.Title != "Tidal locking explained | Example Science" || res.ContentType != "text/html" || res.Cached {
		t.Errorf("title %q type %q cached %v", res.Title, res.ContentType, res.Cached)
	}
	// A second read, of another part, comes from the cache.
	again, err := r.Read(context.Background(), Request{URL: base + "/article", ReadHeadings: true})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Cached || hits.Load() != 1 {
		t.Errorf("cached %v, fetches %d", again.Cached, hits.Load())
	}
	// (readability keeps the title apart; the page's h1 is put back.)
	if strings.Join(again.Headings, "|") != "# Tidal locking explained|## How it happens|## Other locked bodies" {
		t.Errorf("headings %q", again.Headings)
	}
	sec, err := r.Read(context.Background(), Request{URL: base + "/article", Section: "how it"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sec.Content, "## How it happens") || strings.Contains(sec.Content, "Pluto") {
		t.Errorf("section:\n%s", sec.Content)
	}
	// A redirect is followed, and the page is what the final URL holds.
	red, err := r.Read(context.Background(), Request{URL: base + "/to-article"})
	if err != nil {
		t.Fatal(err)
	}
	if red.URL != base+"/article" {
		t.Errorf("final URL %q", red.URL)
	}
}

func TestReadPassThrough(t *testing.T) {
	srv, _ := site(t)
	r, base := publicReader(t, srv, nil)
	res, err := r.Read(context.Background(), Request{URL: base + "/notes.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != "plain notes\nline two" || res.ContentType != "text/plain" {
		t.Errorf("%q %q", res.Content, res.ContentType)
	}
	md, err := r.Read(context.Background(), Request{URL: base + "/readme.md", Section: "install"})
	if err != nil {
		t.Fatal(err)
	}
	if md.Content != "## Install\n\nrun it\n\n### Details\n\nmore" {
		t.Errorf("section %q", md.Content)
	}
}

func TestReadErrors(t *testing.T) {
	srv, _ := site(t)
	r, base := publicReader(t, srv, func(c *Config) { c.MaxBytes = 2048; c.PerHostPerMinute = 1000 })
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	for _, tc := range []struct {
		url  string
		want error
		says string
	}{
		{"ftp://public.test/x", ErrBadURL, "only http:// and https://"},
		{"not a url", ErrBadURL, ""},
		{"http:///nohost", ErrBadURL, "no host"},
		{"http://user:pw@public.test/", ErrBadURL, "credentials"},
		{"http://127.0.0.1:" + port + "/article", ErrPrivate, "--reader-allow-private"},
		{"http://localhost:" + port + "/article", ErrPrivate, ""},
		{"http://internal.test:" + port + "/article", ErrPrivate, "10.1.2.3"},
		{base + "/to-loopback", ErrPrivate, "127.0.0.1"},
		{base + "/to-internal", ErrPrivate, "10.1.2.3"},
		{base + "/to-ftp", ErrBadURL, ""},
		{base + "/loop", ErrRedirects, ""},
		{base + "/big", ErrTooLarge, "2048"},
		{base + "/big-chunked", ErrTooLarge, ""},
		{base + "/file.pdf", ErrType, "/file.pdf is a PDF searxgate cannot read"},
		{base + "/missing", ErrStatus, "404"},
		{"http://nowhere.test/", ErrUnreachable, "does not resolve"},
	} {
		_, err := r.Read(context.Background(), Request{URL: tc.url})
		if !errors.Is(err, tc.want) || !strings.Contains(fmt.Sprint(err), tc.says) {
			t.Errorf("%s: %v, want %v saying %q", tc.url, err, tc.want, tc.says)
		}
	}
}

func TestReadUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	r := New(Config{AllowPrivate: true})
	_, err = r.Read(context.Background(), Request{URL: "http://" + addr + "/"})
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "refused") {
		t.Errorf("%v", err)
	}
}

func TestReadTimeout(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	r := New(Config{AllowPrivate: true, Timeout: 50 * time.Millisecond})
	_, err := r.Read(context.Background(), Request{URL: srv.URL})
	if !errors.Is(err, ErrTimeout) {
		t.Errorf("%v", err)
	}
}

func TestPoliteness(t *testing.T) {
	srv, hits := site(t)
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	var admitted []string
	r, base := publicReader(t, srv, func(c *Config) {
		c.PerHostPerMinute = 5 // a burst of 1
		c.Clock = clk
		c.Admit = func(client string, _ time.Time) (bool, time.Duration) {
			admitted = append(admitted, client)
			return client != "greedy", 7 * time.Second
		}
	})
	if _, err := r.Read(context.Background(), Request{URL: base + "/article", Client: "a"}); err != nil {
		t.Fatal(err)
	}
	// Cached: no admission, no fetch.
	if _, err := r.Read(context.Background(), Request{URL: base + "/article", Client: "a"}); err != nil {
		t.Fatal(err)
	}
	var busy *BusyError
	_, err := r.Read(context.Background(), Request{URL: base + "/notes.txt", Client: "a"})
	if !errors.As(err, &busy) || busy.RetryAfter != 12*time.Second || !strings.Contains(err.Error(), "retry in 12 s") {
		t.Fatalf("%v", err)
	}
	clk.Advance(12 * time.Second)
	if _, err := r.Read(context.Background(), Request{URL: base + "/notes.txt", Client: "a"}); err != nil {
		t.Fatal(err)
	}
	var lim *LimitedError
	_, err = r.Read(context.Background(), Request{URL: base + "/readme.md", Client: "greedy"})
	if !errors.As(err, &lim) || !strings.Contains(err.Error(), "retry in 7 s") {
		t.Fatalf("%v", err)
	}
	if strings.Join(admitted, ",") != "a,a,a,greedy" || hits.Load() != 1 {
		t.Errorf("admitted %q, article fetches %d", admitted, hits.Load())
	}
}

func TestCacheBounds(t *testing.T) {
	c := newCache(2, 100)
	now := time.Unix(0, 0)
	for _, k := range []string{"a", "b", "c"} {
		c.put(k, &Page{Markdown: "x"}, now.Add(time.Minute))
	}
	if _, ok := c.get("a", now); ok || c.len() != 2 {
		t.Errorf("oldest kept, len %d", c.len())
	}
	if _, ok := c.get("c", now.Add(time.Minute)); ok {
		t.Error("expired entry served")
	}
	c.put("huge", &Page{Markdown: strings.Repeat("x", 200)}, now.Add(time.Minute))
	if _, ok := c.get("huge", now); ok {
		t.Error("entry over the byte bound kept")
	}
}

func TestView(t *testing.T) {
	p := &Page{URL: "u", Markdown: "# A\n\néèê text\n\n```\n# not a heading\n```\n\n## B\n\nb"}
	res, err := View(p, Request{StartChar: 5, MaxLength: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != "éèê" || res.NextChar != 8 {
		t.Errorf("%q next %d", res.Content, res.NextChar)
	}
	if hs := Headings(p.Markdown); len(hs) != 2 || hs[1].Text != "B" {
		t.Errorf("headings %+v", hs)
	}
	if _, err := View(p, Request{StartChar: 1000}); !errors.Is(err, ErrPastEnd) {
		t.Errorf("%v", err)
	}
	_, err = View(p, Request{Section: "zzz"})
	if !errors.Is(err, ErrNoSection) || !strings.Contains(err.Error(), `"A", "B"`) {
		t.Errorf("%v", err)
	}
}

// TestPolitenessPerServer: names that resolve to one server share its
// minute; redirects count against it too; a page's headers are bounded;
// javascript: and data: links do not reach the Markdown.
func TestPolitenessPerServer(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><head><title>Links</title></head><body><article><h1>Links</h1>`+
			`<p>A <a href="javascript:alert(1)">script link</a>, a <a href=" JaVa&#x09;script:alert(2)">spaced one</a>, `+
			`a <a href="data:text/html,hi">data link</a>, an image <img src="data:image/png;base64,AAAA" alt="pixel"> `+
			`and a <a href="https://example.org/fine">fine link</a> in a paragraph long enough to be the article's own text.</p>`+
			`</article></body></html>`)
	})
	mux.HandleFunc("/hop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/page", http.StatusFound) })
	mux.HandleFunc("/fat-headers", func(w http.ResponseWriter, r *http.Request) {
		for i := range 200 {
			w.Header().Set(fmt.Sprintf("X-Pad-%d", i), strings.Repeat("x", 1000))
		}
		fmt.Fprint(w, "hi")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	target := srv.Listener.Addr().String()
	_, port, _ := net.SplitHostPort(target)
	toSrv := func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, target)
	}
	r := New(Config{
		UserAgent:        "searxgate/test",
		PerHostPerMinute: 5, // a burst of 1
		Resolver:         nettest.NewResolver(nettest.Names{"one.test": publicIP, "two.test": publicIP}),
		Dial:             toSrv,
	})
	var busy *BusyError
	if _, err := r.Read(context.Background(), Request{URL: "http://one.test:" + port + "/page"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Read(context.Background(), Request{URL: "http://two.test:" + port + "/page?x"}); !errors.As(err, &busy) {
		t.Errorf("a second name for the same server read at once: %v, want busy", err)
	}

	r2 := New(Config{UserAgent: "searxgate/test", PerHostPerMinute: 5, Resolver: nettest.NewResolver(nettest.Names{"one.test": publicIP}), Dial: toSrv})
	if _, err := r2.Read(context.Background(), Request{URL: "http://one.test:" + port + "/hop"}); !errors.As(err, &busy) {
		t.Errorf("a redirect was not charged: %v, want busy after one request's budget", err)
	}

	r3 := New(Config{UserAgent: "searxgate/test", Resolver: nettest.NewResolver(nettest.Names{"one.test": publicIP}), Dial: toSrv})
	if _, err := r3.Read(context.Background(), Request{URL: "http://one.test:" + port + "/fat-headers"}); err == nil {
		t.Error("200 KB of response headers were read")
	}
	res, err := r3.Read(context.Background(), Request{URL: "http://one.test:" + port + "/page"})
	if err != nil {
		t.Fatal(err)
	}
	md := res.Content
	for _, bad := range []string{"javascript", "JaVa", "data:"} {
		if strings.Contains(md, bad) {
			t.Errorf("the Markdown keeps %q:\n%s", bad, md)
		}
	}
	if !strings.Contains(md, "script link") || !strings.Contains(md, "(https://example.org/fine)") {
		t.Errorf("link texts or the fine link lost:\n%s", md)
	}
}
