package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/api"
	"github.com/searxgate/searxgate/client"
	"github.com/searxgate/searxgate/directory"
	"github.com/searxgate/searxgate/egress"
	"github.com/searxgate/searxgate/internal/clock"
	"github.com/searxgate/searxgate/mcp"
	"github.com/searxgate/searxgate/operator"
	"github.com/searxgate/searxgate/persist"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/proxy/cache"
	"github.com/searxgate/searxgate/reader"
	"github.com/searxgate/searxgate/redis"
	"github.com/searxgate/searxgate/results"
	"github.com/searxgate/searxgate/store"
	"github.com/searxgate/searxgate/web"
)

// userAgent is what searxgate says it is to every instance: honestly a
// program, never a browser, with a way to reach its operator.
func userAgent(contact string) string {
	if contact == "" {
		return "searxgate/" + Version
	}
	return "searxgate/" + Version + " (+" + contact + ")"
}

// App is one running searxgate: the store, the pool, the proxy and the
// server, wired together.
type App struct {
	cfg    Config
	log    *slog.Logger
	clock  clock.Clock // cfg.clock, or the real one
	store  *store.Store
	pool   *pool.Pool
	proxy  *proxy.Proxy
	web    *web.Server
	server *fasthttp.Server
	ln     net.Listener
	peers  *peers // the client connections, watched while /mcp works for them
	source *directory.Source
	ops    *operator.Operator
	// cache is the proxy's persistent cache: sealed answers in the store,
	// written by flush.
	cache  *cache.WriteBehind
	dialer *egress.Dialer
	tls    *tls.Config // --ca-file's roots for every outbound TLS connection; nil: the system's
	// limiter is the per-client limit (nil when --client-rate is 0): the
	// proxy asks it for each search that would reach an instance, the
	// middleware for /autocompleter.
	limiter *client.Limiter
	notes   *dialNotes     // why dials to a host failed, for the start-up check
	mcp     *mcp.Server    // the MCP face (/mcp)
	reader  *reader.Reader // web_url_read's page reader
	apiKeys *api.Keys      // the search APIs' keys (--api-key, --api-key-file; reread on SIGHUP)
	hup     chan os.Signal // SIGHUP, caught from the doors' making on
	// shared is the state shared with the other replicas (--redis; nil
	// without it): see shared.go.
	shared *redis.Shared
	// secret is the operator's secret (--secret, --secret-file), read at
	// start when --redis is set; nil otherwise.
	secret []byte

	// refusedAtSeed counts the entries of the last list the address guard
	// refused (a private literal address, a localhost name).
	refusedAtSeed atomic.Int64
	// problem is why no instance can be searched, from the start-up check
	// ("" = none); Problem clears it once an instance becomes usable.
	problem atomic.Pointer[string]
	// checked is closed when the start-up check has judged the pool.
	checked chan struct{}

	// flusher writes what was learned to the store (persist).
	flusher *persist.Flusher
}

// NewApp opens the store, restores the pool and binds the listener; it does
// not serve yet.
func NewApp(ctx context.Context, cfg Config, log *slog.Logger) (*App, error) {
	a := &App{cfg: cfg, log: log, clock: clock.Or(cfg.clock), notes: &dialNotes{}, checked: make(chan struct{})}
	// Every connection to an instance or the directory goes through it.
	a.dialer = &egress.Dialer{AllowPrivate: cfg.AllowPrivate, Resolver: cfg.resolver, Timeout: 3 * time.Second, OnFailure: a.notes.note,
		Proxy: cfg.proxyFunc()}
	roots, err := cfg.rootCAs()
	if err != nil {
		return nil, err
	}
	if roots != nil {
		a.tls = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	}
	if a.dialer.Proxy != nil {
		log.Info("outbound connections go through a proxy, each target checked first",
			"https_proxy", withoutUser(cfg.httpsProxy), "http_proxy", withoutUser(cfg.httpProxy), "no_proxy", cfg.noProxy)
	}
	if err := a.openStore(); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			a.closeOpened()
		}
	}()
	if err := a.openShared(ctx); err != nil {
		return nil, err
	}
	if err := a.buildPool(); err != nil {
		return nil, err
	}
	imageSecret := a.buildCache()
	if err := a.buildProxy(); err != nil {
		return nil, err
	}
	if err := a.buildOperator(ctx); err != nil {
		return nil, err
	}
	if err := a.loadDirectory(ctx); err != nil {
		return nil, err
	}
	trusted, _ := client.ParsePrefixes(cfg.TrustProxy) // checked by Validate
	if err := a.buildWeb(trusted, imageSecret); err != nil {
		return nil, err
	}
	if err := a.listen(trusted); err != nil {
		return nil, err
	}
	ok = true
	return a, nil
}

