package sim

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"
)

// Truth is what one instance saw, for tests to judge how its clients
// treated it. Counters only grow until Fleet.ResetTruth.
type Truth struct {
	ID        string    `json:"id"`
	Behaviour Behaviour `json:"behaviour"`
	// Requests counts every HTTP request the instance read.
	Requests uint64 `json:"requests"`
	// Searches counts requests to /search (GET or POST), answered or not.
	Searches uint64 `json:"searches"`
	// Refusals counts answers that told the client to go away: 429,
	// the limiter's 302, 403 on a disabled format, challenge pages, 503.
	Refusals uint64 `json:"refusals"`
	// ConfigReads counts requests to /config.
	ConfigReads uint64 `json:"config_reads"`
	// InsideRetryAfter counts searches that arrived while a refusal the
	// client had already been given (an announced Retry-After, or the
	// limiter window that refused it) was still running for that client.
	InsideRetryAfter uint64 `json:"inside_retry_after"`
	// BotViolations counts searches whose headers SearXNG's bot check
	// refuses: a missing or bot User-Agent, an Accept without text/html or
	// */*, an Accept-Encoding without gzip or deflate, no Accept-Language.
	BotViolations uint64 `json:"bot_violations"`
	// ClientLeaks counts requests carrying X-Forwarded-For, Forwarded,
	// X-Real-IP, Cookie or Via.
	ClientLeaks uint64 `json:"client_leaks"`
	// LastUserAgent and LastAcceptLanguage are the headers of the last
	// request.
	LastUserAgent      string `json:"last_user_agent"`
	LastAcceptLanguage string `json:"last_accept_language"`
	// LastSearch is the SearXNG parameters of the last search (language,
	// safesearch, categories, time_range) as they came, absent ones left
	// out.
	LastSearch map[string]string `json:"last_search,omitempty"`
	// Formats counts searches by the format asked ("html" when none).
	Formats map[string]uint64 `json:"formats"`
	// NoResults counts searches answered in full with 200, no result
	// and no unresponsive engine because their query finds nothing
	// (NoResultsPrefix): SearXNG's honest "nothing found".
	NoResults uint64 `json:"no_results"`
}

func (t Truth) clone() Truth {
	f := make(map[string]uint64, len(t.Formats))
	for k, v := range t.Formats {
		f[k] = v
	}
	t.Formats = f
	if t.LastSearch != nil {
		l := make(map[string]string, len(t.LastSearch))
		for k, v := range t.LastSearch {
			l[k] = v
		}
		t.LastSearch = l
	}
	return t
}

// Instance is one simulated SearXNG instance of a fleet.
type Instance struct {
	f        *Fleet
	cfg      InstanceConfig // with defaults
	addr     string         // "host:port"
	url      string         // "http://host:port/"
	port     int
	site     site
	token    string // link token of the limiter's stylesheet
	offq     string // the query an OffTopic instance answers
	server   *fasthttp.Server
	mem      *fasthttputil.InmemoryListener // InMemory fleets; nil for Dead
	ln       net.Listener                   // TCP fleets; nil for Dead
	reserved io.Closer                      // a Dead instance's port in a TCP fleet, bound but not listening

	mu       sync.Mutex // guards truth, clients, rnd, answered
	truth    Truth
	clients  map[string]*client
	rnd      *rand.Rand
	answered int // searches answered so far (Degrading)
}

// client is what an instance remembers about one client address.
type client struct {
	api, burst, long          window // limiter
	susp, suspBurst, suspLong window // link token
	pingedUntil               time.Time
	rlStart                   time.Time // RateLimit* counting window
	rlCount                   int
	penaltyUntil              time.Time // RateLimit* refusal
	unavailableUntil          time.Time // Unavailable503's Retry-After
}

// window is one of SearXNG's sliding windows: it counts every request in
// the last d, refused ones included, as redislib.incr_sliding_window does.
type window struct {
	times        []time.Time
	blockedUntil time.Time // the window refused this client until then
}

func (w *window) incr(now time.Time, d time.Duration) int {
	cut := now.Add(-d)
	i := 0
	for i < len(w.times) && !w.times[i].After(cut) {
		i++
	}
	w.times = append(w.times[:0], w.times[i:]...)
	w.times = append(w.times, now)
	return len(w.times)
}

