package web

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"searxgate/proxy"
)

// FuzzEndpoints sends arbitrary query strings and form bodies to every
// endpoint that reads parameters: nothing panics, every answer has a
// status the endpoint may give and the security headers, and a page is
// valid UTF-8.
func FuzzEndpoints(f *testing.F) {
	for _, seed := range []struct{ path, query, body string }{
		{"/search", "q=hello&format=json", ""},
		{"/search", "q=a&pageno=99999999999999999999&language=xx-YY", ""},
		{"/search", "", "q=%ff%fe&categories=,,,images,IT&time_range=None"},
		{"/", "q=x&format=rss&safesearch=3", ""},
		{"/autocompleter", "q=%00%ff&language=auto", ""},
		{"/api/instances", "", `url=javascript:alert(1)`},
		{"/search", "q=" + strings.Repeat("a", 3000), ""},
		{"/search", "q=a&engines=%22%3E%3Cscript%3E", ""},
	} {
		f.Add(seed.path, seed.query, seed.body)
	}
	fs := &fakeSearch{answer: func(req proxy.Request) (*proxy.Response, error) {
		// Echo the query, as upstream does, so the page carries it.
		r := strings.Replace(simpleAnswer, `"query":"hello"`, `"query":`+quoteJSON(req.Query), 1)
		return &proxy.Response{JSON: []byte(r), Instance: "https://up.example/"}, nil
	}}
	s, err := New(Config{Search: fs, Autocomplete: &fakeAutocomplete{}, Operator: &fakeOperator{known: map[string]bool{}}, AdminToken: "t"})
	if err != nil {
		f.Fatal(err)
	}
	h := s.Handler()
	paths := []string{"/search", "/", "/autocompleter", "/api/instances", "/opensearch.xml", "/config"}
	f.Fuzz(func(t *testing.T, path, query, body string) {
		if !strings.HasPrefix(path, "/") {
			path = paths[len(path)%len(paths)]
		}
		for _, method := range []string{"GET", "POST"} {
			var ctx fasthttp.RequestCtx
			var req fasthttp.Request
			req.Header.SetMethod(method)
			req.SetRequestURI("http://gateway.test" + path + "?" + query)
			if method == "POST" {
				req.Header.SetContentType("application/x-www-form-urlencoded")
				req.SetBodyString(body)
			}
			ctx.Init(&req, nil, nil)
			h(&ctx)
			st := ctx.Response.StatusCode()
			switch st {
			case 200, 201, 400, 401, 403, 404, 405, 503:
			default:
				t.Fatalf("%s %s?%q: status %d", method, path, query, st)
			}
			if string(ctx.Response.Header.Peek("X-Content-Type-Options")) != "nosniff" {
				t.Fatalf("%s %s: no security headers", method, path)
			}
			if strings.HasPrefix(string(ctx.Response.Header.ContentType()), "text/html") && !utf8.Valid(ctx.Response.Body()) {
				t.Fatalf("%s %s?%q: the page is not valid UTF-8", method, path, query)
			}
		}
	})
}

func quoteJSON(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&15])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// FuzzInstancePath: any raw path splits without panic, and what it returns
// is a percent-decoding of the path's tail.
func FuzzInstancePath(f *testing.F) {
	for _, s := range []string{"/api/instances/https%3A%2F%2Fa.example%2F/disable", "/api/instances/%", "/api/instances//enable", "/api/instances/x/enable/enable"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		inst, action, ok := instancePath([]byte(raw))
		if !ok {
			return
		}
		if inst == "" || (action != "" && action != "disable" && action != "enable") {
			t.Fatalf("instancePath(%q) = %q, %q", raw, inst, action)
		}
		if !strings.HasPrefix(raw, "/api/instances/") {
			t.Fatalf("accepted %q", raw)
		}
	})
}

// FuzzClean: the cleaned string is valid UTF-8, holds no control
// character and is at most max runes and an ellipsis.
func FuzzClean(f *testing.F) {
	for _, s := range []string{"plain", "\x00\xff\u202e", strings.Repeat("é", 50)} {
		f.Add(s, 10)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 1 || max > 1000 {
			max = 10
		}
		out := clean(s, max)
		if !utf8.ValidString(out) {
			t.Fatalf("clean(%q) = %q: invalid UTF-8", s, out)
		}
		if n := utf8.RuneCountInString(out); n > max+1 {
			t.Fatalf("clean(%q, %d) has %d runes", s, max, n)
		}
		for _, r := range out {
			if r < 0x20 || r == 0x7f || isBidiControl(r) {
				t.Fatalf("clean(%q) kept %U", s, r)
			}
		}
	})
}
