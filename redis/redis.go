package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/searxgate/searxgate/internal/clock"
	"github.com/searxgate/searxgate/proxy"
)

// ErrDown is returned (wrapped) by an operation skipped because Redis is
// unreachable: the circuit of its own is open until a heartbeat answers.
var ErrDown = errors.New("redis: unreachable")

// Options configure a Shared; zero values take defaults.
type Options struct {
	// URL is redis://[user:pass@]host:port[/db], rediss://… (TLS) or
	// unix:///path/to/socket[?db=N]. Valkey speaks the same.
	URL string
	// Group names the egress group: replicas that leave through the same
	// address share one budget and one feed of refusals (default
	// "default"). Answers are shared by every group.
	Group string
	// Replica names this process among the others (default: host name,
	// pid and a random suffix).
	Replica string
	// Budget is the politeness budget of one public instance, shared by
	// the group (proxy.Config.Budget; default 10 per 20 s, 100 per 10 min).
	Budget []proxy.Window
	// OpTimeout bounds every operation a search waits on (default 10 ms);
	// Failures in a row (default 3) open the circuit: searches then stop
	// asking Redis until a heartbeat answers again.
	OpTimeout time.Duration
	Failures  int
	// Heartbeat is how often this replica says it is alive and, while
	// Redis is unreachable, how often it tries again (default 2 s).
	Heartbeat time.Duration
	// SeenFor is how long a replica counts as alive after its last
	// heartbeat (default 1 min): N, the divisor of the local budgets
	// while Redis is unreachable, counts the replicas seen within it.
	SeenFor time.Duration
	// StaleFor is how long past its expiry an answer stays in Redis, to
	// be served stale when nothing answers (default 24 h).
	StaleFor time.Duration
	// OnOpen is told of each circuit another replica of the group opened
	// (cmd passes pool.OpenUntil).
	OnOpen func(inst string, until time.Time, reason string)
	Logger *slog.Logger
	// Clock is the local clock (nil is the real one): the local fallback
	// budget counts with it, and it times the heartbeats and the waits
	// for another replica's search. The shared windows count with Redis's
	// own clock, so the replicas' clocks do not matter.
	Clock clock.Clock
}

