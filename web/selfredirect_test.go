package web

import (
	"net"
	"strings"
	"testing"

	"github.com/searxgate/searxgate/proxy"
)

// bangTo is a searcher whose every answer is a bang's redirect to loc.
func bangTo(loc string) *fakeSearch {
	return &fakeSearch{answer: func(proxy.Request) (*proxy.Response, error) {
		return &proxy.Response{JSON: []byte(simpleAnswer), Redirect: loc, Soft: "external_bang", Instance: "https://a.example/", Attempts: 1}, nil
	}}
}

// TestBangRedirectToSearxgateItself: a bang's redirect back to searxgate
// (the Host the client used, --public-url, the address it listens on, a
// loopback name on its port, in any spelling a browser reads alike) is
// answered 502 naming why, in every format; a redirect to another host, or
// to the same address on another port (the real feeling-lucky capture, an
// instance on 127.0.0.1 sending to 127.0.0.1:80), still goes through.
func TestBangRedirectToSearxgateItself(t *testing.T) {
	lucky := readCapture(t, "a-search-html-feeling-lucky.txt")
	if lucky.status != 302 || !strings.HasPrefix(lucky.header["Location"], "http://127.0.0.1/") {
		t.Fatalf("capture: %d %q", lucky.status, lucky.header["Location"])
	}
	const public = "https://search.example/"
	refused := []string{
		"http://gateway.test/preferences?reset=1", // the client's Host
		"https://GATEWAY.test./api/instances",
		"http://gateway.test:80/",
		"https://search.example/preferences", // --public-url
		"http://search.example/",
		"https://search.example:443/",
		"http://127.0.0.1:8888/admin", // the address it listens on
		"http://localhost:8888/",
		"http://LOCALHOST.:8888/",
		"http://app.localhost:8888/",
		"http://127.1:8888/",
		"http://0x7f000001:8888/",
		"http://2130706433:8888/",
		"http://[::1]:8888/",
		"http://[::ffff:127.0.0.1]:8888/",
		"http://0.0.0.0:8888/",
		"http://127.0.0.%31:8888/",
	}
	passed := []string{
		lucky.header["Location"],
		"https://www.google.com/search?q=foo",
		"http://127.0.0.1:9999/x",
		"http://localhost/",
		"https://gateway.test:8443/",
		"https://search.example:8443/",
		"https://sub.search.example/",
		"https://gateway.test.evil.example/",
	}
	serveAt := func(t *testing.T, loc string) *tester {
		_, c := serve(t, Config{Search: bangTo(loc), PublicURL: public})
		c.ln.SetLocalAddr(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8888})
		return c
	}
	for _, loc := range refused {
		c := serveAt(t, loc)
		for _, f := range []string{"html", "json", "csv", "rss"} {
			r := c.get("/search?q=%21%21g+foo&format=" + f)
			// CSV says why in its header: SearXNG's CSV error is an empty file.
			if why := r.body + r.header[HeaderError]; r.status != 502 || r.header["Location"] != "" || !strings.Contains(why, "redirects back to searxgate itself") {
				t.Errorf("%s, format %s: %d %q %.200q; want 502 naming why", loc, f, r.status, r.header["Location"], r.body)
			}
		}
	}
	for _, loc := range passed {
		c := serveAt(t, loc)
		for _, f := range []string{"html", "json"} {
			if r := c.get("/search?q=%21%21g+foo&format=" + f); r.status != 302 || r.header["Location"] == "" {
				t.Errorf("%s, format %s: %d %q; want the redirect passed on", loc, f, r.status, r.header["Location"])
			}
		}
	}
	// The Host and the listening address are the request's own: reached
	// as 127.0.0.1:18881 (the capture's instance), the capture's
	// redirect goes through and one to 18881 does not.
	for loc, want := range map[string]int{lucky.header["Location"]: 302, "http://127.0.0.1:18881/": 502} {
		_, c := serve(t, Config{Search: bangTo(loc)})
		c.ln.SetLocalAddr(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 18881})
		if r := c.get("/search?q=%21%21+foo+bar", "Host", "127.0.0.1:18881"); r.status != want {
			t.Errorf("%s from 127.0.0.1:18881: %d, want %d", loc, r.status, want)
		}
	}
}

// TestFeelingLuckyToSearxgateItself: feeling lucky whose first result is
// searxgate itself shows the results page instead of redirecting there.
func TestFeelingLuckyToSearxgateItself(t *testing.T) {
	self := strings.Replace(simpleAnswer, "https://example.org/hello", "http://gateway.test/preferences?reset=1", 1)
	_, c := serve(t, Config{Search: &fakeSearch{answer: jsonAnswer(self, "https://a.example/")}})
	r := c.get("/search?q=%21%21+hello")
	if r.status != 200 || r.header["Location"] != "" || !strings.Contains(r.body, "Hello world") {
		t.Errorf("feeling lucky to searxgate: %d %q; want the results page", r.status, r.header["Location"])
	}
	_, c = serve(t, Config{Search: &fakeSearch{answer: jsonAnswer(simpleAnswer, "https://a.example/")}})
	if r := c.get("/search?q=%21%21+hello"); r.status != 302 || r.header["Location"] != "https://example.org/hello" {
		t.Errorf("feeling lucky elsewhere: %d %q; want 302 to the first result", r.status, r.header["Location"])
	}
}
