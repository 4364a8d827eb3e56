package web

import (
	"encoding/json"
	"net"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/client"
	"github.com/searxgate/searxgate/internal/clock"
)

// TestMiddlewareLimitsOnlyAutocomplete: searches are not counted here (the
// proxy counts those that reach an instance); /autocompleter is, and its
// 429 is JSON with Retry-After.
func TestMiddlewareLimitsOnlyAutocomplete(t *testing.T) {
	lim := client.NewLimiter(60, 2)
	reached := 0
	h := Wrap(func(ctx *fasthttp.RequestCtx) { reached++; ctx.SetBodyString("ok") }, lim, nil, nil, clock.NewFake(time.Unix(1_700_000_000, 0)))
	do := func(method, uri, body string) *fasthttp.Response {
		var ctx fasthttp.RequestCtx
		var req fasthttp.Request
		req.Header.SetMethod(method)
		req.SetRequestURI(uri)
		if body != "" {
			req.Header.SetContentType("application/x-www-form-urlencoded")
			req.SetBodyString(body)
		}
		ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP("192.0.2.50"), Port: 1234}, nil)
		h(&ctx)
		var resp fasthttp.Response
		ctx.Response.CopyTo(&resp)
		return &resp
	}
	for i := range 10 {
		for _, r := range []struct{ method, uri, body string }{
			{"GET", "/search?q=x", ""}, {"POST", "/search", "q=x"}, {"GET", "/?q=x", ""}, {"POST", "/", "q=x"},
		} {
			if resp := do(r.method, r.uri, r.body); resp.StatusCode() != 200 {
				t.Fatalf("%s %s #%d: %d, the middleware limited a search", r.method, r.uri, i+1, resp.StatusCode())
			}
		}
	}
	for i := range 2 {
		if resp := do("GET", "/autocompleter?q=x", ""); resp.StatusCode() != 200 {
			t.Fatalf("autocomplete %d within the burst: %d", i+1, resp.StatusCode())
		}
	}
	before := reached
	resp := do("GET", "/autocompleter?q=x", "")
	if resp.StatusCode() != 429 || string(resp.Header.Peek("Retry-After")) != "1" || string(resp.Header.ContentType()) != "application/json" {
		t.Fatalf("autocomplete past the burst: %d, Retry-After %q, Content-Type %q", resp.StatusCode(), resp.Header.Peek("Retry-After"), resp.Header.ContentType())
	}
	var body struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(resp.Body(), &body); err != nil || body.Error == "" {
		t.Fatalf("429 body %q: %v", resp.Body(), err)
	}
	if reached != before {
		t.Fatal("a limited autocomplete reached the handler")
	}
}
