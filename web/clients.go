package web

import (
	"fmt"
	"log/slog"
	"math"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/internal/clock"
	"github.com/searxgate/searxgate/proxy"
)

// ClientLimiter is a token bucket per client (clientKey: an IPv4 address,
// or the /64 of an IPv6 one; or an API key, proxy.KeyClient) for what can reach an instance: the proxy asks
// it (Admit) for each search that would, never for an answer from the cache
// or a search that joins one in flight; the middleware asks it for
// /autocompleter. So searxgate can never be used to flood the instances
// behind it, whoever reaches it, and a client repeating a search costs
// nothing. The default rate is one no person or agent meets.
type ClientLimiter struct {
	perSec float64 // tokens added per second
	burst  float64
	// capacity, when set, is what the public pool serves a minute and at
	// once: no client's rate or burst goes past it (WithCapacity).
	capacity func() (perMinute, burst float64)

	mu      sync.Mutex // guards buckets and swept
	buckets map[string]*bucket
	swept   time.Time

	admits atomic.Int64 // times the proxy asked (Admit)
}

// Admits counts the times the proxy asked the limiter (tests read it).
func (l *ClientLimiter) Admits() int64 {
	if l == nil {
		return 0
	}
	return l.admits.Load()
}

type bucket struct {
	tokens float64
	last   time.Time
}

// maxClients bounds the buckets kept; past it, idle ones are dropped first
// and, if there are still too many, the least recently seen tenth.
const maxClients = 100_000

// NewClientLimiter is a limiter of perMinute requests a minute per client,
// in bursts of up to burst; nil (no limit) when perMinute ≤ 0. It keeps no
// clock: every call is given the time.
func NewClientLimiter(perMinute, burst int) *ClientLimiter {
	if perMinute <= 0 {
		return nil
	}
	return &ClientLimiter{
		perSec:  float64(perMinute) / 60,
		burst:   float64(max(burst, 1)),
		buckets: make(map[string]*bucket),
	}
}

// WithCapacity bounds every client's rate and burst by what the public
// pool serves (capacity: searches a minute, sustained, and at once; 0 =
// none), so that the default limit follows the pool: on a small pool no
// client may ask more than it can serve. It returns l (nil stays nil).
func (l *ClientLimiter) WithCapacity(capacity func() (perMinute, burst float64)) *ClientLimiter {
	if l != nil {
		l.capacity = capacity
	}
	return l
}

// rates is the refill per second and the burst at this moment.
func (l *ClientLimiter) rates() (perSec, burst float64) {
	perSec, burst = l.perSec, l.burst
	if l.capacity != nil {
		if c, b := l.capacity(); c > 0 {
			perSec = math.Min(perSec, c/60)
			burst = math.Min(burst, math.Max(1, b))
		}
	}
	return perSec, burst
}

// clientKey is what a client is counted as: its IPv4 address, or the /64
// its IPv6 address is in (one host is commonly given a whole /64, so
// counting addresses would let it take thousands of shares).
func clientKey(a netip.Addr) netip.Prefix {
	a = a.Unmap()
	if !a.IsValid() || a.IsUnspecified() { // no address (fasthttp says 0.0.0.0)
		return netip.Prefix{}
	}
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p
	}
	return netip.PrefixFrom(a, 32)
}

// parseClientKey reads a client as web.Config.Client wrote it (a
// clientKey), or a bare address; anything else is the zero key, one bucket
// for every client searxgate cannot name.
func parseClientKey(s string) netip.Prefix {
	if p, err := netip.ParsePrefix(s); err == nil {
		return clientKey(p.Addr())
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return clientKey(a)
	}
	return netip.Prefix{}
}

// bucketKey is the bucket of a client as web.Config.Client (or a face
// that knows an API key, proxy.KeyClient) wrote it: an API key is its own
// client, wherever it comes from; anything else is read as an address
// (parseClientKey).
func bucketKey(client string) string {
	if proxy.IsKeyClient(client) {
		return client
	}
	return parseClientKey(client).String()
}

// Admit is the limiter as proxy.Config.Admit; nil when the limit is
// off.
func (l *ClientLimiter) Admit() func(client string, now time.Time) (bool, time.Duration) {
	if l == nil {
		return nil
	}
	return func(client string, now time.Time) (bool, time.Duration) {
		l.admits.Add(1)
		return l.allowKey(bucketKey(client), now)
	}
}

// ClientOf is web.Config.Client: the client key of a request (clientAddr,
// then clientKey), as the limiter reads it back; "" when the request has
// no address (the limiter then counts it with every such request).
func ClientOf(trusted []netip.Prefix) func(*fasthttp.RequestCtx) string {
	return func(ctx *fasthttp.RequestCtx) string {
		if k := clientKey(clientAddr(ctx, trusted)); k.IsValid() {
			return k.String()
		}
		return ""
	}
}

// allow takes a token for addr's client key at now and reports whether there
// was one, and if not, how long until there is.
func (l *ClientLimiter) allow(addr netip.Addr, now time.Time) (bool, time.Duration) {
	return l.allowAt(clientKey(addr), now)
}

// allowAt takes a token for key at now (see allow).
func (l *ClientLimiter) allowAt(key netip.Prefix, now time.Time) (bool, time.Duration) {
	return l.allowKey(key.String(), now)
}

