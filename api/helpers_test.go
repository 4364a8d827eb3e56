package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/reader"
	"github.com/searxgate/searxgate/results"
)

// fakeSearch answers every page with perPage results on hosts[i%len]
// until pages runs out, and records what it was asked.
type fakeSearch struct {
	mu      sync.Mutex // guards asked
	asked   []proxy.Request
	perPage int
	pages   int
	hosts   []string
	answers []string
	boxes   []results.Infobox
	dates   []string // published dates by result index, "" none
	err     error
	// imagesErr fails the searches of the images category alone.
	imagesErr error
}

func (f *fakeSearch) Search(_ context.Context, req proxy.Request) (*proxy.Response, error) {
	f.mu.Lock()
	f.asked = append(f.asked, req)
	f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	if f.imagesErr != nil && len(req.Categories) == 1 && req.Categories[0] == "images" {
		return nil, f.imagesErr
	}
	hosts := f.hosts
	if len(hosts) == 0 {
		hosts = []string{"example.org"}
	}
	p := &results.Page{Query: req.Query}
	if req.PageNo <= f.pages {
		for i := range f.perPage {
			k := (req.PageNo-1)*f.perPage + i
			r := results.Result{URL: fmt.Sprintf("https://%s/%d", hosts[k%len(hosts)], k+1), Title: fmt.Sprintf("result %d", k+1),
				Content: fmt.Sprintf("about %s, %d", req.Query, k+1), Engine: "e", Score: float64(f.perPage-i) / 2,
				ImgSrc: fmt.Sprintf("https://img.example.org/%d.png", k+1)}
			if k < len(f.dates) {
				r.PublishedDate = f.dates[k]
			}
			p.Results = append(p.Results, r)
		}
	}
	if req.PageNo == 1 {
		p.Answers, p.Infoboxes = f.answers, f.boxes
	}
	return &proxy.Response{JSON: p.AppendJSON(nil)}, nil
}

func (f *fakeSearch) requests() []proxy.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]proxy.Request(nil), f.asked...)
}

// last is the last request asked.
func (f *fakeSearch) last() proxy.Request {
	r := f.requests()
	return r[len(r)-1]
}

// fakeRead reads every URL as "# page <url>", except those in fail.
type fakeRead struct {
	mu      sync.Mutex // guards clients
	clients []string
	fail    map[string]error
}

func (f *fakeRead) Read(_ context.Context, req reader.Request) (*reader.Result, error) {
	f.mu.Lock()
	f.clients = append(f.clients, req.Client)
	f.mu.Unlock()
	if err := f.fail[req.URL]; err != nil {
		return nil, err
	}
	return &reader.Result{URL: req.URL, Title: "page", Content: "# page " + req.URL + "\n\nSee [the **docs**](https://x.example/d)."}, nil
}

// do runs one request through the doors' handler of path.
func do(t testing.TB, s *Server, method, path, body string, header map[string]string) (int, []byte, *fasthttp.ResponseHeader) {
	t.Helper()
	var ctx fasthttp.RequestCtx
	var req fasthttp.Request
	req.Header.SetMethod(method)
	req.SetRequestURI(path)
	req.Header.SetHost("127.0.0.1:8888")
	for k, v := range header {
		if k == "Host" {
			req.Header.SetHost(v)
			continue
		}
		req.Header.Set(k, v)
	}
	if body != "" {
		req.SetBodyString(body)
	}
	ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5555}, nil)
	p, _, _ := strings.Cut(path, "?")
	h, ok := s.Routes()[p]
	if !ok {
		t.Fatalf("no door at %s", p)
	}
	h(&ctx)
	var hdr fasthttp.ResponseHeader
	ctx.Response.Header.CopyTo(&hdr)
	return ctx.Response.StatusCode(), append([]byte(nil), ctx.Response.Body()...), &hdr
}

// newTest is a Server over fs and fr (nil: no reader), open on loopback,
// at a fixed time.
func newTest(fs *fakeSearch, fr *fakeRead, keys ...string) *Server {
	cfg := Config{Search: fs, Client: func(*fasthttp.RequestCtx) string { return "127.0.0.1" },
		Now: func() time.Time { return time.Date(2026, 3, 20, 12, 0, 0, 0, time.UTC) }}
	if fr != nil {
		cfg.Read = fr
	}
	if len(keys) > 0 {
		cfg.Keys = &Keys{}
		if err := cfg.Keys.Set(keys); err != nil {
			panic(err)
		}
	}
	return New(cfg)
}

func decode(t testing.TB, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
}