// ID returns the instance's id.
func (in *Instance) ID() string { return in.cfg.ID }

// Behaviour returns the instance's behaviour.
func (in *Instance) Behaviour() Behaviour { return in.cfg.Behaviour }

// URL returns the instance's base URL, "http://127.0.0.1:PORT/".
func (in *Instance) URL() string { return in.url }

// Addr returns the instance's "host:port".
func (in *Instance) Addr() string { return in.addr }

// Config returns the instance's configuration with its defaults filled in.
func (in *Instance) Config() InstanceConfig { return in.cfg }

// Truth returns a copy of what the instance saw.
func (in *Instance) Truth() Truth {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.truth.clone()
}

// ResetTruth zeroes the counters and forgets every client (limiter
// windows, Retry-After windows, link-token counts).
func (in *Instance) ResetTruth() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.truth = Truth{ID: in.cfg.ID, Behaviour: in.cfg.Behaviour, Formats: map[string]uint64{}}
	in.clients = map[string]*client{}
	in.answered = 0
}

// clientLocked returns the state of the client at addr; in.mu is held.
func (in *Instance) clientLocked(addr string) *client {
	c := in.clients[addr]
	if c == nil {
		c = &client{}
		in.clients[addr] = c
	}
	return c
}

// search is what a search request asked.
type search struct {
	q      string
	format string // lowercased; "html" when absent
	pageno int
	params map[string]string // language, safesearch, categories, time_range: those given
}

// searchParams are the parameters Truth.LastSearch keeps.
var searchParams = []string{"language", "safesearch", "categories", "time_range"}

// images reports whether the search asks for the images category.
func (s search) images() bool {
	for c := range strings.SplitSeq(s.params["categories"], ",") {
		if strings.TrimSpace(c) == "images" {
			return true
		}
	}
	return false
}

func parseSearch(ctx *fasthttp.RequestCtx) search {
	s := search{
		q:      strings.TrimSpace(string(ctx.FormValue("q"))),
		format: strings.ToLower(string(ctx.FormValue("format"))),
		pageno: 1,
		params: map[string]string{},
	}
	for _, name := range searchParams {
		if v := ctx.FormValue(name); v != nil {
			s.params[name] = string(v)
		}
	}
	if s.format == "" {
		s.format = "html"
	}
	if n, err := strconv.Atoi(string(ctx.FormValue("pageno"))); err == nil && n > 0 {
		s.pageno = min(n, 1000)
	}
	return s
}

// formatKey is the key of Truth.Formats for a format asked.
func formatKey(f string) string {
	if len(f) > 16 {
		return "other"
	}
	return f
}

// clientAddr is the address the instance counts a request against: the
// first X-Forwarded-For entry if any (as an instance configured to trust
// its proxy does), else the peer's IP.
func clientAddr(ctx *fasthttp.RequestCtx) string {
	if xff := ctx.Request.Header.Peek("X-Forwarded-For"); len(xff) > 0 {
		first, _, _ := strings.Cut(string(xff), ",")
		if first = strings.TrimSpace(first); first != "" {
			return first
		}
	}
	if a, ok := ctx.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	return ctx.RemoteAddr().String()
}

