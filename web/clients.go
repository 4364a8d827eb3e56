package web

import (
	"fmt"
	"log/slog"
	"math"
	"net/netip"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/client"
	"github.com/searxgate/searxgate/internal/clock"
)

// limited reports whether a request is one the middleware counts against
// its client: /autocompleter. Searches are counted by the proxy, and only
// those that would reach an instance.
func limited(ctx *fasthttp.RequestCtx) bool {
	return string(ctx.Path()) == "/autocompleter"
}

// Wrap puts the client limiter (client.Limiter, keyed by
// client.FromRequest) and the access log around h. trusted are
// the reverse proxies whose X-Forwarded-For is believed; clk (nil is the
// real clock) is read once as a request starts, and once more as it ends
// when the access log is on.
func Wrap(h fasthttp.RequestHandler, lim *client.Limiter, trusted []netip.Prefix, access *slog.Logger, clk clock.Clock) fasthttp.RequestHandler {
	clk = clock.Or(clk)
	return func(ctx *fasthttp.RequestCtx) {
		start := clk.Now()
		if lim != nil && limited(ctx) {
			if ok, wait := lim.Allow(client.FromRequest(ctx, trusted), start); !ok {
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
