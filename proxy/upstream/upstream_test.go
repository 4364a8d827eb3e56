package upstream

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/detect"
)

func gz(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, _ = w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDecodeBody(t *testing.T) {
	plain := []byte(`{"query":"x"}`)
	got, err := decodeBody(nil, plain, 100)
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("identity: %q, %v", got, err)
	}
	got, err = decodeBody([]byte("gzip"), gz(t, plain), 100)
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("gzip: %q, %v", got, err)
	}
	// A bomb: 8 MiB of zeros compresses to a few KiB; the cap stops it.
	bomb := gz(t, make([]byte, 8<<20))
	if len(bomb) > 64<<10 {
		t.Fatalf("bomb is %d bytes compressed", len(bomb))
	}
	if _, err := decodeBody([]byte("gzip"), bomb, 1<<20); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("bomb: %v, want ErrTooLarge", err)
	}
	// Exactly at the cap is fine.
	if got, err := decodeBody([]byte("gzip"), gz(t, make([]byte, 1000)), 1000); err != nil || len(got) != 1000 {
		t.Fatalf("at the cap: %d bytes, %v", len(got), err)
	}
	if _, err := decodeBody([]byte("gzip"), []byte("not gzip"), 100); !errors.Is(err, ErrTransport) {
		t.Fatalf("broken gzip: %v, want ErrTransport", err)
	}
	if _, err := decodeBody([]byte("br"), plain, 100); !errors.Is(err, ErrTransport) {
		t.Fatalf("unasked encoding: %v, want ErrTransport", err)
	}
}

// TestStaleKeepAliveIsRetried: a server that closes every connection after
// one answer, without saying so, leaves the client a dead kept-alive
// connection; the next search must not fail for it.
func TestStaleKeepAliveIsRetried(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var served atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				if _, err := http.ReadRequest(br); err != nil {
					return
				}
				served.Add(1)
				body := `{"query":"x","results":[]}`
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
			}()
		}
	}()
	up := New(Config{UserAgent: "searxgate-test/1"}, nil)
	inst := "http://" + ln.Addr().String() + "/"
	for i := range 3 {
		rep, err := up.Get(inst, "search", nil, "en", 5*time.Second)
		if err != nil {
			t.Fatalf("search %d: %v", i+1, err)
		}
		if rep.Status != 200 {
			t.Fatalf("search %d: status %d", i+1, rep.Status)
		}
	}
	if n := served.Load(); n != 3 {
		t.Fatalf("the server answered %d searches, want 3 (one each, no duplicate)", n)
	}
}

// TestGetTimesOutAfterItsTimeout: Get's timeout is time left, counted on
// the real clock from the call: a server that never answers is given up
// on after it, not before and not much later.
func TestGetTimesOutAfterItsTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(io.Discard, c) }() // reads, never answers
		}
	}()
	up := New(Config{UserAgent: "searxgate-test/1"}, nil)
	const timeout = 200 * time.Millisecond
	began := time.Now()
	_, err = up.Get("http://"+ln.Addr().String()+"/", "search", nil, "en", timeout)
	took := time.Since(began)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("a server that never answers: %v, want ErrTimeout", err)
	}
	if took < timeout || took > 10*time.Second { // with room for a loaded machine

		t.Fatalf("gave up after %v, want %v", took, timeout)
	}
}

func TestTransportErrorsAreToldApart(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want detect.Reason
	}{
		{"dns", &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "searx.invalid", IsNotFound: true}}, detect.DNS},
		{"refused", &net.OpError{Op: "dial", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}, detect.ConnRefused},
		{"reset", &net.OpError{Op: "read", Err: &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}}, detect.Reset},
		{"closed", fasthttp.ErrConnectionClosed, detect.Reset},
		{"tls cert", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}, detect.TLS},
		{"tls alert", fmt.Errorf("handshake: %w", tls.AlertError(40)), detect.TLS},
		{"timeout", fasthttp.ErrTimeout, detect.Timeout},
		{"other", errors.New("something else"), detect.Transport},
	}
	for _, c := range cases {
		err := classifyTransport(c.err)
		if got := Reason(err); got != c.want {
			t.Errorf("%s: %v read as %s, want %s", c.name, err, got, c.want)
		}
		if c.want != detect.Timeout && !errors.Is(err, ErrTransport) {
			t.Errorf("%s: %v does not wrap ErrTransport", c.name, err)
		}
		if !errors.Is(err, c.err) {
			t.Errorf("%s: the original error is not kept", c.name)
		}
	}
}

func TestDialFailuresNameTheirCause(t *testing.T) {
	// A port nothing listens on: bind one, note it, close it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	u := New(Config{UserAgent: "searxgate-test/1"}, nil)
	_, err = u.Get("http://"+addr+"/", "search", nil, "en", 2*time.Second)
	if got := Reason(err); got != detect.ConnRefused {
		t.Fatalf("nothing listening: %v read as %s, want refused", err, got)
	}
	dnsFail := New(Config{UserAgent: "searxgate-test/1", Dial: func(addr string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "searx.invalid", IsNotFound: true}}
	}}, nil)
	_, err = dnsFail.Get("https://searx.invalid/", "search", nil, "en", 2*time.Second)
	if got := Reason(err); got != detect.DNS {
		t.Fatalf("a name that does not resolve: %v read as %s, want dns", err, got)
	}
}

// BenchmarkDecodeBody inflates a real SearXNG JSON answer, as a miss does.
func BenchmarkDecodeBody(b *testing.B) {
	raw, err := os.ReadFile("../../../shared/fixtures/searxng/a-search-json.txt")
	if err != nil {
		b.Skip("fixtures not found:", err)
	}
	body := raw[bytes.Index(raw, []byte("\n{"))+1:]
	zipped := gz(b, body)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeBody([]byte("gzip"), zipped, 1<<20); err != nil {
			b.Fatal(err)
		}
	}
}

func TestDecodedSizeHint(t *testing.T) {
	var plain []byte
	for i := range 100 {
		plain = fmt.Appendf(plain, `{"url":"https://example.org/%d","score":%d},`, i*7919, i*i)
	}
	zipped := gz(t, plain)
	if got := decodedSizeHint(zipped, 1<<20); got != len(plain) {
		t.Fatalf("hint %d, want the decoded length %d", got, len(plain))
	}
	if got := decodedSizeHint(zipped, 1000); got != 1000 {
		t.Fatalf("hint %d past the cap 1000", got)
	}
	// A trailer that claims 4 GiB buys at most 32 times the body.
	liar := append(bytes.Clone(zipped[:len(zipped)-4]), 0xff, 0xff, 0xff, 0xff)
	if got := decodedSizeHint(liar, 1<<30); got != 32*len(liar) {
		t.Fatalf("hint %d for a lying trailer, want %d", got, 32*len(liar))
	}
	if got := decodedSizeHint([]byte("short"), 1<<20); got != 20 {
		t.Fatalf("hint %d for a body too short to carry a trailer, want 4 times it", got)
	}
}