// handle serves one request. The clock is read once.
func (in *Instance) handle(ctx *fasthttp.RequestCtx) {
	now := in.f.now()
	path := string(ctx.Path())
	h := &ctx.Request.Header
	isSearch := path == "/search"
	var s search
	if isSearch {
		s = parseSearch(ctx)
	}
	addr := clientAddr(ctx)
	uaBad := botUserAgent(h)
	searchBad := isSearch && (uaBad || badSearchHeaders(h) != "")

	in.mu.Lock()
	in.truth.Requests++
	if leaks(h) {
		in.truth.ClientLeaks++
	}
	in.truth.LastUserAgent = string(h.UserAgent())
	in.truth.LastAcceptLanguage = string(h.Peek("Accept-Language"))
	if isSearch {
		in.truth.Searches++
		in.truth.Formats[formatKey(s.format)]++
		in.truth.LastSearch = nil
		if len(s.params) > 0 {
			in.truth.LastSearch = s.params
		}
		if searchBad {
			in.truth.BotViolations++
		}
	}
	if path == "/config" {
		in.truth.ConfigReads++
	}
	in.mu.Unlock()

	b := in.cfg.Behaviour
	if b.wholeSite() && in.siteWide(ctx, now, addr, isSearch) {
		return
	}
	if b.limiterOn() && path != "/healthz" && in.limit(ctx, now, addr, path, s, uaBad) {
		return
	}
	switch {
	case path == "/search":
		in.search(ctx, now, addr, s)
	case path == "/healthz":
		in.send(ctx, 200, "text/plain; charset=utf-8", []byte("OK"))
	case path == "/config":
		in.send(ctx, 200, "application/json", writeConfig(&in.site))
	case path == "/":
		in.send(ctx, 200, "text/html; charset=utf-8", []byte(writeIndex(&in.site)))
	case path == "/opensearch.xml":
		in.send(ctx, 200, "application/opensearchdescription+xml; charset=utf-8", []byte(writeOpenSearch(&in.site)))
	case path == "/autocompleter":
		in.autocomplete(ctx)
	case strings.HasPrefix(path, "/sim/img/"):
		// The images of image results: small PNGs, so that a client's
		// image proxy has something real to fetch.
		in.send(ctx, 200, "image/png", simImage(path))
	case strings.HasPrefix(path, "/sim/page/"):
		// The pages results link to with Config.LocalLinks.
		in.send(ctx, 200, "text/html; charset=utf-8", simPage(path))
	case strings.HasPrefix(path, "/client") && strings.HasSuffix(path, ".css"):
		if in.site.TokenCSS != "" && path == in.site.TokenCSS {
			in.mu.Lock()
			in.clientLocked(addr).pingedUntil = now.Add(time.Hour)
			in.mu.Unlock()
		}
		in.send(ctx, 200, "text/css; charset=utf-8", nil)
	default:
		in.send(ctx, 404, "text/html; charset=utf-8", []byte(write404(&in.site)))
	}
}

// siteWide answers for the behaviours that own every path; false lets the
// request through (a Flapping instance that is up).
func (in *Instance) siteWide(ctx *fasthttp.RequestCtx, now time.Time, addr string, isSearch bool) bool {
	cfg := &in.cfg
	switch cfg.Behaviour {
	case Flapping:
		if in.f.flapUp(now, cfg.FlapPeriod) {
			return false
		}
		in.sendAs(ctx, "nginx", 502, "text/html", []byte(nginx502))
	case Unavailable503:
		in.mu.Lock()
		c := in.clientLocked(addr)
		if isSearch && now.Before(c.unavailableUntil) {
			in.truth.InsideRetryAfter++
		}
		c.unavailableUntil = now.Add(cfg.RetryAfter)
		in.truth.Refusals++
		in.mu.Unlock()
		ctx.Response.Header.Set("Retry-After", strconv.Itoa(ceilSeconds(cfg.RetryAfter)))
		in.sendAs(ctx, "nginx", 503, "text/html", []byte(nginx503))
	case CloudflareChallenge403, CloudflareChallenge200:
		in.refused()
		status := 200
		if cfg.Behaviour == CloudflareChallenge403 {
			status = 403
			ctx.Response.Header.Set("cf-mitigated", "challenge")
		}
		ctx.Response.Header.Set("cf-ray", "8d2f3a1b9c0e4f21-FRA")
		ctx.Response.Header.Set("Cache-Control", "private, max-age=0, no-store, no-cache, must-revalidate, post-check=0, pre-check=0")
		in.sendAs(ctx, "cloudflare", status, "text/html; charset=UTF-8", []byte(cloudflareBody))
	case AnubisChallenge:
		in.refused()
		in.sendAs(ctx, "", 200, "text/html; charset=utf-8", []byte(anubisBody))
	case DDoSGuard:
		in.refused()
		ctx.Response.Header.Set("Set-Cookie", "__ddg1_=simddg"+in.token+"; Domain=127.0.0.1; HttpOnly; Path=/; Expires="+now.Add(365*24*time.Hour).UTC().Format(http.TimeFormat))
		in.sendAs(ctx, "ddos-guard", 403, "text/html; charset=utf-8", []byte(ddosGuardBody))
	default:
		return false
	}
	return true
}