// openStore makes the data folder and opens the store in it.
func (a *App) openStore() error {
	if err := os.MkdirAll(a.cfg.Data, 0o750); err != nil {
		return fmt.Errorf("--data (SEARXGATE_DATA): cannot make the folder %s: %w", a.cfg.Data, err)
	}
	st, err := store.Open(filepath.Join(a.cfg.Data, "searxgate.db"), store.Options{Logger: a.log, Clock: a.clock})
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		return fmt.Errorf("--data (SEARXGATE_DATA): searxgate cannot write in %s, give it a folder it may write: %w", a.cfg.Data, err)
	}
	if err != nil {
		return err
	}
	a.store = st
	if moved := st.Recovered(); moved != "" {
		a.log.Warn("the store was damaged: it was moved aside and a fresh one started", "moved_to", moved)
	}
	return nil
}

// privateHint adds to an error of the address guard the setting that lets
// such an address through.
func privateHint(err error) error {
	if errors.Is(err, egress.ErrPrivateAddress) {
		return fmt.Errorf("%w (for an instance on this machine or a home network, add --allow-private, SEARXGATE_ALLOW_PRIVATE=true)", err)
	}
	return err
}

// closeOpened closes what NewApp opened before it failed: the shared
// state, then the store.
func (a *App) closeOpened() {
	if a.shared != nil {
		_ = a.shared.Close()
	}
	_ = a.store.Close()
}

// buildPool makes the pool and restores what it learned before.
func (a *App) buildPool() error {
	strategy := pool.EWMA
	if a.cfg.Strategy == "primary_backup" || (a.cfg.Strategy == "auto" && len(a.cfg.Instances) > 0) {
		strategy = pool.PrimaryBackup
	}
	a.pool = pool.New(pool.Config{
		MaxInFlight:    a.cfg.MaxInFlight,
		OwnMaxInFlight: a.cfg.OwnMaxInFlight,
		Strategy:       strategy,
		Jitter:         0.1,
		Clock:          a.clock,
		OnEvent:        a.poolEvent,
	})
	return persist.RestorePool(a.store, a.pool, a.log)
}

// poolEvent logs a change of an instance's state, and passes it on.
func (a *App) poolEvent(e pool.Event) {
	level := slog.LevelInfo
	if e.From == e.To { // seeded, enabled, reset: no circuit moved
		level = slog.LevelDebug
	}
	a.log.Log(context.Background(), level, "instance state changed", "instance", e.Instance,
		"from", e.From, "to", e.To, "cooldown", e.Cooldown, "reason", e.Reason)
	// Gone from the pool (the operator removed it, or it left the
	// directory): drop the connections and counters kept for it.
	if e.Gone() && a.proxy != nil {
		a.proxy.Forget(e.Instance)
	}
	a.shareEvent(e)
}

// buildCache makes the proxy's persistent cache over the store and the
// per-client limiter, and returns the secret image links are signed from.
func (a *App) buildCache() []byte {
	if a.cfg.Budget20s == 0 || a.cfg.Budget10m == 0 {
		a.log.Warn("a politeness window is off (--budget-20s or --budget-10m is 0): only do this with instances of your own")
	}
	// With --redis, one key per search on every replica, and image links
	// any replica can serve.
	secret := a.cacheSecret()
	a.cache = cache.NewWriteBehind(a.store, cache.WriteBehindConfig{Secret: secret, NoCache: a.cfg.noCache(), Logger: a.log})
	a.limiter = client.NewLimiter(a.cfg.ClientRate, a.cfg.ClientBurst)
	return secret
}

// instanceAuth is proxy.UpstreamConfig.Authorization for the own
// instances given with user:password@; nil when there are none.
func instanceAuth(m map[string]string) func(string) string {
	if len(m) == 0 {
		return nil
	}
	return func(inst string) string { return m[inst] }
}

