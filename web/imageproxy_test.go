package web

import (
	"context"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"github.com/searxgate/searxgate/internal/nettest"
	"github.com/searxgate/searxgate/sim"
)

// imageHosts plays the image hosts an instance names (over plain http: the
// in-memory listener speaks no TLS), on an in-memory listener: a resolver maps names to addresses (public ones that are never
// dialled for real), and every connection the guard allows is routed to
// the listener. Nothing leaves the process.
type imageHosts struct {
	ln      *fasthttputil.InmemoryListener
	names   *nettest.Resolver // host -> addresses
	release chan struct{}     // closed at the end: unblocks /hang
	entered chan struct{}     // one send per /hang request

	mu       sync.Mutex // guards connects and reqs
	connects []string
	reqs     []seenRequest
}

type seenRequest struct {
	host, path string
	header     map[string]string
}

const publicIP = "93.184.216.34" // public, and only ever "dialled" in memory

func startImageHosts(t testing.TB) *imageHosts {
	t.Helper()
	h := &imageHosts{
		ln: fasthttputil.NewInmemoryListener(),
		names: nettest.NewResolver(nettest.Names{
			"img.example":     publicIP,
			"tracker.example": publicIP,
			"evil.example":    "127.0.0.1",
			"mixed.example":   publicIP + " 10.0.0.7",
			"rebind.example":  "192.168.1.1",
		}),
		release: make(chan struct{}),
		entered: make(chan struct{}, 4),
	}
	srv := &fasthttp.Server{Handler: h.serve}
	done := make(chan struct{})
	go func() { _ = srv.Serve(h.ln); close(done) }()
	t.Cleanup(func() { close(h.release); _ = h.ln.Close(); <-done })
	return h
}