// refused counts one refusal.
func (in *Instance) refused() {
	in.mu.Lock()
	in.truth.Refusals++
	in.mu.Unlock()
}

// limit runs SearXNG's limiter (searx/limiter.py and
// searx/botdetection/ip_limit.py as of 2024.10.5) and answers when it
// refuses. The windows count per client address.
func (in *Instance) limit(ctx *fasthttp.RequestCtx, now time.Time, addr, path string, s search, uaBad bool) bool {
	h := &ctx.Request.Header
	if uaBad {
		in.refused()
		in.tooMany(ctx)
		return true
	}
	if path != "/search" {
		return false
	}
	if badSearchHeaders(h) != "" {
		in.refused()
		in.tooMany(ctx)
		return true
	}
	if in.cfg.SecFetch && claimsBrowser(string(h.UserAgent())) && len(h.Peek("Sec-Fetch-Mode")) == 0 {
		in.refused()
		in.redirect(ctx, 302, "/")
		return true
	}
	cfg := &in.cfg
	in.mu.Lock()
	c := in.clientLocked(addr)
	refuse := func(w *window, d time.Duration) {
		in.truth.Refusals++
		if now.Before(w.blockedUntil) {
			in.truth.InsideRetryAfter++
		}
		w.blockedUntil = now.Add(d)
	}
	verdict := 0 // 0 pass, 429, 302
	switch {
	case s.format != "html" && c.api.incr(now, time.Hour) > cfg.LimiterAPIPerHour:
		refuse(&c.api, time.Hour)
		verdict = 429
	case cfg.Behaviour == LinkToken:
		const month = 30 * 24 * time.Hour
		switch {
		case now.Before(c.pingedUntil):
			c.susp = window{}
		case c.susp.incr(now, month) > 3:
			refuse(&c.susp, month)
			verdict = 302
		case c.suspBurst.incr(now, 20*time.Second) > 2:
			refuse(&c.suspBurst, 20*time.Second)
			verdict = 429
		case c.suspLong.incr(now, 10*time.Minute) > 10:
			refuse(&c.suspLong, 10*time.Minute)
			verdict = 429
		}
	case c.burst.incr(now, 20*time.Second) > cfg.LimiterHTML20s:
		refuse(&c.burst, 20*time.Second)
		verdict = 429
	case c.long.incr(now, 10*time.Minute) > cfg.LimiterHTML10m:
		refuse(&c.long, 10*time.Minute)
		verdict = 429
	}
	in.mu.Unlock()
	switch verdict {
	case 429:
		in.tooMany(ctx)
	case 302:
		in.redirect(ctx, 302, "/")
	default:
		return false
	}
	return true
}

// tooMany answers SearXNG's 429: no Retry-After.
func (in *Instance) tooMany(ctx *fasthttp.RequestCtx) {
	in.send(ctx, 429, "text/html; charset=utf-8", []byte(tooManyBody))
}

// redirect answers a Werkzeug redirect to location.
func (in *Instance) redirect(ctx *fasthttp.RequestCtx, status int, location string) {
	ctx.Response.Header.Set("Location", location)
	e := esc(location)
	in.send(ctx, status, "text/html; charset=utf-8", []byte(fmt.Sprintf(redirectBody, e, e)))
}

// rateLimited applies a RateLimit* behaviour; true when it answered 429.
func (in *Instance) rateLimited(ctx *fasthttp.RequestCtx, now time.Time, addr string) bool {
	cfg := &in.cfg
	in.mu.Lock()
	c := in.clientLocked(addr)
	var until time.Time
	switch {
	case now.Before(c.penaltyUntil):
		in.truth.InsideRetryAfter++
		until = c.penaltyUntil
	default:
		if c.rlStart.IsZero() || now.Sub(c.rlStart) >= cfg.RateWindow {
			c.rlStart, c.rlCount = now, 0
		}
		c.rlCount++
		if c.rlCount > cfg.RateBurst {
			// The refusal lasts until a whole second, so that the
			// announced Retry-After is never shorter than it.
			until = now.Add(cfg.RetryAfter)
			if frac := until.Sub(until.Truncate(time.Second)); frac > 0 {
				until = until.Add(time.Second - frac)
			}
			c.penaltyUntil = until
			c.rlStart, c.rlCount = time.Time{}, 0
		}
	}
	if !until.IsZero() {
		in.truth.Refusals++
	}
	in.mu.Unlock()
	if until.IsZero() {
		return false
	}
	switch cfg.Behaviour {
	case RateLimitSeconds:
		ctx.Response.Header.Set("Retry-After", strconv.Itoa(ceilSeconds(until.Sub(now))))
	case RateLimitDate:
		ctx.Response.Header.Set("Retry-After", until.UTC().Format(http.TimeFormat))
	}
	in.tooMany(ctx)
	return true
}

