package sim

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// fakeClock is the injected clock of the tests: it moves only when told.
type fakeClock struct {
	mu sync.Mutex // guards t
	t  time.Time
}

func newClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// startFleet starts a fleet closed when the test ends.
func startFleet(t testing.TB, cfg Config) *Fleet {
	t.Helper()
	f, err := Start(cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return f
}

// honest are the headers searxgate sends: an honest User-Agent and a
// complete, bot-check-proof set.
var honest = map[string]string{
	"User-Agent":      "searxgate/test (+https://example.org/contact)",
	"Accept":          "text/html,application/json;q=0.9,*/*;q=0.5",
	"Accept-Encoding": "gzip",
	"Accept-Language": "en-US,en;q=0.8",
}

// answer is what a test client got.
type answer struct {
	status int
	header http.Header
	body   []byte // gunzipped when the server gzipped it
	raw    []byte // as sent
	err    error
}

func (a answer) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(a.body, &m); err != nil {
		t.Fatalf("answer is not JSON (%v): %.300q", err, a.body)
	}
	return m
}

// do sends one request with the honest headers, changed by over (an empty
// value removes the header), through net/http without following redirects.
func do(t testing.TB, method, rawURL string, form url.Values, over map[string]string, timeout time.Duration) answer {
	t.Helper()
	if timeout == 0 {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, rawURL, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range honest {
		req.Header.Set(k, v)
	}
	for k, v := range over {
		if v == "" {
			req.Header.Del(k)
			if k == "User-Agent" {
				req.Header.Set(k, "") // net/http sends none when empty
			}
			continue
		}
		req.Header.Set(k, v)
	}
	client := &http.Client{
		Transport:     &http.Transport{DisableCompression: true, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode, header: resp.Header}
	a.raw, a.err = io.ReadAll(resp.Body)
	a.body = a.raw
	if a.err == nil && resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(a.raw))
		if err != nil {
			a.err = err
			return a
		}
		a.body, a.err = io.ReadAll(io.LimitReader(zr, 256<<20))
	}
	return a
}

// get is do with GET.
func get(t testing.TB, rawURL string, over map[string]string) answer {
	t.Helper()
	return do(t, http.MethodGet, rawURL, nil, over, 0)
}

// searchURL is the URL of a search of q on the instance.
func searchURL(in *Instance, q, format string) string {
	u := in.URL() + "search?q=" + url.QueryEscape(q)
	if format != "" {
		u += "&format=" + format
	}
	return u
}

// memClient is a fasthttp client that reaches an in-memory fleet.
func memClient(f *Fleet) *fasthttp.Client {
	return &fasthttp.Client{Dial: f.Dial, NoDefaultUserAgentHeader: true, ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second}
}

// memGet sends an honest GET through the in-memory client; headers in over
// replace the honest ones (an empty value removes one).
func memGet(t testing.TB, c *fasthttp.Client, rawURL string, over map[string]string) (int, http.Header, []byte) {
	t.Helper()
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(rawURL)
	for k, v := range honest {
		req.Header.Set(k, v)
	}
	for k, v := range over {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	if err := c.Do(req, resp); err != nil {
		t.Fatalf("GET %s: %v", rawURL, err)
	}
	h := http.Header{}
	for k, v := range resp.Header.All() {
		h.Add(string(k), string(v))
	}
	body, err := resp.BodyUncompressed()
	if err != nil {
		t.Fatalf("GET %s: body: %v", rawURL, err)
	}
	return resp.StatusCode(), h, bytes.Clone(body)
}

// readTestdata reads a file of testdata/.
func readTestdata(name string) ([]byte, error) {
	return os.ReadFile(filepath.Join("testdata", name))
}