func (o *Options) defaults() {
	if o.Group == "" {
		o.Group = "default"
	}
	if o.Replica == "" {
		host, _ := os.Hostname()
		var b [4]byte
		_, _ = rand.Read(b[:])
		o.Replica = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
	}
	if o.Budget == nil {
		o.Budget = []proxy.Window{{Max: 10, Per: 20 * time.Second}, {Max: 100, Per: 10 * time.Minute}}
	}
	var ws []proxy.Window
	for _, w := range o.Budget {
		if w.Max > 0 && w.Per > 0 {
			ws = append(ws, w)
		}
	}
	o.Budget = ws
	if o.OpTimeout <= 0 {
		o.OpTimeout = 10 * time.Millisecond
	}
	if o.Failures <= 0 {
		o.Failures = 3
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = 2 * time.Second
	}
	if o.SeenFor <= 0 {
		o.SeenFor = time.Minute
	}
	if o.StaleFor <= 0 {
		o.StaleFor = 24 * time.Hour
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.Clock = clock.Or(o.Clock)
}

// slowTimeout bounds what no search waits on: heartbeats, the queued
// writes, publishing, reading the secret.
const slowTimeout = 500 * time.Millisecond

// Shared is searxgate's state shared with the other replicas through
// Redis: it is the proxy's SharedBudget, SharedCache and RefusalFeed.
// Run its loops with Run; Close closes its connections.
type Shared struct {
	opt    Options
	fast   *goredis.Client // what searches wait on: OpTimeout, no retry
	slow   *goredis.Client // heartbeats, writes, pub/sub
	prefix string          // "searxgate:g:<group>:": budgets, refusals, replicas
	cache  string          // "searxgate:c:": answers and in-flight locks, for every group
	log    *slog.Logger

	up    atomic.Bool  // Redis answered the last heartbeat and searches may ask it
	opens atomic.Bool  // the circuits others opened are to be read (Run does it)
	fails atomic.Int32 // failures in a row of the searches' operations
	n     atomic.Int64 // replicas of the group seen within SeenFor (at least 1)
	seq   atomic.Uint64

	mu       sync.Mutex // guards since, lastErr, hist
	since    time.Time  // when up last changed
	lastErr  string
	hist     map[string][]take // this replica's own searches per instance, for the fallback and the replay
	local    atomic.Uint64     // takes decided by the local fallback
	writes   chan func(context.Context) error
	closed   chan struct{}
	closeOne sync.Once
}

// take is one search this replica made to an instance.
type take struct {
	at     time.Time // local clock
	member string    // its member in the shared windows
}

// New connects to Redis (lazily: an unreachable one is not an error, the
// replica starts on its local budgets and joins when it answers). A URL
// that cannot be read is an error.
func New(opt Options) (*Shared, error) {
	opt.defaults()
	ro, err := goredis.ParseURL(opt.URL)
	if err != nil {
		// Never the URL itself: it may hold a password.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("the URL cannot be read: %w", err)
	}
	// The client's own messages (a failed dial, every 100 ms while Redis
	// is down) go to the log at debug: Status and one warning say it.
	goredis.SetLogger(clientLog{opt.Logger})
	ro.Protocol = 2 // every Redis and Valkey speaks it
	ro.DisableIdentity = true
	ro.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	fast := *ro
	fast.MaxRetries = -1 // a retry would double the wait a search has
	fast.ContextTimeoutEnabled = true
	fast.DialTimeout = max(opt.OpTimeout, 50*time.Millisecond)
	fast.ReadTimeout, fast.WriteTimeout, fast.PoolTimeout = opt.OpTimeout, opt.OpTimeout, opt.OpTimeout
	fast.PoolSize = 64
	fast.MinIdleConns = 2
	slow := *ro
	slow.MaxRetries = -1
	slow.ContextTimeoutEnabled = true
	slow.DialTimeout, slow.ReadTimeout, slow.WriteTimeout = slowTimeout, slowTimeout, slowTimeout
	slow.PoolSize = 8
	s := &Shared{
		opt:    opt,
		fast:   goredis.NewClient(&fast),
		slow:   goredis.NewClient(&slow),
		prefix: "searxgate:g:" + opt.Group + ":",
		cache:  "searxgate:c:",
		log:    opt.Logger,
		hist:   map[string][]take{},
		writes: make(chan func(context.Context) error, 1024),
		closed: make(chan struct{}),
		since:  opt.Clock.Now(),
	}
	s.n.Store(1)
	return s, nil
}

// Connect runs one heartbeat now, so that a replica whose Redis answers
// starts shared; it returns the error when it does not (the replica then
// starts on its local budgets, and Run keeps trying).
func (s *Shared) Connect(ctx context.Context) error {
	return s.heartbeat(ctx)
}

// Close closes the connections. Run's loops end with their context.
func (s *Shared) Close() error {
	s.closeOne.Do(func() { close(s.closed) })
	return errors.Join(s.fast.Close(), s.slow.Close())
}

// Run runs the heartbeat, the queued writes and the refusal feed until ctx
// ends.
func (s *Shared) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); s.heartbeats(ctx) }()
	go func() { defer wg.Done(); s.writer(ctx) }()
	go func() { defer wg.Done(); s.subscriber(ctx) }()
	wg.Wait()
}

// Status is what /status and /metrics show of the shared state.
type Status = proxy.SharedState

// Status returns the shared state as this replica sees it.
func (s *Shared) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Status{Shared: s.up.Load(), Since: s.since, Group: s.opt.Group, Replica: s.opt.Replica,
		Replicas: int(s.n.Load()), LastError: s.lastErr, LocalTakes: s.local.Load()}
}

// do runs f against the searches' client within OpTimeout, unless Redis
// is known to be unreachable. A nil reply (goredis.Nil) is not a failure.
func (s *Shared) do(ctx context.Context, f func(ctx context.Context) error) error {
	if !s.up.Load() {
		return ErrDown
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opt.OpTimeout)
	defer cancel()
	err := f(ctx)
	if err == nil || errors.Is(err, goredis.Nil) {
		s.fails.Store(0)
		return err
	}
	if errors.Is(err, goredis.ErrPoolTimeout) {
		// Our own connections all busy (a burst): this search does
		// without Redis, but Redis itself did not fail.
		return err
	}
	if int(s.fails.Add(1)) >= s.opt.Failures {
		s.down(err)
	}
	return err
}

// down notes that Redis is unreachable, logging it once.
func (s *Shared) down(err error) {
	if !s.up.CompareAndSwap(true, false) {
		return
	}
	s.mu.Lock()
	s.since, s.lastErr = s.opt.Clock.Now(), err.Error()
	s.mu.Unlock()
	n := s.n.Load()
	s.log.Warn("redis is unreachable: this replica keeps to its share of each budget and answers from its own cache until it is back",
		"err", err, "replicas", n, "group", s.opt.Group)
}