func ceilSeconds(d time.Duration) int {
	return int((d + time.Second - 1) / time.Second)
}

// search answers /search once the site-wide behaviours and the limiter let
// it through.
func (in *Instance) search(ctx *fasthttp.RequestCtx, now time.Time, addr string, s search) {
	cfg := &in.cfg
	switch cfg.Behaviour {
	case RateLimitSeconds, RateLimitDate, RateLimitBare:
		if in.rateLimited(ctx, now, addr) {
			return
		}
	}
	if site, lucky, _ := bang(s.q); site != "" && cfg.Behaviour.answers() {
		// An external bang: SearXNG redirects before it looks at the
		// format.
		in.redirect(ctx, 302, site)
		return
	} else if lucky && s.format == "html" && cfg.Behaviour.answers() {
		// Feeling lucky: the HTML page redirects to the first result.
		if p := in.page(s); len(p.Results) > 0 {
			in.redirect(ctx, 302, p.Results[0].URL)
			return
		}
	}
	if s.format != "html" && (s.format != "json" || !cfg.JSON) {
		in.refused()
		in.send(ctx, 403, "text/html; charset=utf-8", []byte(forbiddenBody))
		return
	}
	if s.q == "" {
		if s.format == "json" {
			in.send(ctx, 400, "application/json", []byte(noQueryJSON))
		} else {
			in.send(ctx, 200, "text/html; charset=utf-8", []byte(writeIndex(&in.site)))
		}
		return
	}
	switch cfg.Behaviour {
	case Hang:
		in.hijack(ctx, func(c net.Conn) { in.holdOpen(c) })
		return
	case StallBody:
		in.hijackAnswer(ctx, s, func(c net.Conn, head, body []byte) {
			if _, err := c.Write(append(head, body[:min(16, len(body))]...)); err == nil {
				in.holdOpen(c)
			}
		})
		return
	case ResetMidBody:
		in.hijackAnswer(ctx, s, func(c net.Conn, head, body []byte) {
			if _, err := c.Write(append(head, body[:len(body)/2]...)); err == nil {
				resetOnClose(c)
			}
		})
		return
	case SlowLoris:
		in.hijackAnswer(ctx, s, func(c net.Conn, head, body []byte) {
			if _, err := c.Write(head); err != nil {
				return
			}
			for i := range body {
				if !in.f.sleep(cfg.SlowLorisEvery) {
					return
				}
				if _, err := c.Write(body[i : i+1]); err != nil {
					return
				}
			}
		})
		return
	case RedirectLoop:
		in.redirect(ctx, 302, in.url+"search?"+searchQuery(s))
		return
	case RedirectOtherHost:
		in.redirect(ctx, 302, "http://127.0.0.2:"+strconv.Itoa(in.port)+"/search?"+searchQuery(s))
		return
	}

	if cfg.Behaviour == NotFound404 {
		in.send(ctx, 404, "text/html; charset=utf-8", []byte(write404(&in.site)))
		return
	}
	if hasPrefixFold(s.q, ServerErrorPrefix) {
		in.send(ctx, 500, "text/html; charset=utf-8", []byte(serverErrorBody))
		return
	}
	lat := in.latency()
	if hasPrefixFold(s.q, SlowQueryPrefix) {
		lat += in.f.slowQuery
	}
	if !in.f.sleep(lat) {
		in.send(ctx, 503, "text/plain; charset=utf-8", []byte("shutting down"))
		return
	}
	switch cfg.Behaviour {
	case GzipBomb:
		ctx.Response.Header.Set("Content-Encoding", "gzip")
		ctx.Response.Header.Set("Vary", "Accept-Encoding")
		in.sendRaw(ctx, 200, contentType(s.format), in.f.bomb(cfg.BodySize))
		return
	case HugeBody:
		in.streamHuge(ctx, s)
		return
	}
	body := in.render(s)
	if cfg.Behaviour == BrokenJSON {
		if s.format == "json" {
			body = body[:len(body)*3/5]
		} else if i := bytes.Index(body, []byte(`<div id="urls"`)); i > 0 {
			body = body[:i]
		}
	} else if in.findsNothing(s) {
		in.mu.Lock()
		in.truth.NoResults++
		in.mu.Unlock()
	}
	in.send(ctx, 200, contentType(s.format), body)
}

