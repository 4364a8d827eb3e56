package proxy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/searxgate/searxgate/results"
	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/internal/clock"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy/cache"
	"github.com/searxgate/searxgate/proxy/instance"
	"github.com/searxgate/searxgate/proxy/polite"
	"github.com/searxgate/searxgate/proxy/upstream"
)

// ErrNoAnswer is wrapped by the *NoAnswerError a search returns when no
// instance gave a good answer in time and there was no stale copy.
var ErrNoAnswer = errors.New("no instance answered")

// Attempt is one upstream search of a client search, as the 503 body and
// the logs tell it.
type Attempt struct {
	Instance string      `json:"instance"`
	Own      bool        `json:"own"`     // one of the operator's own instances
	Outcome  string      `json:"outcome"` // ok, soft, refused, failed, cancelled, skipped
	Reason   pool.Reason `json:"reason,omitempty"`
	// Owner is whose doing the outcome was (blame.go): "instance",
	// "query", "client" or "searxgate"; "" while it is not decided.
	Owner string `json:"owner,omitempty"`
	// Until is when the instance's circuit, opened by this or an
	// earlier outcome, lets searches through again; zero when it is not
	// open.
	Until     time.Time `json:"until,omitzero"`
	ElapsedMS int64     `json:"elapsed_ms"`
}

// NoAnswerError says what was tried and why each attempt failed.
type NoAnswerError struct {
	Why   Stop      // why the search stopped without an answer
	Tried []Attempt // in the order they started
	// Waiting are instances the search could not ask because they cool
	// down after an earlier outcome of their own (Outcome "skipped", its
	// Reason that outcome's): a few, the operator's own first.
	Waiting []Attempt
	// RetryAfter is when a slot is expected to free, from now, when the
	// search was refused because none could be had within its deadline;
	// 0 when nothing says (the client may send Retry-After: 1 or none).
	RetryAfter time.Duration
}

func (e *NoAnswerError) Error() string {
	return fmt.Sprintf("%s: %s after %d attempts", ErrNoAnswer, e.Why, len(e.Tried))
}

func (e *NoAnswerError) Unwrap() error { return ErrNoAnswer }

// Stop is why a search ended without an answer. The search path decides
// it once; each face (web, mcp) words every Stop in one table of its own,
// and a test holds the tables to Stops.
type Stop string

// The reasons a search stops without an answer.
const (
	StopDeadline     Stop = "deadline"      // its deadline passed
	StopNoInstance   Stop = "no_instance"   // no instance in the pool can be searched at all
	StopNoSlot       Stop = "no_slot"       // no instance can take it before its deadline
	StopShare        Stop = "share"         // its client used its share of the public instances' budget
	StopAttempts     Stop = "attempts"      // every instance asked refused or failed
	StopNetwork      Stop = "network"       // no instance's name resolves: this machine's network
	StopBudget       Stop = "budget"        // its client's share of the extra budget (retries, second opinions) is spent
	StopShutdown     Stop = "shutdown"      // searxgate is shutting down
	StopQueueFull    Stop = "queue_full"    // too many searches wait for an instance
	StopLeaderFailed Stop = "leader_failed" // the identical search it joined ended without an answer
	StopQuery        Stop = "query"         // the query fails alike on every instance asked
	StopQueryTimeout Stop = "query_timeout" // the query's <N asks for longer than the deadline
	StopCancelled    Stop = "cancelled"     // its caller went away (never shown: the context's error is)
)

// Stops are the reasons a client can be told, for the faces' tables.
var Stops = []Stop{StopDeadline, StopNoInstance, StopNoSlot, StopShare, StopAttempts, StopNetwork, StopBudget,
	StopShutdown, StopQueueFull, StopLeaderFailed, StopQuery, StopQueryTimeout}

// Retryable reports whether asking again later can answer: not when the
// query itself is the cause.
func (w Stop) Retryable() bool { return w != StopQuery && w != StopQueryTimeout }

// limitedErr reports whether err is a *LimitedError.
func limitedErr(err error) bool {
	var limited *LimitedError
	return errors.As(err, &limited)
}

// shareRefused reports whether err is a search refused for its client's
// share.
func shareRefused(err error) bool {
	if err == nil {
		return false // every answered search asks: nothing to allocate
	}
	var na *NoAnswerError
	return errors.As(err, &na) && na.Why == StopShare
}