// heartbeats says this replica is alive every Heartbeat, and notices when
// Redis goes and comes back.
func (s *Shared) heartbeats(ctx context.Context) {
	tick, stop := s.opt.Clock.NewTicker(s.opt.Heartbeat)
	defer stop()
	for {
		if s.up.Load() && s.opens.CompareAndSwap(true, false) {
			if err := s.loadOpens(ctx); err != nil {
				s.opens.Store(true) // next time
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-s.closed:
			return
		case <-tick:
			_ = s.heartbeat(ctx)
		}
	}
}

// heartbeatScript records a replica as seen at Redis's time and returns
// how many were seen within the last ARGV[2] ms.
var heartbeatScript = goredis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
return redis.call('ZCARD', KEYS[1])
`)

// heartbeat runs one heartbeat; when Redis answers again after being
// unreachable, this replica's own recent searches are written back into
// the shared windows (Redis may have restarted empty) before searches use
// them again.
func (s *Shared) heartbeat(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, slowTimeout)
	defer cancel()
	n, err := heartbeatScript.Run(ctx, s.slow, []string{s.prefix + "replicas"}, s.opt.Replica, s.opt.SeenFor.Milliseconds()).Int64()
	if err != nil {
		if s.up.Load() {
			s.down(err)
		} else {
			s.mu.Lock()
			s.lastErr = err.Error()
			s.mu.Unlock()
		}
		return err
	}
	s.n.Store(max(n, 1))
	if s.up.Load() {
		return nil
	}
	if err := s.replay(ctx); err != nil {
		s.mu.Lock()
		s.lastErr = err.Error()
		s.mu.Unlock()
		return err
	}
	s.fails.Store(0)
	s.mu.Lock()
	first := s.lastErr == ""
	s.since, s.lastErr = s.opt.Clock.Now(), ""
	s.up.Store(true)
	s.mu.Unlock()
	s.opens.Store(true)
	if first {
		s.log.Info("redis answers: budgets, refusals and answers are shared", "group", s.opt.Group, "replicas", n)
	} else {
		s.log.Info("redis is back: budgets, refusals and answers are shared again", "group", s.opt.Group, "replicas", n)
	}
	return nil
}

// Secret returns the secret the group's replicas key the answer cache
// with, making it on first use (SET NX), so that one search has one key on
// every replica. Whoever can read Redis can read it, as whoever can read
// searxgate.db can read the local one.
func (s *Shared) Secret(ctx context.Context) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, slowTimeout)
	defer cancel()
	fresh := make([]byte, 32)
	_, _ = rand.Read(fresh)
	key := s.cache + "secret"
	if err := s.slow.SetNX(ctx, key, fresh, 0).Err(); err != nil {
		return nil, err
	}
	v, err := s.slow.Get(ctx, key).Bytes()
	if err != nil {
		return nil, err
	}
	if len(v) < 16 {
		return nil, fmt.Errorf("redis: the cache secret at %s is too short", key)
	}
	return v, nil
}

// enqueue queues a write no search waits on; it is dropped when the queue
// is full or Redis unreachable.
func (s *Shared) enqueue(f func(context.Context) error) {
	if !s.up.Load() {
		return
	}
	select {
	case s.writes <- f:
	default:
	}
}

// writer runs the queued writes in order: an answer is written before the
// lock of its search is released.
func (s *Shared) writer(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.closed:
			return
		case f := <-s.writes:
			if !s.up.Load() {
				continue
			}
			wctx, cancel := context.WithTimeout(ctx, slowTimeout)
			if err := f(wctx); err != nil && !errors.Is(err, goredis.Nil) {
				s.log.Debug("a shared write failed", "err", err)
			}
			cancel()
		}
	}
}

// member names one search in the shared windows, unique in the group.
func (s *Shared) member() string {
	return s.opt.Replica + ":" + strconv.FormatUint(s.seq.Add(1), 36)
}

// clientLog passes the Redis client's messages to slog at debug. The
// client has one logger per process: the last Shared made sets it.
type clientLog struct{ l *slog.Logger }

func (c clientLog) Printf(ctx context.Context, format string, v ...any) {
	c.l.Log(ctx, slog.LevelDebug, "redis client: "+fmt.Sprintf(format, v...))
}