// buildProxy makes the proxy and restores the instances' capabilities.
func (a *App) buildProxy() error {
	cfg := a.cfg
	var err error
	a.proxy, err = proxy.New(proxy.Config{
		Pool:   a.pool,
		Logger: a.log,
		Clock:  a.clock,
		Upstream: proxy.UpstreamConfig{
			UserAgent:     userAgent(cfg.Contact),
			Dial:          a.dialer.Dial,
			Authorization: instanceAuth(cfg.instanceAuth),
			TLS:           a.tls,
			// Room for every search the pool may have in flight to one
			// instance (own ones may have more), plus the /config and
			// autocomplete reads.
			MaxConns: max(cfg.MaxInFlight, cfg.OwnMaxInFlight) + 4,
		},
		Deadline:       cfg.Deadline,
		MaxAttempts:    cfg.MaxAttempts,
		Budget:         publicBudget(cfg),
		OwnBudget:      ownBudget(cfg),
		MaxQueue:       cfg.Queue,
		Fanout:         cfg.Fanout,
		MaxFanout:      cfg.MaxFanout,
		FanoutGrace:    cfg.FanoutGrace,
		Admit:          a.limiter.Admit(),
		AdmitExtra:     a.limiter.AdmitExtra(proxy.DefaultExtraRatio),
		CacheTTL:       cfg.CacheTTL,
		NoCache:        cfg.noCache(),
		Store:          a.cache,
		AllowLinkToken: cfg.LinkToken,
		OwnPassIP:      cfg.OwnPassIP,
		SourceAddr:     sourceAddr(cfg.resolver),
		Shared:         a.proxyShared(),
	})
	if err != nil {
		return err
	}
	// The client limit follows what the public pool serves: on a small
	// pool no client may ask more than it can answer.
	a.limiter.WithCapacity(a.proxy.PublicCapacity)
	a.flusher = &persist.Flusher{Store: a.store, Pool: a.pool, Terms: a.proxy.Instances(), Answers: a.cache}
	return persist.RestoreCaps(a.store, a.proxy.Instances())
}

// buildOperator makes the operator, replays its stored changes and adds
// the instances of --instance.
func (a *App) buildOperator(ctx context.Context) error {
	a.ops = operator.New(operator.Config{Pool: a.pool, Terms: a.proxy.Instances(), Answers: a.proxy.Cache(), Store: a.store,
		AllowPrivate: a.cfg.AllowPrivate, MaxOwn: a.cfg.MaxOwnInstances, Clock: a.clock})
	if err := a.ops.Restore(); err != nil {
		return err
	}
	for _, in := range a.cfg.Instances {
		if err := a.ops.AddFlag(ctx, in); err != nil {
			return privateHint(err)
		}
	}
	return nil
}

// loadDirectory makes the directory source, loads the list once and seeds
// the pool with it.
func (a *App) loadDirectory(ctx context.Context) error {
	a.source = &directory.Source{
		Location: a.cfg.Directory,
		// The list is fetched through the same guard as the instances: the
		// dialer checks every address, the guard every redirect.
		Fetcher: directory.NewFetcher(egress.NewFetcher(egress.Config{
			AllowPrivate: a.cfg.AllowPrivate, Dialer: a.dialer, TLS: a.tls,
			Timeout: 20 * time.Second, MaxBytes: 16 << 20, UserAgent: userAgent(a.cfg.Contact),
		})),
		Cache:  persist.DirectoryCache{Store: a.store},
		Filter: directory.DefaultFilter(),
		Logger: a.log,
		Clock:  a.clock,
	}
	list, err := a.source.Load(ctx)
	if err != nil {
		return directoryError(a.cfg.Directory, err)
	}
	a.seedList(list, true)
	return nil
}

// buildWeb makes the HTTP face, with the MCP one inside it.
func (a *App) buildWeb(trusted []netip.Prefix, imageSecret []byte) error {
	cfg := a.cfg
	var mcpHandler fasthttp.RequestHandler
	a.mcp, mcpHandler = a.newMCP(trusted)
	doors, err := a.newAPIs(client.Of(trusted))
	if err != nil {
		return err
	}
	cacheTTL, cacheKeep := a.proxy.Cache().Lifetime()
	jsonShape, _ := results.ParseShape(cfg.JSONShape) // Validate checked it
	a.web, err = web.New(web.Config{Proxy: a.proxy, Pool: a.pool, Logger: a.log, Version: Version,
		MCP: mcpHandler, ToolCalls: a.toolCalls, Doors: doors,
		Operator: adminOps{a.ops}, AdminToken: cfg.AdminToken, PublicURL: cfg.PublicURL,
		CacheTTL: cacheTTL, CacheKeep: cacheKeep,
		Client:    client.Of(trusted),
		Problem:   a.Problem,
		Clock:     a.clock,
		JSONShape: jsonShape,
		// Image links are signed with a key derived from the store's
		// secret, so pages cached before a restart keep their images.
		// Images go out as every fetch does: through the outbound proxy,
		// trusting --ca-file.
		Images: web.ImageConfig{AllowPrivate: cfg.ImageAllowPrivate, Key: imageKey(imageSecret), Resolver: cfg.resolver,
			Proxy: cfg.proxyFunc(), TLS: a.tls}})
	return err
}

