package main

import (
	"fmt"
	"log/slog"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// clientLimiter is a token bucket per client address for the endpoints
// that can cause upstream searches (/search, / with a query,
// /autocompleter): so that searxgate can never be used to flood the
// instances behind it, whoever reaches it. The default rate is one no
// person or agent meets.
type clientLimiter struct {
	perSec float64 // tokens added per second
	burst  float64
	now    func() time.Time

	mu      sync.Mutex // guards buckets and swept
	buckets map[netip.Addr]*bucket
	swept   time.Time
}

type bucket struct {
	tokens float64
	last   time.Time
}

// maxClients bounds the buckets kept; past it, idle ones are dropped first
// and, if none is idle, the limiter starts afresh (failing open rather than
// growing without bound).
const maxClients = 100_000

func newClientLimiter(perMinute, burst int, now func() time.Time) *clientLimiter {
	if perMinute <= 0 {
		return nil
	}
	return &clientLimiter{
		perSec:  float64(perMinute) / 60,
		burst:   float64(max(burst, 1)),
		now:     now,
		buckets: make(map[netip.Addr]*bucket),
	}
}

// allow takes a token for addr and reports whether there was one, and if
// not, how long until there is.
func (l *clientLimiter) allow(addr netip.Addr) (bool, time.Duration) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buckets) >= maxClients || now.Sub(l.swept) > time.Minute {
		l.sweep(now)
	}
	b, ok := l.buckets[addr]
	if !ok {
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[addr] = b
	}
	b.tokens = math.Min(l.burst, b.tokens+now.Sub(b.last).Seconds()*l.perSec)
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	wait := time.Duration((1 - b.tokens) / l.perSec * float64(time.Second))
	return false, wait
}

// sweep drops buckets that have refilled (idle long enough to be full).
func (l *clientLimiter) sweep(now time.Time) {
	l.swept = now
	full := time.Duration(l.burst / l.perSec * float64(time.Second))
	for a, b := range l.buckets {
		if now.Sub(b.last) >= full {
			delete(l.buckets, a)
		}
	}
	if len(l.buckets) >= maxClients {
		clear(l.buckets)
	}
}

// limited reports whether a request is one the client limiter counts.
func limited(ctx *fasthttp.RequestCtx) bool {
	switch string(ctx.Path()) {
	case "/search", "/autocompleter":
		return true
	case "/":
		return ctx.QueryArgs().Has("q") || (ctx.IsPost() && ctx.PostArgs().Has("q"))
	}
	return false
}

// clientAddr is the address a request counts against: the peer's, or,
// when the peer is one of the trusted reverse proxies, the nearest address
// in X-Forwarded-For that is not one of them. (A client can put anything
// in that header; only the hops a trusted proxy appended are believed.)
func clientAddr(ctx *fasthttp.RequestCtx, trusted []netip.Prefix) netip.Addr {
	addr, _ := netip.AddrFromSlice(ctx.RemoteIP())
	addr = addr.Unmap()
	if !inPrefixes(addr, trusted) {
		return addr
	}
	hops := strings.Split(string(ctx.Request.Header.Peek("X-Forwarded-For")), ",")
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

// parsePrefixes reads IP addresses and CIDR prefixes.
func parsePrefixes(list []string) ([]netip.Prefix, error) {
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

// wrap puts the client limiter and the access log around h. trusted are
// the reverse proxies whose X-Forwarded-For is believed.
func wrap(h fasthttp.RequestHandler, lim *clientLimiter, trusted []netip.Prefix, access *slog.Logger) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		start := time.Now()
		if lim != nil && limited(ctx) {
			if ok, wait := lim.allow(clientAddr(ctx, trusted)); !ok {
				ctx.Error("Too Many Requests", fasthttp.StatusTooManyRequests) // resets headers: set them after
				ctx.Response.Header.Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
				logAccess(access, ctx, start)
				return
			}
		}
		h(ctx)
		logAccess(access, ctx, start)
	}
}

// logAccess logs one request without its query string: searches are the
// client's business, not the log's.
func logAccess(l *slog.Logger, ctx *fasthttp.RequestCtx, start time.Time) {
	if l == nil {
		return
	}
	l.Info("request", "method", string(ctx.Method()), "path", string(ctx.Path()),
		"status", ctx.Response.StatusCode(), "duration", time.Since(start),
		"cache", string(ctx.Response.Header.Peek("X-Searxgate-Cache")))
}
