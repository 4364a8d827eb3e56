package api

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/reader"
)

// failure is one reason a door cannot answer, as each face says it: the
// status Tavily's, Brave's and Open WebUI's clients expect, Brave's error
// code, and the words (the same facts for every face).
type failure struct {
	tavily, brave, openWebUI int
	braveCode                string
	text                     string
	retryAfter               time.Duration // > 0: sent as Retry-After
}

// stopTable words each proxy.Stop for the doors: the one table (a test
// holds it to proxy.Stops). Over the client's share is Tavily's 429 (its
// clients' UsageLimitExceededError), its share of the extra budget
// Tavily's 432 (a limit of the key: ForbiddenError); a query that fails
// everywhere is the client's (400, Brave's 422); the rest is searxgate's
// side (503).
var stopTable = map[proxy.Stop]failure{
	proxy.StopDeadline:     {503, 503, 503, "NO_ANSWER", "no instance answered in time", 0},
	proxy.StopNoInstance:   {503, 503, 503, "NO_ANSWER", "no instance can be searched now: every one is cooling down, disabled or unavailable", 0},
	proxy.StopNoSlot:       {503, 503, 503, "NO_ANSWER", "no instance can take the search before its deadline (politeness budgets, cooldowns, searches in flight)", 0},
	proxy.StopShare:        {429, 429, 429, "RATE_LIMITED", "your share of the public instances' budget is spent for now; the rest of each window is kept for other clients", 0},
	proxy.StopAttempts:     {503, 503, 503, "NO_ANSWER", "every instance asked refused or failed", 0},
	proxy.StopNetwork:      {503, 503, 503, "NO_ANSWER", "no instance's name resolves: the network of the machine searxgate runs on is down; no instance was blamed", 0},
	proxy.StopBudget:       {432, 429, 429, "RATE_LIMITED", "your share of the budget for retries and second opinions is spent for now", 0},
	proxy.StopShutdown:     {503, 503, 503, "NO_ANSWER", "searxgate is shutting down", 0},
	proxy.StopQueueFull:    {503, 503, 503, "NO_ANSWER", "too many searches are waiting for an instance", 0},
	proxy.StopLeaderFailed: {503, 503, 503, "NO_ANSWER", "the identical search this one joined got no answer", 0},
	proxy.StopQuery:        {400, 422, 400, "QUERY_FAILS", "this query makes SearXNG fail the same way on every instance asked; rephrase it (no instance was blamed)", 0},
	proxy.StopQueryTimeout: {400, 422, 400, "QUERY_FAILS", "the query's <N timeout asks for longer than searxgate waits; drop or lower it", 0},
}

// Failures of the request itself, the same for every search.
var (
	failBadKey    = failure{401, 401, 401, "SUBSCRIPTION_TOKEN_INVALID", "", 0}
	failForbidden = failure{403, 403, 403, "FORBIDDEN", "", 0}
	failBad       = failure{400, 422, 400, "VALIDATION", "", 0}
	failInternal  = failure{500, 500, 500, "INTERNAL", "searxgate failed to answer this request", 0}
)

// denied is the failure of a request admit refused.
func denied(d denial) failure {
	f := failForbidden
	if d.status == fasthttp.StatusUnauthorized {
		f = failBadKey
	}
	f.text = d.msg
	return f
}

// badRequest is the failure of a request that does not read.
func badRequest(msg string) failure {
	f := failBad
	f.text = msg
	return f
}

// searchFailure is the failure of a search that got no answer.
func searchFailure(err error) failure {
	var le *proxy.LimitedError
	var na *proxy.NoAnswerError
	var rl *reader.LimitedError
	switch {
	case errors.As(err, &le):
		return failure{429, 429, 429, "RATE_LIMITED", "too many searches from this client (its own limit, --client-rate)", le.RetryAfter}
	case errors.As(err, &rl):
		return failure{429, 429, 429, "RATE_LIMITED", "too many page reads from this client (its own limit, --client-rate)", rl.RetryAfter}
	case errors.As(err, &na):
		f, ok := stopTable[na.Why]
		if !ok {
			f = failure{503, 503, 503, "NO_ANSWER", string(na.Why), 0}
		}
		f.text = "no instance answered: " + f.text
		f.retryAfter = na.RetryAfter
		return f
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return failure{503, 503, 503, "NO_ANSWER", "search cancelled", 0}
	}
	return failInternal
}

// retryAfter sets Retry-After when f knows when to come back.
func retryAfter(ctx *fasthttp.RequestCtx, f failure) {
	if f.retryAfter > 0 {
		secs := max(int64((f.retryAfter+time.Second-1)/time.Second), 1)
		ctx.Response.Header.Set("Retry-After", strconv.FormatInt(secs, 10))
	}
}
