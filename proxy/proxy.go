package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"searxgate/detect"
	"searxgate/pool"
)

// ErrNoAnswer is wrapped by the *NoAnswerError a search returns when no
// instance gave a good answer in time and there was no stale copy.
var ErrNoAnswer = errors.New("no instance answered")

// Attempt is one upstream search of a client search, as the 503 body and
// the logs tell it.
type Attempt struct {
	Instance  string `json:"instance"`
	Outcome   string `json:"outcome"` // ok, soft, refused, failed, cancelled, skipped
	Reason    string `json:"reason,omitempty"`
	ElapsedMS int64  `json:"elapsed_ms"`
}

// NoAnswerError says what was tried and why each attempt failed.
type NoAnswerError struct {
	Why   string    // the reason the search stopped: deadline, no_instance, attempts, budget, queue_full
	Tried []Attempt // in the order they started
	// RetryAfter is when a slot is expected to free, from now, when the
	// search was refused because none could be had within its deadline;
	// 0 when nothing says (the client may send Retry-After: 1 or none).
	RetryAfter time.Duration
}

func (e *NoAnswerError) Error() string {
	return fmt.Sprintf("%s: %s after %d attempts", ErrNoAnswer, e.Why, len(e.Tried))
}

func (e *NoAnswerError) Unwrap() error { return ErrNoAnswer }

// ErrClientLimited is wrapped by the *LimitedError a search returns when
// Config.Admit refused its client.
var ErrClientLimited = errors.New("client rate limited")

// LimitedError refuses one client's search before it reaches any instance:
// the client asked more than its share.
type LimitedError struct {
	RetryAfter time.Duration // when the client may search again
}

func (e *LimitedError) Error() string {
	return fmt.Sprintf("%s: retry in %s", ErrClientLimited, e.RetryAfter.Round(time.Second))
}

func (e *LimitedError) Unwrap() error { return ErrClientLimited }

// Response is the answer to one client search.
type Response struct {
	// JSON is the answer as SearXNG's classic JSON, with the client's query
	// echoed. It may be shared with the cache: never modify it.
	JSON      []byte
	Instance  string // who served it
	Attempts  int    // upstream searches this answer took (0 when cached)
	Cached    bool   // served from the cache
	Stale     bool   // served from the cache past its expiry, because nothing answered
	Coalesced bool   // shared with an identical search in flight
	Soft      string // non-empty when the best answer was a soft one (e.g. "empty")
	Elapsed   time.Duration

	once    sync.Once
	results *detect.Results
	err     error
}

// Results returns the answer's results, decoding the JSON once when the
// answer came from the cache, for the formats rendered from it.
func (r *Response) Results() (*detect.Results, error) {
	r.once.Do(func() {
		if r.results == nil {
			r.results, r.err = detect.ParseJSON(r.JSON)
		}
	})
	return r.results, r.err
}

// CacheStore is the persistent cache behind the in-memory one (the store
// satisfies it through cmd). CachePut may queue the write; it must not
// block a search.
type CacheStore interface {
	CacheGet(key string) (Cached, bool)
	CachePut(key string, c Cached)
}

