package directory

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/searxgate/searxgate/egress"
	"github.com/searxgate/searxgate/internal/nettest"
)

func TestHTTPFetcher(t *testing.T) {
	body := readFixture(t, "instances.json")
	var gzBody bytes.Buffer
	zw := gzip.NewWriter(&gzBody)
	zw.Write(body)
	zw.Close()

	var (
		mu     sync.Mutex  // guards header
		header http.Header // of the last request to /instances.json
	)
	seen := func() http.Header {
		mu.Lock()
		defer mu.Unlock()
		return header
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/instances.json", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		header = r.Header.Clone()
		mu.Unlock()
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Last-Modified", "Tue, 05 Aug 2025 10:00:00 GMT")
		w.Write(body)
	})
	mux.HandleFunc("/gzip.json", func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			http.Error(w, "want gzip", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(gzBody.Bytes())
	})
	mux.HandleFunc("/gone", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "gone", http.StatusServiceUnavailable)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Write(bytes.Repeat([]byte("x"), 4096))
	})
	mux.HandleFunc("/big-chunked", func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < 8; i++ {
			w.Write(bytes.Repeat([]byte("x"), 512))
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/to-ftp", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "ftp://127.0.0.1/instances.json", http.StatusFound)
	})
	mux.HandleFunc("/to-http", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/instances.json", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // answers only when the client gives up
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	const ua = "searxgate/test (+https://example.org/contact)"
	f := NewHTTPFetcher(5*time.Second, int64(2048+len(body)), ua)
	ctx := context.Background()

	t.Run("200 with validators", func(t *testing.T) {
		res, err := f.Fetch(ctx, srv.URL+"/instances.json", Saved{})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(res.Body, body) || res.NotModified || res.ETag != `"v1"` || res.LastModified != "Tue, 05 Aug 2025 10:00:00 GMT" {
			t.Fatalf("res = %d bytes, %+v", len(res.Body), FetchResult{ETag: res.ETag, LastModified: res.LastModified, NotModified: res.NotModified})
		}
		if h := seen(); h.Get("User-Agent") != ua || h.Get("If-None-Match") != "" || h.Get("If-Modified-Since") != "" {
			t.Fatalf("request headers = %v", h)
		}
	})
	t.Run("304", func(t *testing.T) {
		prev := Saved{Raw: body, ETag: `"v1"`, LastModified: "Tue, 05 Aug 2025 10:00:00 GMT"}
		res, err := f.Fetch(ctx, srv.URL+"/instances.json", prev)
		if err != nil {
			t.Fatal(err)
		}
		if !res.NotModified || res.Body != nil || res.ETag != prev.ETag || res.LastModified != prev.LastModified {
			t.Fatalf("res = %+v", res)
		}
		if h := seen(); h.Get("If-None-Match") != `"v1"` || h.Get("If-Modified-Since") != prev.LastModified {
			t.Fatalf("conditional headers not sent: %v", h)
		}
	})
	t.Run("gzip is decoded", func(t *testing.T) {
		res, err := f.Fetch(ctx, srv.URL+"/gzip.json", Saved{})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(res.Body, body) {
			t.Fatalf("body = %.60q…", res.Body)
		}
	})

	small := NewHTTPFetcher(5*time.Second, 1024, ua)
	errCases := []struct {
		name    string
		fetcher Fetcher
		path    string
		want    error
	}{
		{"server error", f, "/gone", ErrStatus},
		{"not found", f, "/nothing", ErrStatus},
		{"too large, announced", small, "/big", ErrTooLarge},
		{"too large, chunked", small, "/big-chunked", ErrTooLarge},
		{"redirect to ftp", f, "/to-ftp", ErrRedirect},
		{"redirect loop", f, "/loop", ErrRedirect},
	}
	for _, tt := range errCases {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tt.fetcher.Fetch(ctx, srv.URL+tt.path, Saved{})
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if res.Body != nil {
				t.Fatalf("body returned with an error")
			}
		})
	}
	t.Run("redirect to http is followed", func(t *testing.T) {
		res, err := f.Fetch(ctx, srv.URL+"/to-http", Saved{})
		if err != nil || !bytes.Equal(res.Body, body) {
			t.Fatalf("err = %v, %d bytes", err, len(res.Body))
		}
	})
	t.Run("timeout", func(t *testing.T) {
		quick := NewHTTPFetcher(50*time.Millisecond, 0, ua)
		_, err := quick.Fetch(ctx, srv.URL+"/hang", Saved{})
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("err = %v, want a timeout", err)
		}
	})
	t.Run("cancelled context", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := f.Fetch(cctx, srv.URL+"/instances.json", Saved{}); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("bad URL", func(t *testing.T) {
		if _, err := f.Fetch(ctx, "http://[::1", Saved{}); err == nil {
			t.Fatal("no error for an unparsable URL")
		}
	})
}