// listen binds the listener and makes the server that will serve on it.
func (a *App) listen(trusted []netip.Prefix) error {
	cfg := a.cfg
	var err error
	a.ln, err = net.Listen("tcp", cfg.Listen)
	if err != nil {
		return listenError(cfg.Listen, err)
	}
	var connState func(net.Conn, fasthttp.ConnState)
	if a.peers != nil {
		a.ln = a.peers.listener(a.ln)
		connState = a.peers.state
	}
	a.server = &fasthttp.Server{
		Handler:   web.Wrap(a.web.Handler(), a.limiter, trusted, accessLogger(cfg, a.log), a.clock),
		ConnState: connState,
		Name:      "searxgate",
		// A search request is small: ReadTimeout bounds the whole request
		// (from the connection's opening, or from its first byte on a
		// kept-alive one), so a client dribbling its header is cut off in
		// seconds. WriteTimeout starts when the handler returns; it stays
		// above the search deadline all the same.
		ReadTimeout:  cfg.ReadTimeout,
		WriteTimeout: cfg.Deadline + 10*time.Second,
		IdleTimeout:  cfg.IdleTimeout,
		// One address cannot hold every connection: past the cap its new
		// connections get 429 and are closed at once.
		MaxConnsPerIP:      cfg.MaxConnsPerIP,
		MaxRequestBodySize: 64 << 10,
		// Room for a GET with a query of 8 KiB, its escaping and the
		// usual headers; the longest (proxy.MaxQueryLen) come by POST.
		ReadBufferSize:  16 << 10,
		Concurrency:     cfg.MaxConns,
		CloseOnShutdown: true,
		// Errors name their kind, never the bytes a client sent.
		SecureErrorLogMessage: true,
		Logger:                newErrorLog(a.log, errLogEvery, a.clock),
		ErrorHandler:          requestError,
	}
	if cfg.MaxConnsPerIP > 0 && len(trusted) > 0 {
		a.log.Info("--max-conns-per-ip counts the reverse proxy's connections as one address's: keep it above the proxy's connection pool, or 0",
			"max_conns_per_ip", cfg.MaxConnsPerIP)
	}
	return nil
}

// ownBudget is the politeness budget of the operator's own instances: only
// the windows the operator set (none by default).
func ownBudget(cfg Config) []proxy.Window {
	var w []proxy.Window
	if cfg.OwnBudget20s > 0 {
		w = append(w, proxy.Window{Max: cfg.OwnBudget20s, Per: 20 * time.Second})
	}
	if cfg.OwnBudget10m > 0 {
		w = append(w, proxy.Window{Max: cfg.OwnBudget10m, Per: 10 * time.Minute})
	}
	return w
}

// imageKey is the key image links are signed with: derived from the
// store's per-install secret (never the secret itself, which keys the
// cache), so it outlives a restart.
func imageKey(secret []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("searxgate image links"))
	return m.Sum(nil)
}

// accessLogger is the access log's logger, nil when it is off.
func accessLogger(cfg Config, log *slog.Logger) *slog.Logger {
	if !cfg.AccessLog {
		return nil
	}
	return log.With("log", "access")
}

// Addr is the address the server listens on.
func (a *App) Addr() string { return a.ln.Addr().String() }

// seedList feeds a directory list to the pool by the operator's seeding
// rule (operator.Seed) and says what it did. At start the instances'
// terms are read by Run (and judged); on a refresh the operator reads
// them in the background (operator.Reseed).
func (a *App) seedList(list directory.List, start bool) {
	var seeded operator.Seeded
	if start {
		seeded = a.ops.Seed(list)
	} else {
		seeded = a.ops.Reseed(list)
	}
	for _, r := range seeded.Refused {
		a.log.Debug("directory entry refused by the address guard", "instance", r.URL, "err", r.Err)
	}
	refused := len(seeded.Refused)
	a.refusedAtSeed.Store(int64(refused))
	attrs := []any{"from", list.From, "instances", seeded.Instances}
	switch list.From {
	case directory.FromEmbedded:
		attrs = append(attrs, "snapshot_date", list.FetchedAt.Format(time.DateOnly))
	case directory.FromNone:
	default:
		attrs = append(attrs, "fetched_at", list.FetchedAt)
	}
	if refused > 0 {
		attrs = append(attrs, "refused_private", refused)
	}
	a.log.Info("instance list loaded", attrs...)
	if start && list.From == directory.FromFile && len(list.Entries) == 0 {
		a.log.Warn("the instance list file has no instance: only your own instances (--instance) will be searched", "path", a.cfg.Directory)
	}
}

