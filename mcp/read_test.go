package mcp

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/searxgate/searxgate/internal/nettest"
	"github.com/searxgate/searxgate/reader"
)

// TestReadThroughGuard runs web_url_read with the real reader, as a
// searxgate without --allow-private: public.test is a public name whose
// connections the test sends to a server on 127.0.0.1 (nothing leaves the
// machine); its redirects to loopback and to a private address are refused.
func TestReadThroughGuard(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><head><title>T</title><script>SCRIPT-X</script></head><body><nav>NAV-X</nav>`+
			`<main><h1>T</h1><p>`+strings.Repeat("Readable words about the subject at hand. ", 20)+`</p></main><footer>FOOT-X</footer></body></html>`)
	})
	mux.HandleFunc("/to-loopback", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1/page", http.StatusFound)
	})
	mux.HandleFunc("/to-private", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://internal.test/page", http.StatusFound)
	})
	// The reader's corpus paper: a PDF reads as its text, under a header
	// that says how many pages were read.
	paper, err := os.ReadFile("../reader/testdata/corpus/paper.pdf")
	if err != nil {
		t.Fatal(err)
	}
	mux.HandleFunc("/paper.pdf", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write(paper)
	})
	mux.HandleFunc("/broken.pdf", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write(paper[:len(paper)/2])
	})
	site := httptest.NewServer(mux)
	defer site.Close()
	const publicIP = "93.184.215.14"
	rd := reader.New(reader.Config{
		Resolver: nettest.NewResolver(nettest.Names{"public.test": publicIP, "internal.test": "192.168.7.7"}),
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if host, _, _ := net.SplitHostPort(addr); host != publicIP {
				return nil, fmt.Errorf("test dialer: refusing %s", addr)
			}
			var d net.Dialer
			return d.DialContext(ctx, network, site.Listener.Addr().String())
		},
	})
	_, hs := serve(t, Config{Search: &fakeSearch{}, Read: rd})
	s := connect(t, hs, nil)
	res, text := call(t, s, ToolRead, map[string]any{"url": "http://public.test/page"})
	if res.IsError || !strings.Contains(text, "Readable words") || strings.Contains(text, "SCRIPT-X") ||
		strings.Contains(text, "NAV-X") || strings.Contains(text, "FOOT-X") {
		t.Fatalf("%v\n%s", res.IsError, text)
	}
	for u, says := range map[string]string{
		"http://public.test/to-loopback": "127.0.0.1",
		"http://public.test/to-private":  "192.168.7.7",
		"http://127.0.0.1/page":          "--reader-allow-private",
		"http://[::1]/page":              "--reader-allow-private",
		"file:///etc/passwd":             "only http:// and https://",
	} {
		res, text := call(t, s, ToolRead, map[string]any{"url": u})
		if !res.IsError || !strings.Contains(text, says) {
			t.Errorf("%s: %v %q", u, res.IsError, text)
		}
	}
	pdf, text := call(t, s, ToolRead, map[string]any{"url": "http://public.test/paper.pdf", "section": "Conclusion"})
	if pdf.IsError || !strings.Contains(text, "Author: Mara Lindqvist, Tomás Ferreira\n") ||
		!strings.Contains(text, "URL: http://public.test/paper.pdf\nPages: 3 of 3\nSection: Conclusion\n\n## 4 Conclusion\n\nA fortnight") {
		t.Errorf("%v\n%s", pdf.IsError, text)
	}
	if bad, text := call(t, s, ToolRead, map[string]any{"url": "http://public.test/broken.pdf"}); !bad.IsError ||
		!strings.Contains(text, "is a PDF searxgate cannot read") {
		t.Errorf("%v %q", bad.IsError, text)
	}
	part, text := call(t, s, ToolRead, map[string]any{"url": "http://public.test/page", "readHeadings": true})
	if part.IsError || !strings.HasSuffix(text, "Headings (read one with section):\n\n# T") {
		t.Errorf("%v %q", part.IsError, text)
	}
}