// TestFetcherGuard: the guard checks the list URL and every redirect, and
// every connection goes through the guarded dialer (here one whose
// connections reach the test server, on 127.0.0.1, whatever address the
// name resolved to).
func TestFetcherGuard(t *testing.T) {
	body := readFixture(t, "instances.json")
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/list.json":
			w.Write(body)
		case "/to-loopback":
			http.Redirect(w, r, srv.URL+"/list.json", http.StatusFound)
		case "/to-localhost":
			http.Redirect(w, r, "http://localhost/list.json", http.StatusFound)
		case "/to-private":
			http.Redirect(w, r, "http://10.1.2.3/list.json", http.StatusMovedPermanently)
		case "/to-mirror":
			http.Redirect(w, r, "http://mirror.example/list.json", http.StatusFound)
		case "/to-inside":
			http.Redirect(w, r, "http://inside.example/list.json", http.StatusFound)
		}
	}))
	t.Cleanup(srv.Close)
	var (
		mu    sync.Mutex // guards dials
		dials []string
	)
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		dials = append(dials, addr)
		mu.Unlock()
		var d net.Dialer
		return d.DialContext(ctx, network, srv.Listener.Addr().String())
	}
	dialed := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := dials
		dials = nil
		return out
	}
	ctx := context.Background()

	tests := []struct {
		name      string
		url       string
		wantErr   error
		wantDials []string
	}{
		{"a name goes to the dialer", "http://list.example/list.json", nil, []string{"93.184.216.34:80"}},
		{"a redirect to another name is checked and followed", "http://list.example/to-mirror", nil,
			[]string{"93.184.216.34:80", "93.184.216.35:80"}},
		{"a redirect to a loopback address is refused", "http://list.example/to-loopback", ErrRedirect, []string{"93.184.216.34:80"}},
		{"a redirect to localhost is refused", "http://list.example/to-localhost", ErrRedirect, []string{"93.184.216.34:80"}},
		{"a redirect to a private address is refused", "http://list.example/to-private", ErrRedirect, []string{"93.184.216.34:80"}},
		{"a redirect to a name of a private address is refused", "http://list.example/to-inside", egress.ErrNotPublic,
			[]string{"93.184.216.34:80"}},
		{"a loopback list URL is refused before any connection", srv.URL + "/list.json", egress.ErrPrivateAddress, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A fetcher of its own: no connection kept from another case.
			f := NewFetcher(egress.NewFetcher(egress.Config{Timeout: 5 * time.Second, MaxBytes: 1 << 20, UserAgent: "searxgate/test",
				Connect: dial, Resolver: nettest.NewResolver(nettest.Names{"list.example": "93.184.216.34", "mirror.example": "93.184.216.35", "inside.example": "10.0.0.9"})}))
			res, err := f.Fetch(ctx, tt.url, Saved{})
			if tt.wantErr == nil && (err != nil || !bytes.Equal(res.Body, body)) {
				t.Fatalf("err %v, %d bytes", err, len(res.Body))
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("err %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr != nil && errors.Is(err, ErrRedirect) && !errors.Is(err, egress.ErrPrivateAddress) {
				t.Errorf("err %v does not say the address is not public", err)
			}
			if got := dialed(); !slices.Equal(got, tt.wantDials) {
				t.Errorf("dialed %v, want %v", got, tt.wantDials)
			}
		})
	}

	// With AllowPrivate the guard lets loopback through.
	open := NewFetcher(egress.NewFetcher(egress.Config{Timeout: 5 * time.Second, AllowPrivate: true}))
	if res, err := open.Fetch(ctx, srv.URL+"/to-loopback", Saved{}); err != nil || !bytes.Equal(res.Body, body) {
		t.Fatalf("allowed private: err %v, %d bytes", err, len(res.Body))
	}
}