func contentType(format string) string {
	if format == "json" {
		return "application/json"
	}
	return "text/html; charset=utf-8"
}

// searchQuery is the query string of a search, for redirects.
func searchQuery(s search) string {
	v := "q=" + qesc(s.q)
	if s.format != "html" {
		v += "&format=" + qesc(s.format)
	}
	if s.pageno > 1 {
		v += "&pageno=" + strconv.Itoa(s.pageno)
	}
	return v
}

// latency is how long the next search waits, and counts it for Degrading.
func (in *Instance) latency() time.Duration {
	cfg := &in.cfg
	in.mu.Lock()
	defer in.mu.Unlock()
	d := cfg.Latency
	if cfg.Jitter > 0 {
		d += time.Duration(in.rnd.Int64N(int64(2*cfg.Jitter)+1)) - cfg.Jitter
	}
	if cfg.Behaviour == Degrading {
		d += min(time.Duration(in.answered)*cfg.DegradeStep, maxDegrade)
	}
	in.answered++
	return max(d, 0)
}

// render builds the answer body of a search in the asked format.
func (in *Instance) render(s search) []byte {
	p := in.page(s)
	if s.format == "json" {
		return writeJSON(make([]byte, 0, 1024+600*len(p.Results)), p)
	}
	return []byte(writeHTML(&in.site, p))
}

// autocomplete answers /autocompleter as SearXNG does: OpenSearch
// suggestions, or a bare list for XMLHttpRequest.
func (in *Instance) autocomplete(ctx *fasthttp.RequestCtx) {
	q := strings.TrimSpace(string(ctx.FormValue("q")))
	var sugs []string
	if q != "" {
		sugs = []string{q + " tutorial", q + " examples", q + " " + in.cfg.ID}
	}
	list := []byte{'['}
	for i, sg := range sugs {
		if i > 0 {
			list = append(list, ", "...)
		}
		list = appendJSONString(list, sg, false)
	}
	list = append(list, ']')
	if string(ctx.Request.Header.Peek("X-Requested-With")) == "XMLHttpRequest" {
		in.send(ctx, 200, "application/json", list)
		return
	}
	b := append(appendJSONString([]byte{'['}, q, false), ", "...)
	b = append(append(b, list...), ']')
	in.send(ctx, 200, "application/x-suggestions+json", b)
}

// send answers with the instance's usual headers, gzipping the body when
// the client accepts it (as nginx in front of SearXNG does).
func (in *Instance) send(ctx *fasthttp.RequestCtx, status int, ctype string, body []byte) {
	if len(body) >= 256 && acceptsGzip(&ctx.Request.Header) {
		ctx.Response.Header.Set("Content-Encoding", "gzip")
		ctx.Response.Header.Set("Vary", "Accept-Encoding")
		body = gzipBytes(body)
	}
	in.sendRaw(ctx, status, ctype, body)
}

// sendRaw answers with the instance's usual headers and body as it is.
func (in *Instance) sendRaw(ctx *fasthttp.RequestCtx, status int, ctype string, body []byte) {
	in.sendAs(ctx, "nginx", status, ctype, nil)
	ctx.Response.SetBodyRaw(body)
}

// sendAs answers as the named server (none when server is "").
func (in *Instance) sendAs(ctx *fasthttp.RequestCtx, server string, status int, ctype string, body []byte) {
	r := &ctx.Response
	r.SetStatusCode(status)
	r.Header.SetContentType(ctype)
	if server != "" {
		r.Header.Set("Server", server)
	}
	if server == "nginx" {
		r.Header.Set("X-Content-Type-Options", "nosniff")
		r.Header.Set("X-Download-Options", "noopen")
		r.Header.Set("X-Robots-Tag", "noindex, nofollow")
		r.Header.Set("Referrer-Policy", "no-referrer")
	}
	if body != nil {
		r.SetBodyRaw(body)
	}
}

