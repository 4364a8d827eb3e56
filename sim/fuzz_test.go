package sim

import (
	"encoding/json"
	"html"
	"net"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/valyala/fasthttp"
)

// pythonValid is s as Python-escaped JSON decodes: each byte that is not
// UTF-8 becomes U+FFFD.
func pythonValid(s string) string {
	var sb strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		sb.WriteRune(r)
		i += n
	}
	return sb.String()
}

func FuzzWriteJSON(f *testing.F) {
	for _, s := range []string{"hello world", "", `"quoted" \ back`, "ünïcödé 🦀", "\xff\xfe", "a\x00b\nc", "\u2028"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, q string, raw bool) {
		p := &page{Query: q, RawBytes: raw, Suggestions: []string{q}, Unresponsive: [][2]string{{"e", q}},
			Results: []result{{URL: "https://x.example/" + q, Title: q, Content: q, Engine: "e", Engines: []string{"e"}, Position: 1, Score: 1, Category: "general"}}}
		out := writeJSON(nil, p)
		if raw && !utf8.ValidString(q) {
			return // raw bytes are meant to break strict readers
		}
		if !utf8.Valid(out) {
			t.Fatalf("not UTF-8: %q", out)
		}
		var m struct {
			Query   string `json:"query"`
			Results []struct {
				Title     string   `json:"title"`
				ParsedURL []string `json:"parsed_url"`
			} `json:"results"`
		}
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("not JSON (%v): %s", err, out)
		}
		if want := pythonValid(q); m.Query != want || m.Results[0].Title != want {
			t.Errorf("query %q came back as %q / %q", want, m.Query, m.Results[0].Title)
		}
		if len(m.Results[0].ParsedURL) != 6 {
			t.Errorf("parsed_url %v", m.Results[0].ParsedURL)
		}
	})
}

func FuzzHighlight(f *testing.F) {
	for _, s := range [][2]string{{"Result 1 for hello world", "hello world"}, {`<span class="highlight">x</span>`, "span class"}, {"ÄÖÜ äöü", "äö"}, {"a&b<c>", "& <"}, {"\xff", "\xff"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, text, query string) {
		out := highlight(text, query)
		stripped := strings.ReplaceAll(strings.ReplaceAll(out, `<span class="highlight">`, ""), "</span>", "")
		if strings.ContainsAny(stripped, `<>"`) {
			t.Fatalf("markup leaked: %q", out)
		}
		if got := html.UnescapeString(stripped); got != text {
			t.Errorf("text changed: %q -> %q", text, got)
		}
	})
}

func FuzzParsedURL(f *testing.F) {
	for _, s := range []string{"https://a.example/p;x?q=1#f", "javascript:alert(1)", "//host/path", "/rel", "", "a:b:c", "http://h?x#y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, u string) {
		p := parsedURL(u)
		n := 0
		for _, part := range p {
			if !strings.Contains(u, part) {
				t.Fatalf("%q: part %q is not in the URL", u, part)
			}
			n += len(part)
		}
		if n > len(u) {
			t.Errorf("%q: parts %q are longer than the URL", u, p)
		}
	})
}

func FuzzHeaderChecks(f *testing.F) {
	f.Add("searxgate/1", "text/html", "gzip", "en")
	f.Add("curl/8", "application/json", "br", "")
	f.Add("", "*/*;q=0.1", "gzip;q=1.0", " ")
	f.Fuzz(func(t *testing.T, ua, accept, ae, al string) {
		if acceptsHTML(accept) != acceptsHTML(accept+", application/xml") {
			t.Errorf("adding a media range changed the Accept verdict of %q", accept)
		}
		if !acceptsHTML(accept + ",text/html") {
			t.Errorf("Accept %q + text/html refused", accept)
		}
		if !encodingOK(ae+", gzip") || !encodingOK("deflate,"+ae) {
			t.Errorf("Accept-Encoding %q with gzip or deflate refused", ae)
		}
		var h fasthttp.RequestHeader
		h.Set("User-Agent", ua)
		h.Set("Accept", accept)
		h.Set("Accept-Encoding", ae)
		h.Set("Accept-Language", al)
		bad := botUserAgent(&h)
		if got := string(h.UserAgent()); strings.HasPrefix(got, "curl") || strings.HasPrefix(got, "python-requests") || got == "" {
			if !bad {
				t.Errorf("User-Agent %q passes", got)
			}
		}
		if strings.HasPrefix(string(h.UserAgent()), "searxgate/") && bad {
			t.Errorf("searxgate's User-Agent %q refused", h.UserAgent())
		}
		_ = badSearchHeaders(&h)
	})
}

// FuzzSearchRequest sends any query string to a good instance's handler:
// it never panics, and its answers are well formed.
func FuzzSearchRequest(f *testing.F) {
	fl, err := Start(Config{InMemory: true, Instances: []InstanceConfig{{Latency: -1, JSON: true, Pages: 3}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { fl.Close() })
	in := fl.Instances()[0]
	for _, s := range []string{"q=hello+world&format=json", "q=a&pageno=2", "q=&format=json", "q=%ff%fe&format=json", "format=csv&q=x", "q=a&pageno=-1&format=JSON", "q=<script>&format=html"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rawQuery string) {
		var req fasthttp.Request
		req.SetRequestURI("/search?" + rawQuery)
		for k, v := range honest {
			req.Header.Set(k, v)
		}
		var ctx fasthttp.RequestCtx
		ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
		in.handle(&ctx)
		body, err := ctx.Response.BodyUncompressed()
		if err != nil {
			t.Fatalf("body: %v", err)
		}
		switch status := ctx.Response.StatusCode(); status {
		case 200:
			if strings.HasPrefix(string(ctx.Response.Header.ContentType()), "application/json") {
				if !json.Valid(body) {
					t.Fatalf("invalid JSON for %q", rawQuery)
				}
			} else if !strings.HasSuffix(string(body), "</html>") {
				t.Fatalf("unfinished HTML for %q", rawQuery)
			}
		case 400, 403:
		default:
			t.Fatalf("status %d for %q", status, rawQuery)
		}
	})
}