// DefaultExtraRatio is Config.ExtraRatio's default: extras (retries,
// hedges, second opinions) a search may add, as a share of first attempts.
const DefaultExtraRatio = 0.2

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
	// Fanout is "asked/answered" for a search sent to several instances
	// at once and merged ("" otherwise); Instance then lists every
	// instance that answered, comma-separated.
	Fanout string
	Soft   string // non-empty when the best answer was a soft one (e.g. "empty"), or a redirect's reason
	// Redirect is where the query's answer sends the client (an external
	// bang, feeling lucky: SearXNG's 302 Location); JSON is nil then.
	Redirect string
	Elapsed  time.Duration

	once    sync.Once
	results *results.Page
	err     error
}

// Results returns the answer's results, decoding the JSON once when the
// answer came from the cache, for the formats rendered from it.
func (r *Response) Results() (*results.Page, error) {
	r.once.Do(func() {
		if r.results == nil {
			r.results, r.err = detect.ParseJSON(r.JSON)
		}
	})
	return r.results, r.err
}

// Window is one politeness window (Config.Budget and its kin): at most Max
// searches in any span of Per.
type Window = polite.Window

// MaxWindow is the largest Max a Window may have.
const MaxWindow = polite.MaxWindow

// UpstreamConfig is how searxgate talks to instances (Config.Upstream):
// the upstream client's own configuration.
type UpstreamConfig = upstream.Config

// Config is everything the search path needs; zero values take defaults.
type Config struct {
	Pool     *pool.Pool
	Upstream UpstreamConfig
	Logger   *slog.Logger
	// Clock tells the time and makes the deadline, hedge and wake-up
	// timers; nil is the real clock. The network keeps real time: the
	// upstream client and the leases' contexts are given the time left
	// of a deadline read on Clock, never the deadline itself, so a clock
	// far from real time (a test's) keeps them right.
	Clock clock.Clock

	Deadline    time.Duration // one search, all attempts included (default 4 s)
	MaxAttempts int           // default 4
	// A hedge starts the next instance when the current one has run longer
	// than HedgeFactor times its latency EWMA, and at least HedgeFloor.
	HedgeFactor float64       // default 2
	HedgeFloor  time.Duration // default 800 ms
	// Extras (retries, hedges and second opinions) stay within ExtraRatio
	// of first attempts over ExtraWindow, with ExtraFloor extras always
	// allowed; hedges may use half of it.
	ExtraRatio  float64       // default 0.2
	ExtraFloor  int           // default 20
	ExtraWindow time.Duration // default 1 min

	Budget []Window // per public instance (default 10 per 20 s and 100 per 10 min)
	// OwnBudget is the budget of the operator's own instances (pool tier
	// Own): none by default, since they are the operator's to load. One
	// whose /config says SearXNG's limiter is on is paced below the
	// limiter's windows (LimiterBudget, or OwnBudget where tighter),
	// unless OwnPassIP says searxgate is on its pass list.
	OwnBudget []Window
	// OwnPassIP says the operator's own instances pass searxgate's address
	// (botdetection.ip_lists.pass_ip in their limiter.toml): no pacing
	// below their limiter.
	OwnPassIP bool
	// SourceAddr, when set, says the address searxgate sends from to the
	// instance inst, for the advice when an own instance's limiter does
	// not pass it (instance.PassIPAdvice).
	SourceAddr func(inst string) string
	// AutocompleteBudget is autocompletion's budget per public instance,
	// apart from the searches' (default 2 per 20 s and 20 per 10 min:
	// with the searches' default, 12 and 120, under SearXNG's 15 and 150).
	AutocompleteBudget []Window
	// MaxQueue bounds the searches waiting for a free slot (an in-flight
	// cap, a politeness window, a half-open trial); past it a search is
	// refused at once. Default 256.
	MaxQueue int
	// Admit, when set, is asked for each upstream search of a public
	// instance a client search makes: its first attempt and each instance
	// of a fan-out (never for cache hits, coalesced searches, retries,
	// hedges or the operator's own instances), with Request.Client; when
	// it says no to a first attempt and no own instance is free, the
	// search fails with a *LimitedError carrying its retryAfter, and a
	// fan-out asks fewer.
	Admit func(client string, now time.Time) (ok bool, retryAfter time.Duration)
	// AdmitExtra, when set, is asked for each upstream search of a public
	// instance beyond those Admit is asked for (a retry after an
	// instance's failure, a hedge), with Request.Client: extras are
	// charged to the client's rate too (client.Limiter lends them
	// DefaultExtraRatio of a minute's rate ahead). One it refuses is not
	// sent.
	AdmitExtra func(client string, now time.Time) bool

	CacheTTL     time.Duration // default 1 h
	EmptyTTL     time.Duration // an answer that found nothing, at most (default 10 min)
	StaleFor     time.Duration // how long past expiry an answer may still be served stale (default 24 h)
	CacheEntries int           // default 10,000
	CacheBytes   int64         // default 64 MiB
	Store        cache.Store   // optional
	// NoCache keeps no answer anywhere: none is put in or served from the
	// memory cache (so none is served stale when nothing answers either),
	// the Store or the shared cache, answers that found nothing, answers
	// whose poverty is the query's own and autocompletions included; the
	// cache settings above are then unused. Identical searches in flight
	// are still coalesced within the process, not across replicas (their
	// answers would meet in the shared cache).
	NoCache bool

	// Shared is what this process shares with other replicas of the same
	// egress (budgets, answers, searches in flight); zero = nothing, the
	// default. See shared.go.
	Shared Shared

	// Fanout is the default Request.Fanout (default 1: one instance
	// answers); MaxFanout caps what a request may ask (default 3).
	Fanout    int
	MaxFanout int
	// FanoutGrace is how long a fan-out search waits for more answers
	// after its first (default 300 ms): a slow instance does not hold the
	// answer; its attempt finishes on its own.
	FanoutGrace time.Duration

	// AllowLinkToken lets searches go to instances whose link-token check is
	// on. Off by default: such an instance treats searxgate as a bot after
	// three searches.
	AllowLinkToken bool
}