// Config is everything the search path needs; zero values take defaults.
type Config struct {
	Pool     *pool.Pool
	Upstream UpstreamConfig
	Logger   *slog.Logger
	Now      func() time.Time
	// Timer makes the deadline and hedge timers: a channel that fires after
	// d and a func that stops it. nil = real timers.
	Timer func(d time.Duration) (<-chan time.Time, func())

	Deadline    time.Duration // one search, all attempts included (default 4 s)
	MaxAttempts int           // default 4
	// A hedge starts the next instance when the current one has run longer
	// than HedgeFactor times its latency EWMA, and at least HedgeFloor.
	HedgeFactor float64       // default 2
	HedgeFloor  time.Duration // default 800 ms
	// Extras (retries and hedges) stay within ExtraRatio of first attempts
	// over ExtraWindow, with ExtraFloor extras always allowed.
	ExtraRatio  float64       // default 0.2
	ExtraFloor  int           // default 20
	ExtraWindow time.Duration // default 1 min

	Budget []Window // per public instance (default 10 per 20 s and 100 per 10 min)
	// OwnBudget is the budget of the operator's own instances (pool tier
	// Own): none by default, since they are the operator's to load.
	OwnBudget []Window
	// MaxQueue bounds the searches waiting for a free slot (an in-flight
	// cap, a politeness window, a half-open trial); past it a search is
	// refused at once. Default 256.
	MaxQueue int
	// Admit, when set, is asked once for each client search that would
	// reach an instance (never for cache hits or coalesced searches), with
	// Request.Client; when it says no, the search fails with a
	// *LimitedError carrying its retryAfter.
	Admit func(client string, now time.Time) (ok bool, retryAfter time.Duration)

	CacheTTL     time.Duration // default 1 h
	StaleFor     time.Duration // how long past expiry an answer may still be served stale (default 24 h)
	CacheEntries int           // default 10,000
	CacheBytes   int64         // default 64 MiB
	Store        CacheStore    // optional

	// AllowLinkToken lets searches go to instances whose link-token check is
	// on. Off by default: such an instance treats searxgate as a bot after
	// three searches.
	AllowLinkToken bool
}

func (c *Config) defaults() {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Timer == nil {
		c.Timer = func(d time.Duration) (<-chan time.Time, func()) {
			t := time.NewTimer(d)
			return t.C, func() { t.Stop() }
		}
	}
	if c.Deadline <= 0 {
		c.Deadline = 4 * time.Second
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 4
	}
	if c.HedgeFactor <= 0 {
		c.HedgeFactor = 2
	}
	if c.HedgeFloor <= 0 {
		c.HedgeFloor = 800 * time.Millisecond
	}
	if c.ExtraRatio <= 0 {
		c.ExtraRatio = 0.2
	}
	if c.ExtraFloor <= 0 {
		c.ExtraFloor = 20
	}
	if c.ExtraWindow <= 0 {
		c.ExtraWindow = time.Minute
	}
	if c.Budget == nil {
		c.Budget = []Window{{Max: 10, Per: 20 * time.Second}, {Max: 100, Per: 10 * time.Minute}}
	}
	if c.CacheTTL <= 0 {
		c.CacheTTL = time.Hour
	}
	if c.StaleFor <= 0 {
		c.StaleFor = 24 * time.Hour
	}
	if c.CacheEntries <= 0 {
		c.CacheEntries = 10_000
	}
	if c.CacheBytes <= 0 {
		c.CacheBytes = 64 << 20
	}
}

// Proxy answers searches from the pool.
type Proxy struct {
	cfg      Config
	pool     *pool.Pool
	up       *upstream
	polite   *Politeness
	extra    *ExtraBudget
	cache    *memCache
	flights  flights
	caps     *capsTable
	metrics  *Metrics
	log      *slog.Logger
	cfgSem   chan struct{} // bounds concurrent /config reads
	bg       context.Context
	bgCancel context.CancelFunc
	bgWG     sync.WaitGroup // attempts and /config reads; Add only through spawn
	bgMu     sync.Mutex     // guards closing, and orders bgWG.Add before Wait
	closing  bool
}

// New returns a Proxy. Close stops its background work.
func New(cfg Config) (*Proxy, error) {
	if cfg.Pool == nil {
		return nil, errors.New("proxy: Config.Pool is required")
	}
	cfg.defaults()
	bg, cancel := context.WithCancel(context.Background())
	p := &Proxy{
		cfg:  cfg,
		pool: cfg.Pool,

		polite:   NewPoliteness(cfg.Budget...),
		extra:    NewExtraBudget(cfg.ExtraRatio, cfg.ExtraFloor, cfg.ExtraWindow),
		cache:    newMemCache(cfg.CacheEntries, cfg.CacheBytes),
		caps:     newCapsTable(),
		metrics:  newMetrics(),
		log:      cfg.Logger,
		cfgSem:   make(chan struct{}, configFetchers),
		bg:       bg,
		bgCancel: cancel,
	}
	up := cfg.Upstream
	if up.AllowRetry == nil {
		up.AllowRetry = func(inst string) bool { return p.polite.Take(inst, p.cfg.Now()) }
	}
	p.up = newUpstream(up)
	return p, nil
}