func (h *imageHosts) serve(ctx *fasthttp.RequestCtx) {
	seen := seenRequest{host: string(ctx.Host()), path: string(ctx.Path()), header: map[string]string{}}
	for k, v := range ctx.Request.Header.All() {
		seen.header[string(k)] = string(v)
	}
	h.mu.Lock()
	h.reqs = append(h.reqs, seen)
	h.mu.Unlock()
	png := func(body string) {
		ctx.SetContentType("image/png")
		ctx.SetBodyString(body)
	}
	switch seen.path {
	case "/ok.png", "/track.gif":
		ctx.Response.Header.Set("Set-Cookie", "track=1; Path=/")
		png("PNGDATA")
	case "/page.html":
		ctx.SetContentType("text/html")
		ctx.SetBodyString("<p>not an image</p>")
	case "/logo.svg":
		ctx.SetContentType("image/svg+xml")
		ctx.SetBodyString(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`)
	case "/big.png":
		png(strings.Repeat("x", 2048))
	case "/gzip.png":
		ctx.Response.Header.Set("Content-Encoding", "gzip")
		png("\x1f\x8b")
	case "/redirect-ok":
		ctx.Redirect("/ok.png", fasthttp.StatusFound)
	case "/redirect-private":
		ctx.Redirect("http://evil.example/ok.png", fasthttp.StatusFound)
	case "/redirect-loopback":
		ctx.Redirect("http://127.0.0.1/ok.png", fasthttp.StatusMovedPermanently)
	case "/redirect-legacy":
		ctx.Redirect("http://0x7f.1/ok.png", fasthttp.StatusTemporaryRedirect)
	case "/redirect-scheme":
		ctx.Response.Header.Set("Location", "file:///etc/passwd")
		ctx.SetStatusCode(fasthttp.StatusFound)
	case "/redirect-credentials":
		ctx.Response.Header.Set("Location", "http://user:pw@img.example/ok.png")
		ctx.SetStatusCode(fasthttp.StatusFound)
	case "/loop":
		ctx.Redirect("/loop", fasthttp.StatusFound)
	case "/hang":
		h.entered <- struct{}{}
		<-h.release
	default:
		ctx.SetStatusCode(fasthttp.StatusNotFound)
	}
}

func (h *imageHosts) connect(_ context.Context, _, addr string) (net.Conn, error) {
	h.mu.Lock()
	h.connects = append(h.connects, addr)
	h.mu.Unlock()
	return h.ln.Dial()
}

func (h *imageHosts) seen() ([]string, []seenRequest) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.connects...), append([]seenRequest(nil), h.reqs...)
}

func (h *imageHosts) config() ImageConfig {
	return ImageConfig{Resolver: h.names, Connect: h.connect, MaxBytes: 1024, Timeout: 2 * time.Second, UserAgent: "searxgate/test"}
}

// hostileThumbs is an answer from an instance that names images to make
// every viewer's browser report to it.
const hostileThumbs = `{"query":"q","number_of_results":2,"results":[` +
	`{"url":"https://a.example/","title":"A","content":"c","engine":"e","thumbnail":"http://tracker.example/track.gif?q=secret&viewer=1"},` +
	`{"url":"https://b.example/","title":"B","content":"c","engine":"e","img_src":" http://tracker.example/track.gif?q=secret"},` +
	`{"url":"https://c.example/","title":"C","content":"c","engine":"e","thumbnail":"javascript:alert(1)"}],` +
	`"answers":[],"corrections":[],"infoboxes":[{"infobox":"I","content":"x","img_src":"http://tracker.example/track.gif?ib=1","urls":[],"attributes":[]}],` +
	`"suggestions":[],"unresponsive_engines":[]}`

// TestPageLoadsNoInstanceChosenImage: the page of a hostile instance's
// answer names no image but searxgate's own, the CSP forbids any other,
// and the proxied link fetches the image without anything of the viewer.
func TestPageLoadsNoInstanceChosenImage(t *testing.T) {
	hosts := startImageHosts(t)
	fs := &fakeSearch{answer: jsonAnswer(hostileThumbs, "https://hostile.example/")}
	_, c := serve(t, Config{Search: fs, Images: hosts.config()})
	r := c.get("/search?q=q", "Cookie", "session=viewer", "Referer", "https://gateway.test/private")
	if r.status != 200 {
		t.Fatalf("status %d", r.status)
	}
	if csp := r.header["Content-Security-Policy"]; !strings.Contains(csp, "img-src 'self' data:;") {
		t.Errorf("CSP %q allows images from elsewhere", csp)
	}
	assertSafePage(t, r.body)
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	var links []string
	doc.Find("img, picture, source, [srcset], [background], [poster]").Each(func(_ int, el *goquery.Selection) {
		if _, ok := el.Attr("srcset"); ok {
			t.Errorf("an element with srcset: %v", el.Nodes[0].Attr)
		}
		src, _ := el.Attr("src")
		if !strings.HasPrefix(src, "/image_proxy?") {
			t.Errorf("<%s src=%q>: an image the browser would load from elsewhere", goquery.NodeName(el), src)
		}
		links = append(links, src)
	})
	// The img_src with a leading space is no http(s) URL: detect blanks it
	// as it reads the answer.
	if len(links) != 2 {
		t.Fatalf("%d images, want the good thumbnail and the infobox image: %q", len(links), links)
	}
	if _, reqs := hosts.seen(); len(reqs) != 0 {
		t.Fatalf("rendering the page fetched %d images", len(reqs))
	}
	for _, l := range links {
		img := c.get(l, "Cookie", "session=viewer", "Referer", "https://gateway.test/search?q=q", "X-Forwarded-For", "198.51.100.9")
		if img.status != 200 || img.body != "PNGDATA" || img.header["Content-Type"] != "image/png" {
			t.Errorf("%s: %d %q %q", l, img.status, img.header["Content-Type"], img.body)
		}
		if _, ok := img.header["Set-Cookie"]; ok {
			t.Errorf("%s: the image host's cookie reached the browser", l)
		}
	}
	connects, reqs := hosts.seen()
	if len(reqs) != len(links) {
		t.Fatalf("%d image requests, want %d", len(reqs), len(links))
	}
	for _, a := range connects {
		if a != net.JoinHostPort(publicIP, "443") && a != net.JoinHostPort(publicIP, "80") {
			t.Errorf("connected to %s", a)
		}
	}
	for _, rq := range reqs {
		if rq.host != "tracker.example" || rq.path != "/track.gif" {
			t.Errorf("fetched %s%s", rq.host, rq.path)
		}
		for _, h := range []string{"Cookie", "Referer", "X-Forwarded-For", "Forwarded", "X-Real-Ip", "Accept-Language"} {
			if v, ok := rq.header[h]; ok {
				t.Errorf("the image host got %s: %q", h, v)
			}
		}
		if rq.header["User-Agent"] != "searxgate/test" {
			t.Errorf("User-Agent %q", rq.header["User-Agent"])
		}
	}
}

// TestImageProxyRefuses: /image_proxy is no open proxy and no way into
// the network searxgate runs in.
func TestImageProxyRefuses(t *testing.T) {
	hosts := startImageHosts(t)
	s, c := serve(t, Config{Search: &fakeSearch{}, Images: hosts.config()})
	signed := func(u string) string {
		return "/image_proxy?" + url.Values{"url": {u}, "h": {s.images.sign(u)}}.Encode()
	}
	tests := []struct {
		name    string
		uri     string
		status  int
		fetches bool // whether any request reaches an image host
	}{
		{"signed", signed("http://img.example/ok.png"), 200, true},
		{"no url", "/image_proxy", 400, false},
		{"no signature", "/image_proxy?url=" + url.QueryEscape("https://img.example/ok.png"), 400, false},
		{"wrong signature", "/image_proxy?url=" + url.QueryEscape("https://img.example/ok.png") + "&h=" + s.images.sign("https://img.example/other.png"), 400, false},
		{"signature not hex", "/image_proxy?url=" + url.QueryEscape("https://img.example/ok.png") + "&h=zz", 400, false},
		{"signature of another key", "/image_proxy?url=x&h=" + strings.Repeat("0", 64), 400, false},
		{"name resolving to loopback", signed("http://evil.example/ok.png"), 502, false},
		{"name resolving to private", signed("http://rebind.example/ok.png"), 502, false},
		{"one private address among public", signed("http://mixed.example/ok.png"), 502, false},
		{"literal loopback", signed("http://127.0.0.1/ok.png"), 502, false},
		{"literal IPv6 loopback", signed("http://[::1]/ok.png"), 502, false},
		{"legacy loopback form", signed("http://2130706433/ok.png"), 502, false},
		{"localhost", signed("http://localhost/ok.png"), 502, false},
		{"metadata address", signed("http://169.254.169.254/latest/meta-data"), 502, false},
		{"not http", signed("file:///etc/passwd"), 502, false},
		{"unknown host", signed("https://nowhere.example/ok.png"), 502, false},
		{"redirect followed", signed("http://img.example/redirect-ok"), 200, true},
		{"redirect to a private name", signed("http://img.example/redirect-private"), 502, true},
		{"redirect to loopback", signed("http://img.example/redirect-loopback"), 502, true},
		{"redirect to a legacy loopback form", signed("http://img.example/redirect-legacy"), 502, true},
		{"redirect to another scheme", signed("http://img.example/redirect-scheme"), 502, true},
		{"redirect with credentials", signed("http://img.example/redirect-credentials"), 502, true},
		{"redirect loop", signed("http://img.example/loop"), 502, true},
		{"not an image", signed("http://img.example/page.html"), 502, true},
		{"svg", signed("http://img.example/logo.svg"), 502, true},
		{"too large", signed("http://img.example/big.png"), 502, true},
		{"encoded", signed("http://img.example/gzip.png"), 502, true},
		{"missing", signed("http://img.example/missing.png"), 502, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, before := hosts.seen()
			r := c.get(tt.uri)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %q", r.status, tt.status, r.body)
			}
			connects, after := hosts.seen()
			if fetched := len(after) > len(before); fetched != tt.fetches {
				t.Errorf("reached an image host: %v, want %v", fetched, tt.fetches)
			}
			for _, a := range connects {
				if a != net.JoinHostPort(publicIP, "443") && a != net.JoinHostPort(publicIP, "80") {
					t.Fatalf("connected to %s", a)
				}
			}
			for _, rq := range after[len(before):] {
				if rq.host != "img.example" {
					t.Errorf("a request reached %s%s", rq.host, rq.path)
				}
			}
			if tt.status == 200 && (r.body != "PNGDATA" || r.header["Content-Type"] != "image/png") {
				t.Errorf("%q %q", r.header["Content-Type"], r.body)
			}
		})
	}
}

// TestImageProxyBounds: a host that never answers is given up at the
// deadline, and fetches past MaxConcurrent are refused at once.
func TestImageProxyBounds(t *testing.T) {
	hosts := startImageHosts(t)
	cfg := hosts.config()
	cfg.MaxConcurrent = 1
	cfg.Timeout = 300 * time.Millisecond
	s, c := serve(t, Config{Search: &fakeSearch{}, Images: cfg})
	hang := s.images.link("http://img.example/hang")
	first := make(chan reply, 1)
	go func() { first <- c.get(hang) }()
	<-hosts.entered // the first fetch holds the only slot
	if r := c.get(s.images.link("http://img.example/ok.png")); r.status != 503 {
		t.Errorf("a fetch past MaxConcurrent: %d, want 503", r.status)
	}
	if r := <-first; r.status != 502 {
		t.Errorf("a host that never answers: %d, want 502", r.status)
	}
	if r := c.get(s.images.link("http://img.example/ok.png")); r.status != 200 {
		t.Errorf("the slot was not given back: %d", r.status)
	}
}

// TestImagesOff: with Images.Off the page shows no image at all and
// /image_proxy fetches nothing.
func TestImagesOff(t *testing.T) {
	hosts := startImageHosts(t)
	cfg := hosts.config()
	cfg.Off = true
	fs := &fakeSearch{answer: jsonAnswer(hostileThumbs, "https://hostile.example/")}
	s, c := serve(t, Config{Search: fs, Images: cfg})
	r := c.get("/search?q=q")
	if r.status != 200 || strings.Contains(r.body, "<img") || strings.Contains(r.body, "tracker.example") {
		t.Fatalf("%d: the page shows images:\n%s", r.status, r.body)
	}
	u := "https://img.example/ok.png"
	if r := c.get("/image_proxy?" + url.Values{"url": {u}, "h": {s.images.sign(u)}}.Encode()); r.status != 400 {
		t.Errorf("/image_proxy with images off: %d", r.status)
	}
	if _, reqs := hosts.seen(); len(reqs) != 0 {
		t.Errorf("%d fetches with images off", len(reqs))
	}
}

// TestImageLinks: only http(s) images get a link, and a link signs the
// URL it carries.
func TestImageLinks(t *testing.T) {
	ip, err := newImageProxy(ImageConfig{Key: []byte("k")}, "1")
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"https://i.example/a.png": "https://i.example/a.png",
		"//i.example/a.png":       "https://i.example/a.png",
		"javascript:alert(1)":     "",
		"data:image/png;base64,A": "",
		"":                        "",
		// A thumbnail the URL itself says is not public is dropped.
		"http://127.0.0.1:8080/a.png": "",
		"http://[::1]/a.png":          "",
		"http://10.1.2.3/a.png":       "",
		"http://localhost/a.png":      "",
	} {
		l := ip.link(in)
		if want == "" {
			if l != "" {
				t.Errorf("link(%q) = %q, want none", in, l)
			}
			continue
		}
		q, err := url.ParseQuery(strings.TrimPrefix(l, "/image_proxy?"))
		if err != nil || !strings.HasPrefix(l, "/image_proxy?") || q.Get("url") != want || !ip.valid(want, q.Get("h")) {
			t.Errorf("link(%q) = %q", in, l)
		}
	}
	// Its own switch lets them through (--image-proxy-allow-private).
	private, _ := newImageProxy(ImageConfig{Key: []byte("k"), AllowPrivate: true}, "1")
	if private.link("http://127.0.0.1:8080/a.png") == "" {
		t.Error("with AllowPrivate, a loopback thumbnail is dropped")
	}
	other, _ := newImageProxy(ImageConfig{}, "1")
	if other.valid("https://i.example/a.png", ip.sign("https://i.example/a.png")) {
		t.Error("a random key accepts another key's signature")
	}
}

// TestLiveFleetThumbnails: the thumbnails sim instances serve (on their
// own loopback address, so the image proxy's own switch lets them
// through) reach the page only as searxgate's own links, through the real
// proxy and its HTML and JSON readers.
func TestLiveFleetThumbnails(t *testing.T) {
	for _, json := range []bool{true, false} {
		lf := startLive(t, []sim.InstanceConfig{{ID: "thumbs", Behaviour: sim.Fast, JSON: json, Latency: -1}})
		_, c := serve(t, Config{Proxy: lf.proxy, Pool: lf.pool, Images: ImageConfig{AllowPrivate: true}})
		r := c.get("/search?q=thumbnail+test")
		if r.status != 200 {
			t.Fatalf("json %v: status %d", json, r.status)
		}
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(r.body))
		if err != nil {
			t.Fatal(err)
		}
		imgs := doc.Find("img")
		if imgs.Length() == 0 {
			t.Fatalf("json %v: no thumbnail on the page: the test shows nothing", json)
		}
		imgs.Each(func(_ int, el *goquery.Selection) {
			if src, _ := el.Attr("src"); !strings.HasPrefix(src, "/image_proxy?") {
				t.Errorf("json %v: <img src=%q>", json, src)
			}
		})
	}
}

// TestImageProxyManyFromOneHost: a page's thumbnails that share a host all
// arrive, more of them than connections to that host.
func TestImageProxyManyFromOneHost(t *testing.T) {
	hosts := startImageHosts(t)
	s, c := serve(t, Config{Search: &fakeSearch{}, Images: hosts.config()})
	const n = 24
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses <- c.get(s.images.link("http://img.example/ok.png")).status
		}()
	}
	wg.Wait()
	close(statuses)
	for st := range statuses {
		if st != 200 {
			t.Errorf("a thumbnail: %d", st)
		}
	}
}

// BenchmarkImageProxy: one thumbnail through /image_proxy, in memory end
// to end: the handler, the guarded fetcher, the image host.
func BenchmarkImageProxy(b *testing.B) {
	hosts := startImageHosts(b)
	s, c := serve(b, Config{Search: &fakeSearch{}, Images: hosts.config()})
	link := s.images.link("http://img.example/ok.png")
	b.ReportAllocs()
	for b.Loop() {
		if r := c.get(link); r.status != 200 {
			b.Fatalf("status %d", r.status)
		}
	}
}
