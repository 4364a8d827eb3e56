package web

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/egress"
)

// ImageConfig is how /image_proxy fetches the thumbnails and images of
// results, so that a browser never loads an address an instance chose.
// The zero value proxies images with the defaults below.
type ImageConfig struct {
	// Off leaves images out of the pages instead of proxying them.
	Off bool
	// Key signs image links (HMAC-SHA256), so /image_proxy fetches only
	// what a page of ours linked; nil = a random key per process (a page
	// from before a restart loses its images).
	Key []byte
	// AllowPrivate lets fetches reach loopback and private addresses
	// (--image-proxy-allow-private: its own switch, not --allow-private's).
	AllowPrivate bool
	// Resolver resolves image hosts; nil = the system's.
	Resolver egress.IPResolver
	// Connect opens a connection to an address the guard allowed
	// ("ip:port"); nil = a plain TCP dial. Tests route it to loopback.
	Connect func(ctx context.Context, network, addr string) (net.Conn, error)
	// Proxy is the outbound HTTP proxy (HTTPS_PROXY, NO_PROXY), as for
	// every fetch: the guard checks the target first, and the proxy is
	// asked for the checked address. Nil: direct.
	Proxy egress.ProxyFunc
	// TLS is the client TLS configuration (--ca-file's roots); nil: the
	// system's.
	TLS *tls.Config
	// MaxBytes caps an image (default 5 MiB, as SearXNG's image_proxy).
	MaxBytes int
	// Timeout bounds one fetch, redirects included (default 5 s).
	Timeout time.Duration
	// MaxRedirects bounds the redirects followed (default 3).
	MaxRedirects int
	// MaxConcurrent bounds the fetches in flight; past it /image_proxy
	// answers 503 at once (default 32).
	MaxConcurrent int
	// UserAgent is sent with each fetch (default "searxgate/<version>").
	UserAgent string
}

// imageTypes are the image types /image_proxy passes on. SVG is left out:
// it is a document that can carry script and links.
var imageTypes = map[string]bool{
	"image/avif": true, "image/bmp": true, "image/gif": true, "image/jpeg": true, "image/png": true,
	"image/webp": true, "image/x-icon": true, "image/vnd.microsoft.icon": true,
}

// Errors of an image fetch; each answers 502 (the browser shows no image).
var (
	errImageAddress  = errors.New("image: not a public address")
	errImageURL      = errors.New("image: not an http(s) URL")
	errImageStatus   = errors.New("image: status is not 200")
	errImageType     = errors.New("image: not an image type served")
	errImageRedirect = errors.New("image: too many redirects")
)

// imageProxy fetches images for /image_proxy.
type imageProxy struct {
	cfg     ImageConfig
	fetcher *egress.Fetcher
	slots   chan struct{} // one token per fetch in flight
	macs    sync.Pool     // of hash.Hash: HMAC-SHA256 under cfg.Key
}