// spawn runs f in the background, counted by Wait, unless the proxy is
// shutting down; it reports whether f was started. The closing flag is
// read under the same lock Shutdown sets it with, so no goroutine is added
// once Shutdown waits.
func (p *Proxy) spawn(f func()) bool {
	p.bgMu.Lock()
	defer p.bgMu.Unlock()
	if p.closing {
		return false
	}
	p.bgWG.Add(1)
	go func() {
		defer p.bgWG.Done()
		f()
	}()
	return true
}

// stopSpawning refuses new background work and cancels /config reads.
func (p *Proxy) stopSpawning() {
	p.bgMu.Lock()
	p.closing = true
	p.bgMu.Unlock()
	p.bgCancel()
}

// Close stops background work and waits for it: searches from then on
// fail with Why "shutdown".
func (p *Proxy) Close() {
	p.stopSpawning()
	p.bgWG.Wait()
}

// Shutdown stops starting background work (reading terms, new attempts)
// and waits, up to ctx, for the searches and reads still running.
func (p *Proxy) Shutdown(ctx context.Context) error {
	p.stopSpawning()
	return p.Wait(ctx)
}

// Wait blocks until every attempt still running in the background (hedge
// losers finishing after their search returned, /config reads) has ended,
// or ctx ends.
func (p *Proxy) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { p.bgWG.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Metrics returns the proxy's counters (live; read with its methods).
func (p *Proxy) Metrics() *Metrics { return p.metrics }

// Politeness returns the per-instance budget, for the status page.
func (p *Proxy) Politeness() *Politeness { return p.polite }

// Search answers one client search: from the cache, from an identical search
// in flight, or from the pool. It returns a *NoAnswerError (wrapping
// ErrNoAnswer) when nothing answered and no stale copy exists, and ctx's
// error when the client went away.
func (p *Proxy) Search(ctx context.Context, req Request) (*Response, error) {
	start := p.cfg.Now()
	key := p.cacheKey(req.Key())
	stale, hit := p.cacheGet(key)
	if hit && start.Before(stale.Expires) {
		p.metrics.search("cached", p.cfg.Now().Sub(start))
		return &Response{JSON: stale.JSON, Instance: stale.Instance, Cached: true, Elapsed: p.cfg.Now().Sub(start)}, nil
	}
	fl, leader := p.flights.join(key)
	if !leader {
		select {
		case <-fl.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if fl.err != nil {
			return nil, fl.err
		}
		l := fl.res
		r := &Response{JSON: l.JSON, Instance: l.Instance, Attempts: l.Attempts, Cached: l.Cached,
			Stale: l.Stale, Soft: l.Soft, Coalesced: true, Elapsed: p.cfg.Now().Sub(start)}
		p.metrics.search("coalesced", r.Elapsed)
		return r, nil
	}
	res, err := p.fetch(ctx, req, key, start)
	if err != nil && hit && start.Sub(stale.Expires) < p.cfg.StaleFor && !errors.Is(err, context.Canceled) {
		res, err = &Response{JSON: stale.JSON, Instance: stale.Instance, Cached: true, Stale: true}, nil
	}
	elapsed := p.cfg.Now().Sub(start)
	switch {
	case err != nil:
		p.metrics.search("failed", elapsed)
	case res.Stale:
		p.metrics.search("stale", elapsed)
	default:
		p.metrics.search("upstream", elapsed)
	}
	if res != nil {
		res.Elapsed = elapsed
	}
	p.flights.finish(key, fl, res, err)
	return res, err
}

func (p *Proxy) cacheGet(key string) (Cached, bool) {
	if c, ok := p.cache.get(key); ok {
		return *c, true
	}
	if p.cfg.Store == nil {
		return Cached{}, false
	}
	c, ok := p.cfg.Store.CacheGet(key)
	if ok {
		p.cache.put(key, &c)
	}
	return c, ok
}

// attemptResult is what one upstream attempt sends back to its search.
type attemptResult struct {
	instance string
	verdict  detect.Verdict
	outcome  pool.Outcome
	elapsed  time.Duration
}

// fetch runs the attempts of one search.
func (p *Proxy) fetch(ctx context.Context, req Request, key string, start time.Time) (*Response, error) {
	deadline := start.Add(p.cfg.Deadline)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}

	results := make(chan attemptResult, p.cfg.MaxAttempts)
	tried := make(map[string]bool, p.cfg.MaxAttempts)
	var log []Attempt
	var starts []time.Time  // when each attempt of log started
	var best *attemptResult // the best soft answer so far, served when nothing better comes
	inflight, started, empties := 0, 0, 0
	var hedge <-chan time.Time
	stopHedge := func() {}
	defer func() { stopHedge() }()
	why := ""

	launch := func(hedging bool) bool {
		now := p.cfg.Now()
		if started > 0 && !p.extra.TakeExtra(now, hedging) {
			if !hedging && inflight == 0 {
				why = "budget"
			}
			return false
		}
		lease, inst, release, ok := p.checkout(ctx, tried, now)
		if !ok {
			if inflight == 0 {
				why = "no_instance"
			}
			return false
		}
		if started == 0 {
			p.extra.First(now)
		}
		started++
		inflight++
		tried[inst] = true
		log = append(log, Attempt{Instance: inst, Outcome: "running"})
		starts = append(starts, now)
		if !p.spawn(func() { p.attempt(lease, release, inst, req, deadline, results) }) {
			// Shutting down: the attempt is never sent.
			p.pool.Record(lease, pool.Outcome{Kind: pool.Cancelled, Reason: "shutdown"}, 0)
			release()
			inflight--
			log[len(log)-1].Outcome, log[len(log)-1].Reason = pool.Cancelled.String(), "shutdown"
			if inflight == 0 {
				why = "shutdown"
			}
			return false
		}
		stopHedge()
		hedge, stopHedge = p.hedgeTimer(inst, now, deadline)
		return true
	}

	if !launch(false) {
		return nil, &NoAnswerError{Why: why, Tried: log}
	}
	timeout, stopTimeout := p.cfg.Timer(deadline.Sub(p.cfg.Now()))
	defer stopTimeout()
	for {
		select {
		case r := <-results:
			inflight--
			for i := range log {
				if log[i].Instance == r.instance {
					log[i].Outcome = r.outcome.Kind.String()
					log[i].Reason = r.outcome.Reason
					log[i].ElapsedMS = r.elapsed.Milliseconds()
				}
			}
			switch r.verdict.Kind {
			case detect.OK:
				return p.answer(req, key, r, started, "")
			case detect.Soft:
				// An off-topic answer belongs to another query: never served.
				if r.verdict.Reason != detect.OffTopic && r.verdict.Results != nil &&
					(best == nil || len(r.verdict.Results.Results) > len(best.verdict.Results.Results)) {
					rr := r
					best = &rr
				}
				if r.verdict.Reason == detect.Empty {
					empties++
				}
			}
			// Two instances that found nothing: the query has no results,
			// and asking more would only add load.
			if empties >= 2 && best != nil && inflight == 0 {
				return p.answer(req, key, *best, started, string(best.verdict.Reason))
			}
			if started >= p.cfg.MaxAttempts {
				if inflight == 0 {
					why = "attempts"
				}
			} else if inflight == 0 {
				launch(false)
			}
			if inflight == 0 {
				if best != nil {
					return p.answer(req, key, *best, started, string(best.verdict.Reason))
				}
				if why == "" {
					why = "attempts"
				}
				return nil, &NoAnswerError{Why: why, Tried: log}
			}
		case <-hedge:
			hedge = nil
			if started < p.cfg.MaxAttempts && inflight < 3 {
				launch(true)
			}
		case <-timeout:
			if best != nil {
				return p.answer(req, key, *best, started, string(best.verdict.Reason))
			}
			now := p.cfg.Now()
			for i := range log {
				if log[i].Outcome == "running" {
					log[i].Outcome, log[i].Reason = pool.Failed.String(), string(detect.Timeout)
					log[i].ElapsedMS = now.Sub(starts[i]).Milliseconds()
				}
			}
			return nil, &NoAnswerError{Why: "deadline", Tried: log}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// checkout takes the best instance this search has not tried, within its
// politeness budget and terms.
//
// The lease outlives the search when its attempt is a hedge loser still
// running: it is given back by Record, or by the pool when the returned
// release (called after Record) or the lease's own deadline ends its context.
func (p *Proxy) checkout(ctx context.Context, tried map[string]bool, now time.Time) (*pool.Lease, string, context.CancelFunc, bool) {
	skip := func(inst string) bool {
		if tried[inst] || !p.polite.Allowed(inst, now) {
			return true
		}
		c := p.caps.get(inst)
		return c.LinkToken && !p.cfg.AllowLinkToken
	}
	// A lease whose instance lost its budget to a concurrent search between
	// Checkout and Take is given back and the next one taken; bounded.
	for range 4 {
		lctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), now.Add(p.cfg.Deadline+5*time.Second))
		leases, err := p.pool.Checkout(lctx, 1, skip)
		if err != nil || len(leases) == 0 {
			cancel()
			return nil, "", nil, false
		}
		l := leases[0]
		inst := l.Instance()
		if p.polite.Take(inst, now) {
			return l, inst, cancel, true
		}
		p.pool.Record(l, pool.Outcome{Kind: pool.Cancelled}, 0)
		cancel()
		tried[inst] = true
	}
	return nil, "", nil, false
}

// hedgeTimer returns when the next instance should start early: when the
// current one has run HedgeFactor times its latency EWMA, at least
// HedgeFloor, but never later than a third of the time left, so that a
// hanging instance cannot eat the whole deadline. An instance not measured
// yet is given 1.5 × HedgeFloor: its prior is a guess, often stale.
func (p *Proxy) hedgeTimer(inst string, now, deadline time.Time) (<-chan time.Time, func()) {
	d := p.cfg.HedgeFloor * 3 / 2
	if st := p.pool.Stats(inst); st.Measured && st.LatencyMS > 0 {
		d = max(time.Duration(st.LatencyMS*p.cfg.HedgeFactor*float64(time.Millisecond)), p.cfg.HedgeFloor)
	}
	d = min(d, deadline.Sub(now)/3)
	if d <= 0 {
		return nil, func() {}
	}
	return p.cfg.Timer(d)
}

// attempt runs one upstream search, records its outcome in the pool and
// sends it to its search (the channel has room for every attempt).
func (p *Proxy) attempt(lease *pool.Lease, release context.CancelFunc, inst string, req Request, deadline time.Time, out chan<- attemptResult) {
	defer release()
	now := p.cfg.Now()
	p.maybeReadConfig(inst, now)
	caps := p.caps.get(inst)
	format := caps.format(now)

	args := fasthttp.AcquireArgs()
	defer fasthttp.ReleaseArgs(args)
	upstreamArgs(args, &req, format)
	rep, err := p.up.get(inst, "search", args, req.acceptLanguage(), deadline)
	elapsed := p.cfg.Now().Sub(now)

	var v detect.Verdict
	if err != nil {
		v = detect.Verdict{Kind: detect.Failed, Reason: transportReason(err)}
	} else {
		v = detect.Classify(detect.Answer{
			Status: rep.Status, Header: rep.Header, Body: rep.Body,
			Format: format, Query: req.Query, Now: p.cfg.Now(), MaxBody: p.up.cfg.MaxBody,
		})
	}
	o := pool.Outcome{Kind: poolKind(v.Kind), Reason: string(v.Reason), RetryAfter: v.RetryAfter}
	switch {
	case v.Kind == detect.OK && v.Results != nil:
		o.Hits = len(v.Results.Results)
	case v.Kind == detect.Refused && v.Reason == detect.FormatDisabled && format == FormatJSON:
		// Our choice of format, not the instance refusing us: learn it, no
		// penalty; the next search uses its HTML page.
		p.caps.update(inst, func(c *Caps) { c.JSON, c.JSONAt = No, now })
		o = pool.Outcome{Kind: pool.Cancelled, Reason: string(v.Reason)}
	case err != nil && errors.Is(err, ErrBusy):
		// Our own connection cap, not the instance's doing.
		o = pool.Outcome{Kind: pool.Cancelled, Reason: "busy"}
	case v.Kind == detect.Failed && v.Reason == detect.Timeout && elapsed < min(p.cfg.HedgeFloor, p.cfg.Deadline/2):
		// Cut short by its search's deadline before the instance had a fair
		// chance (a hedge started late): not the instance's failure. Every
		// other outcome, late or not, is the instance's own and recorded:
		// nothing tears a hedge loser down, it runs to its answer.
		o = pool.Outcome{Kind: pool.Cancelled, Reason: "cancelled"}
	}
	switch {
	case v.Kind == detect.OK && format == FormatJSON && caps.JSON != Yes:
		p.caps.update(inst, func(c *Caps) { c.JSON, c.JSONAt = Yes, now })
	case v.Kind == detect.OK && format == FormatHTML && caps.learnFormats(now):
		// The results page lists the formats the instance offers: learning
		// it here spares the instance a 403 on JSON later.
		offers := No
		if slices.Contains(v.Formats, FormatJSON) {
			offers = Yes
		}
		p.caps.update(inst, func(c *Caps) { c.JSON, c.JSONAt = offers, now })
	}
	p.pool.Record(lease, o, elapsed)
	p.metrics.upstream(inst, o, elapsed)
	out <- attemptResult{instance: inst, verdict: v, outcome: o, elapsed: elapsed}
}

func transportReason(err error) detect.Reason {
	switch {
	case errors.Is(err, ErrTimeout):
		return detect.Timeout
	case errors.Is(err, ErrTooLarge):
		return detect.TooLarge
	default:
		return detect.Transport
	}
}

func poolKind(k detect.Kind) pool.Kind {
	switch k {
	case detect.OK:
		return pool.OK
	case detect.Soft:
		return pool.Soft
	case detect.Refused:
		return pool.Refused
	default:
		return pool.Failed
	}
}

// upstreamArgs writes the search's parameters for an instance. The HTML
// page is SearXNG's default format: no format parameter is sent for it.
func upstreamArgs(args *fasthttp.Args, r *Request, format string) {
	args.Set("q", r.Query)
	if format != FormatHTML {
		args.Set("format", format)
	}
	if r.PageNo > 1 {
		args.Set("pageno", strconv.Itoa(r.PageNo))
	}
	if len(r.Categories) > 0 {
		args.Set("categories", strings.Join(r.Categories, ","))
	}
	if len(r.Engines) > 0 {
		args.Set("engines", strings.Join(r.Engines, ","))
	}
	if r.Language != "" {
		args.Set("language", r.Language)
	}
	if r.TimeRange != "" {
		args.Set("time_range", r.TimeRange)
	}
	if r.SafeSearch != "" {
		args.Set("safesearch", r.SafeSearch)
	}
}

// answer turns a winning attempt into the client's response and caches it.
func (p *Proxy) answer(req Request, key string, r attemptResult, attempts int, soft string) (*Response, error) {
	res := r.verdict.Results
	res.Query = req.Query
	js := res.AppendJSON(make([]byte, 0, 4096))
	now := p.cfg.Now()
	if soft == "" {
		c := &Cached{JSON: js, Instance: r.instance, StoredAt: now, Expires: now.Add(p.cfg.CacheTTL)}
		p.cache.put(key, c)
		if p.cfg.Store != nil {
			p.cfg.Store.CachePut(key, *c)
		}
	}
	return &Response{JSON: js, Instance: r.instance, Attempts: attempts, Soft: soft, results: res}, nil
}