// streamHuge answers a well-formed page of at least BodySize bytes,
// chunked, made on the fly from one result repeated.
func (in *Instance) streamHuge(ctx *fasthttp.RequestCtx, s search) {
	p := in.page(s)
	p.Results = p.Results[:min(1, len(p.Results))]
	var full []byte
	var start, end []byte
	if s.format == "json" {
		full = writeJSON(nil, p)
		start, end = []byte(`{"url": `), []byte(`], "answers"`)
	} else {
		full = []byte(writeHTML(&in.site, p))
		start, end = []byte(`<article`), []byte("</article>\n")
	}
	i := bytes.Index(full, start)
	j := bytes.Index(full, end)
	if i < 0 || j < i {
		in.send(ctx, 200, contentType(s.format), full)
		return
	}
	j += len(end)
	if s.format == "json" {
		j -= len(`], "answers"`) // the item ends with the result's "}"
	}
	head, item, tail := full[:i], full[i:j], full[j:]
	size, done := in.cfg.BodySize, in.f.done
	json := s.format == "json"
	in.sendAs(ctx, "nginx", 200, contentType(s.format), nil)
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		n, _ := w.Write(head)
		first := true
		for n < size {
			select {
			case <-done:
				return
			default:
			}
			if json && !first {
				m, _ := w.WriteString(", ")
				n += m
			}
			first = false
			m, err := w.Write(item)
			if err != nil {
				return
			}
			n += m
			if n%(1<<16) < len(item) {
				if w.Flush() != nil {
					return
				}
			}
		}
		_, _ = w.Write(tail)
	})
}

// hijack takes over the connection after the handler returns, without an
// answer; fn runs with the connection, and its reads and writes fail once
// the fleet closes.
func (in *Instance) hijack(ctx *fasthttp.RequestCtx, fn func(c net.Conn)) {
	if !in.f.track() {
		in.send(ctx, 503, "text/plain; charset=utf-8", []byte("shutting down"))
		return
	}
	done := in.f.done
	ctx.HijackSetNoResponse(true)
	ctx.Hijack(func(c net.Conn) {
		defer in.f.wg.Done()
		stop, watched := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(watched)
			select {
			case <-done:
				_ = c.SetDeadline(time.Unix(1, 0))
			case <-stop:
			}
		}()
		fn(c)
		close(stop)
		<-watched
	})
}

// hijackAnswer is hijack with the search's answer at hand: the raw
// response head (with the full Content-Length) and the body.
func (in *Instance) hijackAnswer(ctx *fasthttp.RequestCtx, s search, fn func(c net.Conn, head, body []byte)) {
	body := in.render(s)
	head := fmt.Appendf(nil, "HTTP/1.1 200 OK\r\nServer: nginx\r\nDate: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n",
		in.f.now().UTC().Format(http.TimeFormat), contentType(s.format), len(body))
	in.hijack(ctx, func(c net.Conn) { fn(c, head, body) })
}

// holdOpen keeps c open, reading and discarding, until the client closes
// it, HangFor passes or the fleet closes.
func (in *Instance) holdOpen(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(in.cfg.HangFor))
	select {
	case <-in.f.done:
		return
	default:
	}
	buf := make([]byte, 512)
	for {
		if _, err := c.Read(buf); err != nil {
			return
		}
	}
}

// resetOnClose makes the coming close of a TCP connection send RST.
func resetOnClose(c net.Conn) {
	if u, ok := c.(interface{ UnsafeConn() net.Conn }); ok {
		c = u.UnsafeConn()
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
}

var gzipPool = sync.Pool{New: func() any { w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed); return w }}

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	buf.Grow(len(b)/4 + 64)
	zw := gzipPool.Get().(*gzip.Writer)
	zw.Reset(&buf)
	_, _ = zw.Write(b)
	_ = zw.Close()
	gzipPool.Put(zw)
	return buf.Bytes()
}