func newImageProxy(cfg ImageConfig, version string) (*imageProxy, error) {
	if len(cfg.Key) == 0 {
		cfg.Key = make([]byte, 32)
		if _, err := rand.Read(cfg.Key); err != nil {
			return nil, fmt.Errorf("web: image proxy key: %w", err)
		}
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = 5 << 20
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.MaxRedirects <= 0 {
		cfg.MaxRedirects = 3
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = 32
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "searxgate/" + version
	}
	ip := &imageProxy{cfg: cfg, slots: make(chan struct{}, cfg.MaxConcurrent)}
	ip.macs.New = func() any { return hmac.New(sha256.New, cfg.Key) }
	// The one guarded fetcher: the guard checks the URL and every hop, the
	// dialer every address a name resolves to, so that neither a URL nor
	// a redirect nor a name that changes its answer (DNS rebinding)
	// points searxgate into the network it runs in.
	ip.fetcher = egress.NewFetcher(egress.Config{
		AllowPrivate: cfg.AllowPrivate, Resolver: cfg.Resolver, Connect: cfg.Connect, DialTimeout: cfg.Timeout,
		Proxy: cfg.Proxy, TLS: cfg.TLS, UserAgent: cfg.UserAgent,
		MaxBytes: int64(cfg.MaxBytes), Timeout: cfg.Timeout, MaxRedirects: cfg.MaxRedirects,
		// A redirect carries no credentials, as the first URL does not.
		OnRedirect: func(req *http.Request) error {
			if req.URL.User != nil {
				return errImageURL
			}
			return nil
		},
		// A page's thumbnails often share one host: they wait for a
		// connection rather than fail.
		MaxConnsPerHost: 8, IdleConnsPerHost: 8,
	})
	return ip, nil
}

// sign is the HMAC of an image URL, in hex, as SearXNG's image_proxy
// signs its links.
func (ip *imageProxy) sign(u string) string {
	var sum [sha256.Size]byte
	return hex.EncodeToString(ip.mac(u, sum[:0]))
}

// mac appends the HMAC-SHA256 of u under the key to dst. A page signs a
// link per thumbnail: the HMACs are pooled rather than made each time.
func (ip *imageProxy) mac(u string, dst []byte) []byte {
	m := ip.macs.Get().(hash.Hash)
	m.Reset()
	m.Write([]byte(u))
	dst = m.Sum(dst)
	ip.macs.Put(m)
	return dst
}

// link is the page's address for an upstream image: /image_proxy with the
// URL and its signature, or "" when u is not an http(s) URL, the URL
// itself says it is not public (a thumbnail a hostile instance pointed at
// the gateway's own network: dropped), or images are off.
func (ip *imageProxy) link(u string) string {
	u = safeURL(u)
	if u == "" || ip.cfg.Off {
		return ""
	}
	if pu, err := url.Parse(u); err != nil || ip.checkURL(pu) != nil {
		return ""
	}
	return "/image_proxy?" + url.Values{"url": {u}, "h": {ip.sign(u)}}.Encode()
}

// valid reports whether h is the signature of u.
func (ip *imageProxy) valid(u, h string) bool {
	got, err := hex.DecodeString(h)
	if err != nil {
		return false
	}
	var sum [sha256.Size]byte
	return hmac.Equal(got, ip.mac(u, sum[:0]))
}

// checkURL refuses what is not an http(s) URL with a host, and what the
// URL itself says is not public (a literal address in any of the forms
// resolvers accept, a localhost name); names are checked where they are
// dialled.
func (ip *imageProxy) checkURL(u *url.URL) error {
	if (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil {
		return errImageURL
	}
	if err := (egress.Guard{AllowPrivate: ip.cfg.AllowPrivate}).CheckLiteral(u.String()); err != nil {
		return fmt.Errorf("%w: %w", errImageAddress, err)
	}
	return nil
}

// fetch gets one image, following at most MaxRedirects redirects, each
// one checked; it returns the image's media type and bytes.
func (ip *imageProxy) fetch(raw string) (string, []byte, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", nil, errImageURL
	}
	if err := ip.checkURL(u); err != nil {
		return "", nil, err
	}
	// Nothing of the browser's: no cookie, no referrer, no language, no
	// address; only what an image fetch needs. The fetcher bounds the
	// time (the network keeps real time, whatever clock the server was
	// given).
	resp, err := ip.fetcher.Get(context.Background(), u.String(), imageHeader)
	switch {
	case errors.Is(err, egress.ErrTooManyRedirects):
		return "", nil, fmt.Errorf("%w: %w", errImageRedirect, err)
	case errors.Is(err, egress.ErrNotPublic), errors.Is(err, egress.ErrPrivateAddress):
		return "", nil, fmt.Errorf("%w: %w", errImageAddress, err)
	case err != nil:
		return "", nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", nil, fmt.Errorf("%w: %d", errImageStatus, resp.StatusCode)
	}
	ct := resp.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || !imageTypes[mt] {
		return "", nil, fmt.Errorf("%w: %q", errImageType, ct)
	}
	if enc := strings.ToLower(resp.Header.Get("Content-Encoding")); enc != "" && enc != "identity" {
		return "", nil, fmt.Errorf("%w: encoded %q", errImageType, enc)
	}
	body, err := resp.ReadAll()
	if err != nil {
		return "", nil, err
	}
	return mt, body, nil
}

// imageHeader is what an image fetch sends besides the User-Agent; it is
// only read.
var imageHeader = http.Header{
	"Accept":          {"image/avif,image/webp,image/png,image/jpeg,image/gif,image/*;q=0.8"},
	"Accept-Encoding": {"identity"},
}

// imageProxyHandler serves /image_proxy?url=...&h=...: the image at url,
// when h signs it, fetched through the guard. A bad or missing signature
// answers 400 (as SearXNG), a failed fetch 502, too many fetches 503.
func (s *Server) imageProxyHandler(ctx *fasthttp.RequestCtx) {
	ip := s.images
	raw := string(ctx.QueryArgs().Peek("url"))
	if ip.cfg.Off || raw == "" || !ip.valid(raw, string(ctx.QueryArgs().Peek("h"))) {
		plainError(ctx, fasthttp.StatusBadRequest, "Bad Request")
		return
	}
	select {
	case ip.slots <- struct{}{}:
		defer func() { <-ip.slots }()
	default:
		plainError(ctx, fasthttp.StatusServiceUnavailable, "Service Unavailable")
		return
	}
	mt, body, err := ip.fetch(raw)
	if err != nil {
		s.log.Debug("image not proxied", "err", err)
		plainError(ctx, fasthttp.StatusBadGateway, "Bad Gateway")
		return
	}
	ctx.SetContentType(mt)
	ctx.Response.Header.Set("Cache-Control", "private, max-age=86400")
	ctx.Response.Header.Set("Content-Disposition", "inline")
	ctx.SetBody(body)
}