// The defaults of Config, named once: cmd's flags and the redis package
// start from these, so a default is written in one place.
const (
	DefaultDeadline    = 4 * time.Second
	DefaultMaxAttempts = 4
	DefaultCacheTTL    = time.Hour
	DefaultMaxFanout   = 3
	DefaultFanoutGrace = 300 * time.Millisecond
	DefaultMaxQueue    = 256
	// DefaultBudget20s and DefaultBudget10m are a public instance's
	// budget: below SearXNG's limiter (15 in 20 s, 150 in 10 min).
	DefaultBudget20s = 10
	DefaultBudget10m = 100
)

// DefaultBudget is Config.Budget's default: DefaultBudget20s searches in
// 20 s and DefaultBudget10m in 10 min, for each public instance.
func DefaultBudget() []Window {
	return []Window{{Max: DefaultBudget20s, Per: 20 * time.Second}, {Max: DefaultBudget10m, Per: 10 * time.Minute}}
}

// DefaultAutocompleteBudget is Config.AutocompleteBudget's default.
func DefaultAutocompleteBudget() []Window {
	return []Window{{Max: 2, Per: 20 * time.Second}, {Max: 20, Per: 10 * time.Minute}}
}

func (c *Config) defaults() {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	c.Clock = clock.Or(c.Clock)
	if c.Deadline <= 0 {
		c.Deadline = DefaultDeadline
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.HedgeFactor <= 0 {
		c.HedgeFactor = 2
	}
	if c.HedgeFloor <= 0 {
		c.HedgeFloor = 800 * time.Millisecond
	}
	if c.ExtraRatio <= 0 {
		c.ExtraRatio = DefaultExtraRatio
	}
	if c.ExtraFloor <= 0 {
		c.ExtraFloor = 20
	}
	if c.ExtraWindow <= 0 {
		c.ExtraWindow = time.Minute
	}
	if c.AutocompleteBudget == nil {
		c.AutocompleteBudget = DefaultAutocompleteBudget()
	}
	if c.Budget == nil {
		c.Budget = DefaultBudget()
	}
	if c.CacheTTL <= 0 {
		c.CacheTTL = DefaultCacheTTL
	}
	if c.EmptyTTL <= 0 {
		c.EmptyTTL = 10 * time.Minute
	}
	if c.MaxFanout <= 0 {
		c.MaxFanout = DefaultMaxFanout
	}
	if c.FanoutGrace <= 0 {
		c.FanoutGrace = DefaultFanoutGrace
	}
	c.Fanout = min(max(c.Fanout, 1), c.MaxFanout)
	if c.MaxQueue <= 0 {
		c.MaxQueue = DefaultMaxQueue
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
	up       *upstream.Client
	polite   *polite.Politeness
	acPolite *polite.Politeness // autocompletion's own, smaller budget
	acFair   *polite.Fair       // each client's share of it
	fair     *polite.Fair
	extra    *polite.ExtraBudget
	cache    *cache.Cache // the answers and the autocompletions, in memory, shared and stored
	replicas *Replicas
	flights  flights
	queue    *polite.Queue[waiting] // its lock is taken before the pool's, never while holding it
	recs     *instance.Registry     // one record per instance: terms, budget rings, host client, recent outcomes
	// classify judges one answer: detect.Classify, replaced by tests that
	// need a parser that panics.
	classify func(detect.Answer) detect.Verdict
	metrics  *Metrics
	causes   causeLog // one log line per instance and cause
	log      *slog.Logger
	bg       context.Context
	bgCancel context.CancelFunc
	bgWG     sync.WaitGroup // attempts and /config reads; Add only through spawn
	bgMu     sync.Mutex     // guards closing, and orders bgWG.Add before Wait
	closing  bool
	idle     chan func()    // hands work to a worker waiting for it (see spawn)
	workers  sync.WaitGroup // worker goroutines, busy or idle
}

// New returns a Proxy. Close stops its background work.
func New(cfg Config) (*Proxy, error) {
	if cfg.Pool == nil {
		return nil, errors.New("proxy: Config.Pool is required")
	}
	cfg.defaults()
	bg, cancel := context.WithCancel(context.Background())
	// The windows count from the proxy's clock (fake in tests), and each
	// instance's live in its record. Autocompletion's windows add up over
	// the public instances that suggest; a search's newcomer waits at
	// most half a deadline for its seat in the fair share.
	base := cfg.Clock.Now()
	var p *Proxy // the records' background reads run as the proxy's work
	recs := instance.New(instance.Config{Pool: cfg.Pool, AllowLinkToken: cfg.AllowLinkToken, OwnPassIP: cfg.OwnPassIP,
		SourceAddr: cfg.SourceAddr, Log: cfg.Logger, Now: cfg.Clock.Now, Spawn: func(f func()) bool { return p.spawn(f) }, Stop: bg})
	p = &Proxy{
		cfg:  cfg,
		pool: cfg.Pool,

		polite:   polite.NewPoliteness(cfg.Budget...).WithOwn(cfg.OwnBudget...).WithBase(base).WithRings(recs.Rings(false)),
		acPolite: polite.NewPoliteness(cfg.AutocompleteBudget...).WithBase(base).WithRings(recs.Rings(true)),
		acFair:   polite.NewFair(cfg.AutocompleteBudget, recs.PublicSuggesters).WithBase(base),
		fair:     polite.NewFair(cfg.Budget, cfg.Pool.PublicLen).WithBase(base).WithLend(cfg.Deadline / 2),
		queue:    polite.NewQueue[waiting](cfg.MaxQueue),
		extra:    polite.NewExtraBudget(cfg.ExtraRatio, cfg.ExtraFloor, cfg.ExtraWindow).WithBase(base),
		cache: cache.New(cache.Config{TTL: cfg.CacheTTL, StaleFor: cfg.StaleFor, Entries: cfg.CacheEntries, Bytes: cfg.CacheBytes,
			Store: cfg.Store, Shared: cfg.Shared.Cache, NoCache: cfg.NoCache, Clock: cfg.Clock, Logger: cfg.Logger}),
		recs:     recs,
		metrics:  newMetrics(),
		log:      cfg.Logger,
		bg:       bg,
		bgCancel: cancel,
		idle:     make(chan func()),
		classify: detect.Classify,
	}
	up := cfg.Upstream
	if up.AllowRetry == nil {
		up.AllowRetry = func(inst string) bool {
			return p.replicas.take(p.bg, inst, p.polite.Own(inst), p.now())
		}
	}
	p.replicas = &Replicas{shared: cfg.Shared, polite: p.polite, recs: recs, metrics: p.metrics, deadline: cfg.Deadline}
	p.up = upstream.New(up, recs.Hosts())
	recs.Use(p.polite, p.acPolite, p.up)
	// A lease the pool takes back by itself frees a slot nobody else
	// announces: the waiters hear of it at once instead of polling.
	cfg.Pool.SetOnFree(p.dispatch)
	return p, nil
}

// now reads the proxy's clock.
func (p *Proxy) now() time.Time { return p.cfg.Clock.Now() }

// ctxDeadline is ctx's deadline on the proxy's clock, now being its
// reading: a context's deadline is real time, while the proxy's deadlines
// are read on its clock (a fake one in tests, far from real time).
// Whatever leaves the proxy for the network, contexts or fasthttp is
// given time left (a duration), never a time of the proxy's clock.
func (p *Proxy) ctxDeadline(ctx context.Context, now time.Time) (time.Time, bool) {
	d, ok := ctx.Deadline()
	if !ok {
		return time.Time{}, false
	}
	return now.Add(time.Until(d)), true
}

// timer is a timer of the proxy's clock that fires after d, and its stop
// (the clock's own: a search makes two timers, and a closure around each
// stop was two allocations more a miss).
func (p *Proxy) timer(d time.Duration) (<-chan time.Time, func() bool) {
	return p.cfg.Clock.NewTimer(d)
}

// noStop is the stop of a timer never made.
func noStop() bool { return false }

// spawn runs f in the background, counted by Wait, unless the proxy is
// shutting down; it reports whether f was started. The closing flag is
// read under the same lock Shutdown sets it with, so no goroutine is added
// once Shutdown waits.
//
// f runs on a worker that ran an attempt before when one is idle: an
// attempt's stack grows to tens of KiB (the HTTP client, inflate, the JSON
// reader), and a fresh goroutine per attempt copied it up again every time,
// a few percent of a cache miss's CPU.
func (p *Proxy) spawn(f func()) bool {
	p.bgMu.Lock()
	defer p.bgMu.Unlock()
	if p.closing {
		return false
	}
	p.bgWG.Add(1)
	select {
	case p.idle <- f:
	default:
		p.workers.Add(1)
		go p.work(f)
	}
	return true
}

// workerIdle is how long a worker waits for more work before it ends. It
// is wall-clock time on purpose: it decides only how many goroutines stay
// parked, never what a search does, so tests need not drive it.
const workerIdle = 10 * time.Second

// work runs f, then whatever spawn hands it, until it has waited
// workerIdle for nothing or the proxy closes.
func (p *Proxy) work(f func()) {
	defer p.workers.Done()
	t := time.NewTimer(workerIdle)
	defer t.Stop()
	for {
		p.runTask(f)
		t.Reset(workerIdle)
		select {
		case f = <-p.idle:
		case <-t.C:
			return
		case <-p.bg.Done():
			return
		}
	}
}

// runTask runs f as one unit of background work.
func (p *Proxy) runTask(f func()) {
	defer p.bgWG.Done()
	f()
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
	p.workers.Wait()
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

// PublicCapacity is what the public pool's budgets allow in all: per
// minute, sustained (by the window that allows the fewest a minute), and
// at once (the shortest window's Max), times the public instances; 0, 0
// when there is no public instance or no budget.
func (p *Proxy) PublicCapacity() (perMinute, burst float64) {
	var shortest time.Duration
	for _, w := range p.cfg.Budget {
		if w.Max <= 0 || w.Per <= 0 {
			continue
		}
		if r := float64(w.Max) * float64(time.Minute) / float64(w.Per); perMinute == 0 || r < perMinute {
			perMinute = r
		}
		if shortest == 0 || w.Per < shortest {
			shortest, burst = w.Per, float64(w.Max)
		}
	}
	n := float64(p.pool.PublicLen())
	return perMinute * n, burst * n
}

// Cache returns the search path's caches: to drop, purge or prune them,
// and to read their lifetime and size.
func (p *Proxy) Cache() *cache.Cache { return p.cache }

// Replicas returns how this process takes part in a group of replicas.
func (p *Proxy) Replicas() *Replicas { return p.replicas }

// Search answers one client search: from the cache, from an identical search
// in flight, or from the pool. It returns a *NoAnswerError (wrapping
// ErrNoAnswer) when nothing answered and no stale copy exists, and ctx's
// error when the client went away. A timeout_limit bounds it as a shorter
// deadline (Request.TimeoutLimitDuration).
func (p *Proxy) Search(ctx context.Context, req Request) (*Response, error) {
	ctx, cancel := req.withTimeoutLimit(ctx)
	defer cancel()
	start := p.now()
	if req.Fanout <= 0 {
		req.Fanout = p.cfg.Fanout
	}
	req.Fanout = min(req.Fanout, p.cfg.MaxFanout)
	if req.Syntax.Text() != req.Query {
		req.Syntax = detect.ParseQuery(req.Query) // a Request not made by ParseRequest
	}
	// In memory (the cache, the searches in flight) a search is its plain
	// key: a hit costs no hashing. What leaves memory (the store's file,
	// the shared cache) is keyed with the keyed hash (cache.Cache.Hashed).
	key := &cache.Key{Plain: req.Key()}
	stale, hit := p.cache.Get(ctx, key)
	if hit && start.Before(stale.Expires) {
		p.metrics.search("cached", p.now().Sub(start))
		return &Response{JSON: stale.JSON, Instance: stale.Instance, Cached: true, Elapsed: p.now().Sub(start)}, nil
	}
	for {
		fl, leader := p.flights.join(key.Plain)
		if leader {
			return p.lead(ctx, req, key, start, fl, stale, hit)
		}
		select {
		case <-fl.done:
		case <-ctx.Done():
			p.flights.leave(fl)
			return nil, ctx.Err()
		}
		var limited *LimitedError
		if errors.As(fl.err, &limited) {
			continue // the leader's client was over its share, not this one: ask again
		}
		if fl.err != nil {
			return nil, fl.err
		}
		l := fl.res
		r := &Response{JSON: l.JSON, Instance: l.Instance, Attempts: l.Attempts, Cached: l.Cached,
			Stale: l.Stale, Soft: l.Soft, Fanout: l.Fanout, Redirect: l.Redirect, Coalesced: true, Elapsed: p.now().Sub(start),
			results: fl.results} // read only: shared, never decoded again
		p.metrics.search("coalesced", r.Elapsed)
		return r, nil
	}
}

// errLeaderFailed is what the followers of a coalesced search get when its
// leader ended without an answer or an error (it panicked).
var errLeaderFailed = &NoAnswerError{Why: StopLeaderFailed}

// lead runs a search others may join. It runs on a context of its own,
// ended by the search's deadline or when every caller waiting for it has
// gone (flights.leave): its own client going away must not fail the
// others waiting on it, and a search nobody waits for stops. Their answer
// is published however it ends.
func (p *Proxy) lead(ctx context.Context, req Request, key *cache.Key, start time.Time, fl *flight, stale cache.Entry, hit bool) (res *Response, err error) {
	defer func() {
		if res == nil && err == nil {
			err = errLeaderFailed
		}
		p.flights.finish(key.Plain, fl, res, err)
	}()
	lctx := context.WithoutCancel(ctx)
	if ctx.Done() != nil { // a caller that can go away (one that cannot costs nothing here)
		var cancelAll context.CancelFunc
		lctx, cancelAll = context.WithCancel(lctx)
		defer cancelAll()
		p.flights.arm(fl, cancelAll)
		defer context.AfterFunc(ctx, func() { p.flights.leave(fl) })()
	}
	if d, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		lctx, cancel = context.WithDeadline(lctx, d)
		defer cancel()
	}
	deadline := start.Add(p.cfg.Deadline)
	if d, ok := p.ctxDeadline(ctx, start); ok && d.Before(deadline) {
		deadline = d
	}
	// Another replica may be searching the same query: its answer, not a
	// second search upstream. Coalesced, not Cached: it is another
	// replica's search of this moment, not one kept from before.
	shared, joined, release := p.cache.Join(lctx, key, start, deadline)
	if joined {
		p.metrics.sharedJoined.Add(1)
		res = &Response{JSON: shared.JSON, Instance: shared.Instance, Coalesced: true, Elapsed: p.now().Sub(start)}
		p.metrics.search("coalesced", res.Elapsed)
		return res, nil
	}
	res, err = p.fetch(lctx, req, key, start, deadline)
	release()
	if err != nil && hit && start.Sub(stale.Expires) < p.cfg.StaleFor && !errors.Is(err, context.Canceled) {
		res, err = &Response{JSON: stale.JSON, Instance: stale.Instance, Cached: true, Stale: true}, nil
	}
	elapsed := p.now().Sub(start)
	switch {
	case err != nil && (limitedErr(err) || shareRefused(err)):
		p.metrics.search("limited", elapsed) // the client's own limit or share: no search failed
	case errors.Is(err, context.Canceled):
		p.metrics.search("cancelled", elapsed) // every caller went away: nobody's failure
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
	return res, err
}

// attemptResult is what one upstream attempt sends back to its search.
type attemptResult struct {
	instance string
	verdict  detect.Verdict
	outcome  pool.Outcome
	elapsed  time.Duration
}

// giveBack returns a lease whose search is not sent.
func (p *Proxy) giveBack(l *pool.Lease, release context.CancelFunc) {
	p.pool.Record(l, pool.Outcome{Kind: pool.Cancelled}, 0)
	release()
}

// hedgeTimer returns when the next instance should start early: when the
// current one has run HedgeFactor times its latency EWMA, at least
// HedgeFloor, but never later than a third of the time left, so that a
// hanging instance cannot eat the whole deadline. An instance not measured
// yet is given 1.5 × HedgeFloor: its prior is a guess, often stale.
func (p *Proxy) hedgeTimer(r *instance.Record, now, deadline time.Time) (<-chan time.Time, func() bool) {
	d := p.cfg.HedgeFloor * 3 / 2
	if lat, ok := p.usual(r.URL()); ok && lat > 0 {
		d = max(time.Duration(float64(lat)*p.cfg.HedgeFactor), p.cfg.HedgeFloor)
	}
	d = min(d, deadline.Sub(now)/3)
	if r.Caps().ConfigAt.IsZero() {
		// Its terms are read before it is searched (Record.Terms): the
		// search itself starts that much later.
		d += instance.ReadWait(deadline.Sub(now))
	}
	if d <= 0 {
		return nil, noStop
	}
	return p.timer(d)
}

// attempt runs one upstream search, has its outcome recorded with its
// owner (at once, or once a second opinion came: see blame.go) and sends
// it to its search (the channel has room for every attempt).
func (p *Proxy) attempt(l leased, req Request, deadline time.Time, out chan<- attemptResult, op *opinions) {
	lease, inst, rec := l.lease, l.inst, l.rec
	now := p.now()
	caps := rec.Terms(now, deadline)
	if rec.BarredBy(caps) {
		// Its terms, read just now, say it would take searxgate for a bot:
		// the search is not sent.
		o := pool.Outcome{Kind: pool.Cancelled, Reason: ReasonLinkToken}
		p.record(l, o, 0)
		out <- attemptResult{instance: inst, verdict: detect.Verdict{Kind: detect.Failed}, outcome: o}
		return
	}
	format := rec.Format(caps, lease.Own())
	// The budget counts the search when it is sent, not when it was
	// planned: its terms may have taken a while to read.
	now = p.now() // the search's own time starts after its terms were read
	p.polite.Restamp(inst, l.takenAt, now)
	p.replicas.restamp(inst, lease.Own(), l.takenAt, now)
	v, elapsed, err := p.safeAsk(inst, &req, format, deadline)
	if v.Kind == detect.Refused && v.Reason == detect.FormatDisabled && format == FormatJSON {
		// Our choice of format, not the instance refusing us: learn it, no
		// penalty, and ask its HTML page at once if the budget allows.
		rec.Update(func(c *Caps) { c.JSON, c.JSONAt = No, now })
		ours := pool.Outcome{Kind: pool.Cancelled, Reason: pool.Reason(v.Reason)}
		p.metrics.upstream(ours, elapsed)
		p.recs.Count(rec, inst, ours, elapsed)
		if now = p.now(); now.Before(deadline) && p.replicas.take(p.bg, inst, lease.Own(), now) {
			format = FormatHTML
			v, elapsed, err = p.safeAsk(inst, &req, format, deadline)
		}
	}
	o := outcomeOf(v, err, format)
	if v.Results != nil && v.Results.Dropped > 0 {
		p.metrics.dropped.Add(v.Results.Dropped)
	}
	if lease.Own() && rec.PassIPDenied(v, format, now) {
		o = passIPOutcome(v)
	}
	if v.Kind == detect.OK && v.Results != nil {
		o.Hits = len(v.Results.Results)
		if !v.Results.NothingFound() {
			op.answered(elapsed)
		}
	}
	switch {
	case v.Kind == detect.OK && format == FormatJSON && caps.JSON != Yes:
		rec.Update(func(c *Caps) { c.JSON, c.JSONAt = Yes, now })
	case v.Kind == detect.OK && format == FormatHTML && caps.LearnFormats(now):
		// The results page lists the formats the instance offers: learning
		// it here spares the instance a 403 on JSON later.
		offers := No
		if slices.Contains(v.Formats, FormatJSON) {
			offers = Yes
		}
		rec.Update(func(c *Caps) { c.JSON, c.JSONAt = offers, now })
	}
	op.settle(l, o, elapsed)
	if o.Owner == pool.OwnerInstance {
		p.learnQuality(inst, &req, v)
	}
	out <- attemptResult{instance: inst, verdict: v, outcome: o, elapsed: elapsed}
}

// safeAsk is ask that turns a panic while reading the answer into the
// instance's unreadable answer: one hostile page must not stop the
// gateway. The stack is logged once, here.
func (p *Proxy) safeAsk(inst string, req *Request, format string, deadline time.Time) (v detect.Verdict, elapsed time.Duration, err error) {
	start := p.now()
	defer func() {
		if r := recover(); r != nil {
			p.log.Error("reading an instance's answer panicked: taken as an unreadable answer",
				"instance", inst, "panic", r, "stack", string(debug.Stack()))
			v, elapsed, err = detect.Verdict{Kind: detect.Failed, Reason: detect.BadBody}, p.now().Sub(start), nil
		}
	}()
	return p.ask(inst, req, format, deadline)
}

// ask sends one search to inst in format and judges the answer.
func (p *Proxy) ask(inst string, req *Request, format string, deadline time.Time) (detect.Verdict, time.Duration, error) {
	start := p.now()
	args := fasthttp.AcquireArgs()
	defer fasthttp.ReleaseArgs(args)
	upstreamArgs(args, req, format)
	rep, err := p.up.Get(inst, "search", args, req.acceptLanguage(), deadline.Sub(start))
	elapsed := p.now().Sub(start)
	if err != nil {
		return detect.Verdict{Kind: detect.Failed, Reason: upstream.Reason(err)}, elapsed, err
	}
	v := p.classify(detect.Answer{
		Status: rep.Status, Header: rep.Header, Body: rep.Body, Instance: inst,
		Format: format, Query: req.Syntax, Now: p.now(), MaxBody: p.up.MaxBody(),
	})
	rep.Release() // the verdict keeps nothing of the body (detect.Classify)
	return v, elapsed, nil
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
//
// A feeling-lucky search ("!! words") is asked of an HTML page without
// its "!!": SearXNG would answer the page with a redirect to its first
// result, where its JSON gives every result. Asked so, the page has the
// results SearXNG's JSON would have; web still sends a browser to the
// first one.
func upstreamArgs(args *fasthttp.Args, r *Request, format string) {
	r.Each(r.PageNo, args.Set)
	if format != FormatHTML {
		args.Set("format", format)
		return
	}
	if why, _ := r.Syntax.Bang(); why == detect.FeelingLucky {
		if q := r.Syntax.Without(detect.WordLucky); q != "" {
			args.Set("q", q)
		}
	}
}

// answer turns a winning attempt into the client's response and caches it
// (an honest "nothing found" for EmptyTTL only: an index may catch up). A
// soft answer is cached only when ttl says for how long (the query's own
// poverty); ttl 0 is the default. With NoCache nothing is cached.
func (p *Proxy) answer(req Request, key *cache.Key, r attemptResult, attempts int, soft string, ttl time.Duration) (*Response, error) {
	res := r.verdict.Results
	res.Query = req.Echo(res.Query)
	js := res.AppendJSON(nil)
	now := p.now()
	if !p.cfg.NoCache && (soft == "" || ttl > 0) {
		ttl := min(cmp.Or(ttl, p.cfg.CacheTTL), p.cfg.CacheTTL)
		if res.NothingFound() {
			ttl = min(ttl, p.cfg.EmptyTTL)
		}
		p.cache.Put(key, &cache.Entry{JSON: js, Instance: r.instance, StoredAt: now, Expires: now.Add(ttl)})
	}
	return &Response{JSON: js, Instance: r.instance, Attempts: attempts, Soft: soft, results: res}, nil
}