// allowKey takes a token for the bucket key (bucketKey) at now.
func (l *ClientLimiter) allowKey(key string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buckets) >= maxClients || now.Sub(l.swept) > time.Minute {
		l.sweep(now)
	}
	b, perSec := l.refilled(key, now)
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	wait := time.Duration((1 - b.tokens) / perSec * float64(time.Second))
	return false, wait
}

// refilled is key's bucket refilled to now, and the refill per second;
// l.mu is held.
func (l *ClientLimiter) refilled(key string, now time.Time) (*bucket, float64) {
	perSec, burst := l.rates()
	b, ok := l.buckets[key]
	if !ok {
		b = &bucket{tokens: burst, last: now}
		l.buckets[key] = b
	}
	if d := now.Sub(b.last); d > 0 { // a clock read before the last one adds nothing
		b.tokens = math.Min(burst, b.tokens+d.Seconds()*perSec)
		b.last = now
	}
	b.tokens = math.Min(b.tokens, burst) // the pool shrank
	return b, perSec
}

// sweep drops buckets that have refilled (idle long enough to be full,
// a debt of AdmitExtra's paid).
func (l *ClientLimiter) sweep(now time.Time) {
	l.swept = now
	for a, b := range l.buckets {
		if now.Sub(b.last).Seconds()*l.perSec >= l.burst-b.tokens {
			delete(l.buckets, a)
		}
	}
	if len(l.buckets) >= maxClients {
		l.evictOldest(len(l.buckets) / 10)
	}
}

// evictOldest drops the n buckets seen least recently: a flood of new
// addresses evicts the quietest clients, never everyone's count at once
// (which would hand every client a fresh burst).
func (l *ClientLimiter) evictOldest(n int) {
	type seen struct {
		key  string
		last time.Time
	}
	all := make([]seen, 0, len(l.buckets))
	for k, b := range l.buckets {
		all = append(all, seen{k, b.last})
	}
	slices.SortFunc(all, func(a, b seen) int { return a.last.Compare(b.last) })
	for _, s := range all[:min(n, len(all))] {
		delete(l.buckets, s.key)
	}
}

// limited reports whether a request is one the middleware counts against
// its client: /autocompleter. Searches are counted by the proxy, and only
// those that would reach an instance.
func limited(ctx *fasthttp.RequestCtx) bool {
	return string(ctx.Path()) == "/autocompleter"
}

// clientAddr is the address a request counts against: the peer's, or,
// when the peer is one of the trusted reverse proxies, the nearest address
// in X-Forwarded-For that is not one of them, walking from the right (as
// nginx's real_ip_recursive does). Every X-Forwarded-For line is read, in
// order: a proxy that appends a line of its own instead of extending the
// client's must not let the client's line choose the address. (A client
// can put anything in that header; only the hops a trusted proxy appended
// are believed.)
func clientAddr(ctx *fasthttp.RequestCtx, trusted []netip.Prefix) netip.Addr {
	addr, _ := netip.AddrFromSlice(ctx.RemoteIP())
	addr = addr.Unmap()
	if !inPrefixes(addr, trusted) {
		return addr
	}
	var hops []string
	for _, line := range ctx.Request.Header.PeekAll("X-Forwarded-For") {
		hops = append(hops, strings.Split(string(line), ",")...)
	}
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return addr // a hop we cannot read: stop at the last one we trust
		}
		addr = a.Unmap()
		if !inPrefixes(addr, trusted) {
			return addr
		}
	}
	return addr
}

func inPrefixes(a netip.Addr, ps []netip.Prefix) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ParsePrefixes reads IP addresses and CIDR prefixes.
func ParsePrefixes(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not an IP address or CIDR prefix", s)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// Wrap puts the client limiter and the access log around h. trusted are
// the reverse proxies whose X-Forwarded-For is believed; clk (nil is the
// real clock) is read once as a request starts, and once more as it ends
// when the access log is on.
func Wrap(h fasthttp.RequestHandler, lim *ClientLimiter, trusted []netip.Prefix, access *slog.Logger, clk clock.Clock) fasthttp.RequestHandler {
	clk = clock.Or(clk)
	return func(ctx *fasthttp.RequestCtx) {
		start := clk.Now()
		if lim != nil && limited(ctx) {
			if ok, wait := lim.allow(clientAddr(ctx, trusted), start); !ok {
				tooMany(ctx, wait)
				logAccess(access, ctx, start, clk)
				return
			}
		}
		h(ctx)
		logAccess(access, ctx, start, clk)
	}
}

// tooMany answers 429 in JSON, as /autocompleter's clients read it, with
// the seconds until the client may ask again.
func tooMany(ctx *fasthttp.RequestCtx, wait time.Duration) {
	secs := max(1, int(math.Ceil(wait.Seconds())))
	ctx.Response.Reset()
	ctx.SetStatusCode(fasthttp.StatusTooManyRequests)
	ctx.SetContentType("application/json")
	ctx.Response.Header.Set("Retry-After", strconv.Itoa(secs))
	ctx.SetBodyString(fmt.Sprintf(`{"error":"too many requests from your address: retry in %d s"}`, secs))
}

// logAccess logs one request without its query string: searches are the
// client's business, not the log's.
func logAccess(l *slog.Logger, ctx *fasthttp.RequestCtx, start time.Time, clk clock.Clock) {
	if l == nil {
		return
	}
	l.Info("request", "method", string(ctx.Method()), "path", string(ctx.Path()),
		"status", ctx.Response.StatusCode(), "duration", clk.Now().Sub(start),
		"cache", string(ctx.Response.Header.Peek("X-Searxgate-Cache")))
}