// Run serves until ctx ends, then shuts down: stops accepting, lets
// in-flight searches finish up to the grace period, flushes the store.
func (a *App) Run(ctx context.Context) error {
	// The operator's own instances' terms first, briefly: their first
	// searches then use the right format. A failure does not stop serving.
	a.readOwnTerms(ctx)

	bg, stopBG := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(6)
	go func() {
		defer wg.Done()
		a.startupCheck(bg)
	}()
	go func() {
		defer wg.Done()
		a.reloadAPIKeys(bg)
	}()
	go func() {
		defer wg.Done()
		a.runShared(bg)
	}()
	go func() {
		defer wg.Done()
		a.pool.Run(bg)
	}()
	go func() {
		defer wg.Done()
		r := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
		a.source.Run(bg, a.cfg.Refresh, directory.Jitter(r.Float64, 0.1), func(l directory.List) { a.seedList(l, false) })
	}()
	go func() {
		defer wg.Done()
		a.flushLoop(bg)
	}()

	// Said before serving starts (the listener is bound already), so that
	// the line comes before any answer.
	if why := a.contactMissing(); why != "" {
		a.log.Warn(why)
	}
	a.log.Info("searxgate is serving", "addr", "http://"+a.Addr()+"/", "version", Version,
		"instances", a.servingWhat(), "data", filepath.Join(a.cfg.Data, "searxgate.db"))
	serveErr := make(chan error, 1)
	go func() { serveErr <- a.server.Serve(a.ln) }()

	var err error
	select {
	case <-ctx.Done():
	case err = <-serveErr:
		if err != nil {
			err = fmt.Errorf("serving: %w", err)
		}
	}
	a.log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), a.cfg.Shutdown)
	defer cancel()
	if e := a.server.ShutdownWithContext(sctx); e != nil && !errors.Is(e, context.DeadlineExceeded) {
		a.log.Warn("server shutdown", "err", e)
	}
	// The loops first (a directory refresh starts /config reads), then the
	// proxy's own background work, bounded by the grace period.
	stopBG()
	wg.Wait()
	if e := a.proxy.Shutdown(sctx); e != nil {
		a.log.Warn("some upstream searches were still running at shutdown", "err", e)
	}
	return errors.Join(err, a.Close())
}

// flushLoop writes what was learned every --flush and prunes the stored
// cache every pruneEvery, until ctx ends.
func (a *App) flushLoop(ctx context.Context) {
	flush, stopFlush := a.clock.NewTicker(a.cfg.Flush)
	defer stopFlush()
	prune, stopPrune := a.clock.NewTicker(pruneEvery)
	defer stopPrune()
	for {
		select {
		case <-ctx.Done():
			return
		case <-flush:
			if err := a.flush(); err != nil {
				a.log.Error("writing learned state failed", "err", err)
			}
		case now := <-prune:
			if n, err := a.proxy.Cache().Prune(now); err != nil {
				a.log.Error("pruning the cache failed", "err", err)
			} else if n > 0 {
				a.log.Debug("pruned the cache", "entries", n)
			}
		}
	}
}

// pruneEvery is how often the cache is pruned of answers too old even to
// be served stale.
const pruneEvery = 10 * time.Minute

// Close flushes what was learned and closes the store.
func (a *App) Close() error {
	ferr := a.flush()
	if ferr != nil {
		a.log.Error("final flush failed", "err", ferr)
	}
	var serr error
	if a.shared != nil {
		serr = a.shared.Close()
	}
	return errors.Join(ferr, serr, a.store.Close())
}

// flush writes what was learned to the store (persist.Flusher).
func (a *App) flush() error { return a.flusher.Flush() }

// requestError answers a request the server could not read, with the
// status that says why (fasthttp's own handler says 400 for a body over
// the limit).
func requestError(ctx *fasthttp.RequestCtx, err error) {
	switch connErrorKind(err) {
	case kindBodyTooLarge:
		ctx.Error("Request Entity Too Large", fasthttp.StatusRequestEntityTooLarge)
	case kindHeaderTooLarge:
		ctx.Error("Request Header Fields Too Large", fasthttp.StatusRequestHeaderFieldsTooLarge)
	case kindReadTimeout:
		ctx.Error("Request Timeout", fasthttp.StatusRequestTimeout)
	default:
		ctx.Error("Bad Request", fasthttp.StatusBadRequest)
	}
}
