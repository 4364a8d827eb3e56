package web

import (
	"context"
	"encoding/csv"
	"errors"
	"net"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/internal/nettest"
	"github.com/searxgate/searxgate/proxy"
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
		// SearXNG's edges and the attacks of the hardening work.
		{"/search", "q=%21fb+edge+bang&format=json", ""},
		{"/search", "q=x&format=JSON", ""},
		{"/search", "q=x&format=xml", ""},
		{"/search", "q=" + strings.Repeat("a", 9000) + "&format=json", ""},
		{"/search", "", "q=%3Dcmd%7C%27+%2FC+calc%27%21A0&format=csv"},
		{"/search", "q=%2B1%2B1&format=csv", ""},
		{"/search", "q=%40SUM(1)&format=rss", ""},
		{"/image_proxy", "url=http%3A%2F%2F127.0.0.1%2Ftrack.gif&h=00", ""},
		{"/image_proxy", "url=http%3A%2F%2F169.254.169.254%2F&h=" + strings.Repeat("ab", 32), ""},
		{"/image_proxy", "url=&h=", ""},
		{"/robots.txt", "", ""},
		{"/opensearch.xml", "", ""},
		{"/opensearch.xml", "language=ar&safesearch=2&categories=news,it", ""},
		{"/preferences", "save=1&language=%3Cx%3E&theme=dark&hotkeys=vim", ""},
		{"/preferences", "", "categories=general&categories=images&autocomplete=x&method=post&reset="},
		{"/about", "", ""},
		{"/search", "q=x&theme=dark&center_alignment=1&results_on_new_tab=yes&image_proxy=0", ""},
	} {
		f.Add(seed.path, seed.query, seed.body)
	}
	fs := &fakeSearch{answer: func(req proxy.Request) (*proxy.Response, error) {
		// Echo the query, as upstream does, so the page carries it.
		r := strings.Replace(simpleAnswer, `"query":"hello"`, `"query":`+quoteJSON(req.Query), 1)
		return &proxy.Response{JSON: []byte(r), Instance: "https://up.example/"}, nil
	}}
	// Image fetches resolve nothing and connect nowhere: the fuzzer cannot
	// forge a signature, and if it did nothing would leave the process.
	images := ImageConfig{Resolver: new(nettest.Resolver), Connect: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no network in the fuzz target")
	}}
	s, err := New(Config{Search: fs, Autocomplete: &fakeAutocomplete{}, Operator: &fakeOperator{known: map[string]bool{}}, AdminToken: "t",
		Images: images})
	if err != nil {
		f.Fatal(err)
	}
	h := s.Handler()
	paths := []string{"/search", "/", "/autocompleter", "/api/instances", "/opensearch.xml", "/config", "/image_proxy", "/robots.txt", "/preferences", "/about"}
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
			case 200, 201, 303, 308, 400, 401, 403, 404, 405, 502, 503:
			default:
				t.Fatalf("%s %s?%q: status %d", method, path, query, st)
			}
			if string(ctx.Response.Header.Peek("X-Content-Type-Options")) != "nosniff" {
				t.Fatalf("%s %s: no security headers", method, path)
			}
			if strings.HasPrefix(string(ctx.Response.Header.ContentType()), "text/html") && !utf8.Valid(ctx.Response.Body()) {
				t.Fatalf("%s %s?%q: the page is not valid UTF-8", method, path, query)
			}
			if !strings.Contains(string(ctx.Response.Header.Peek("Content-Security-Policy")), "img-src 'self' data:;") {
				t.Fatalf("%s %s: the CSP lets images come from elsewhere", method, path)
			}
			if st == 200 && strings.Contains(string(ctx.Response.Header.ContentType()), "csv") {
				rows, err := csv.NewReader(strings.NewReader(string(ctx.Response.Body()))).ReadAll()
				if err != nil {
					t.Fatalf("%s %s?%q: the CSV does not parse: %v", method, path, query, err)
				}
				for _, row := range rows {
					for _, c := range row {
						if c != "" && strings.ContainsRune("=+-@\t\r", rune(c[0])) {
							t.Fatalf("%s %s?%q: a CSV cell starts a formula: %q", method, path, query, c)
						}
					}
				}
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
			if r < 0x20 || r == 0x7f || detect.IsBidiControl(r) {
				t.Fatalf("clean(%q) kept %U", s, r)
			}
		}
	})
}

// FuzzPrefs reads arbitrary preference values, as cookies or parameters
// give them: nothing panics, every preference holds one of the values it
// takes, and what a cookie writes reads back as the same preferences.
func FuzzPrefs(f *testing.F) {
	f.Add("categories", "general,images,,NEWS", "language", "pt-BR")
	f.Add("safesearch", "9", "time_range", "None")
	f.Add("theme", "<script>", "method", "post")
	f.Add("hotkeys", "default", "autocomplete", "0")
	f.Add("image_proxy", "off", "query_in_title", "\xff")
	f.Fuzz(func(t *testing.T, n1, v1, n2, v2 string) {
		p := prefsFrom(func(name string) (string, bool) {
			switch name {
			case n1:
				return v1, true
			case n2:
				return v2, true
			}
			return "", false
		})
		if p.Theme != "auto" && p.Theme != "light" && p.Theme != "dark" || p.Method != "GET" && p.Method != "POST" ||
			p.Hotkeys != "" && p.Hotkeys != "vim" || !strings.Contains(",,0,1,2,", ","+p.SafeSearch+",") ||
			!strings.Contains(",,day,week,month,year,", ","+p.TimeRange+",") {
			t.Fatalf("a preference out of its values: %+v", p)
		}
		for _, c := range p.Categories {
			if !slices.Contains(searxngCategories, c) {
				t.Fatalf("category %q", c)
			}
		}
		if p.Language != "" {
			if _, _, ok := strings.Cut(p.Language, "\""); ok || !utf8.ValidString(p.Language) || len(p.Language) > 6 {
				t.Fatalf("language %q", p.Language)
			}
		}
		back := prefsFrom(func(name string) (string, bool) { return p.value(name), true })
		if !reflect.DeepEqual(back, p) && !(len(back.Categories) == 0 && len(p.Categories) == 0) {
			t.Fatalf("the cookies of %+v read back as %+v", p, back)
		}
	})
}
