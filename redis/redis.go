package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/searxgate/searxgate/internal/clock"
	"github.com/searxgate/searxgate/proxy"
)

// ErrDown is returned (wrapped) by an operation skipped because Redis is
// unreachable: the circuit of its own is open until heartbeats answer in
// time again.
var ErrDown = errors.New("redis: unreachable")

// ErrOOM and ErrAuth name the two failures an operator fixes in Redis
// itself rather than in the network: Redis refuses writes because it
// reached maxmemory (with a policy that evicts nothing), or refuses this
// replica's credentials (NOAUTH, WRONGPASS, NOPERM).
var (
	ErrOOM  = errors.New("redis: out of memory (maxmemory reached and nothing to evict)")
	ErrAuth = errors.New("redis: the credentials were refused")
)

// errLost is what a take gets when the epoch key is not the one this
// replica knows: Redis lost its memory (a restart, FLUSHALL, a failover,
// an eviction), and the shared windows are to be rebuilt first.
var errLost = errors.New("redis: the shared state was lost (the epoch key changed)")

// named wraps err with what an operator should read in it: ErrOOM,
// ErrAuth, or ErrDown for everything else.
func named(err error) error {
	if err == nil || errors.Is(err, ErrDown) || errors.Is(err, ErrOOM) || errors.Is(err, ErrAuth) || errors.Is(err, errLost) {
		return err
	}
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "OOM "):
		return fmt.Errorf("%w: %w", ErrOOM, err)
	case strings.HasPrefix(msg, "NOAUTH "), strings.HasPrefix(msg, "WRONGPASS "), strings.HasPrefix(msg, "NOPERM "):
		return fmt.Errorf("%w: %w", ErrAuth, err)
	}
	return fmt.Errorf("%w: %w", ErrDown, err)
}

// Options configure a Shared; zero values take defaults.
type Options struct {
	// URL is redis://[user:pass@]host:port[/db], rediss://… (TLS) or
	// unix:///path/to/socket[?db=N]. Valkey speaks the same.
	URL string
	// Secret is the operator's secret, the same on every replica (cmd's
	// --secret). The messages of the refusal feed, the openings kept in
	// Redis and the clear header of every kept answer are authenticated
	// with a key derived from it; it is never written to Redis. Required.
	Secret []byte
	// Group names the egress group: replicas that leave through the same
	// address share one budget and one feed of refusals (default
	// "default"). Answers are shared by every group.
	Group string
	// Replica names this process among the others (default: host name,
	// pid and a random suffix).
	Replica string
	// Budget is the politeness budget of one public instance, shared by
	// the group (proxy.Config.Budget; default 10 per 20 s, 100 per 10 min).
	// The shared windows keep one search of each window as a margin (see
	// limit).
	Budget []proxy.Window
	// OpTimeout bounds every operation a search waits on (default 50 ms).
	// A search that waited it once opens the circuit at once; other
	// failures (a refused connection, costing no wait) open it after
	// Failures in a row (default 3). Searches then stop asking Redis
	// until Recover heartbeats in a row (default 3) answered within
	// OpTimeout.
	OpTimeout time.Duration
	Failures  int
	Recover   int
	// Heartbeat is how often this replica says it is alive (default 2 s);
	// while Redis is unreachable it tries four times as often.
	Heartbeat time.Duration
	// SeenFor is how long a replica counts as alive after its last
	// heartbeat (default three heartbeats): N, the divisor of the local
	// budgets while Redis is unreachable or rebuilt, counts the replicas
	// seen within it. A replica that stops cleanly removes itself at once.
	SeenFor time.Duration
	// MaxHeard caps an opening heard from another replica (default 10
	// min, a third of the pool's 30 min maximum): past it this replica's
	// own trial decides. See refusals.go.
	MaxHeard time.Duration
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

// ErrNoSecret is New's error without Options.Secret.
var ErrNoSecret = errors.New("redis: a secret shared by the replicas is required")

// minSecret is the shortest secret New takes.
const minSecret = 16

// DefaultOpTimeout is Options.OpTimeout's default (cmd's --redis-timeout).
const DefaultOpTimeout = 50 * time.Millisecond

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
		o.Budget = proxy.DefaultBudget()
	}
	var ws []proxy.Window
	for _, w := range o.Budget {
		if w.Max > 0 && w.Per > 0 {
			ws = append(ws, w)
		}
	}
	o.Budget = ws
	if o.OpTimeout <= 0 {
		o.OpTimeout = DefaultOpTimeout
	}
	if o.Failures <= 0 {
		o.Failures = 3
	}
	if o.Recover <= 0 {
		o.Recover = 3
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = 2 * time.Second
	}
	if o.SeenFor <= 0 {
		o.SeenFor = 3 * o.Heartbeat
	}
	if o.MaxHeard <= 0 {
		o.MaxHeard = 10 * time.Minute
	}
	if o.StaleFor <= 0 {
		o.StaleFor = 24 * time.Hour
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.Clock = clock.Or(o.Clock)
}

// hostileEvery is how often a Redis that answers past the bounds (see
// guard.go) is said in the log.
const hostileEvery = time.Hour

// slowTimeout bounds what no search waits on: heartbeats, the queued
// writes, publishing.
const slowTimeout = 500 * time.Millisecond

// Shared is searxgate's state shared with the other replicas through
// Redis: it is the proxy's SharedBudget, cache.Shared and RefusalFeed.
// Run its loops with Run; Close closes its connections.
type Shared struct {
	opt    Options
	fast   *goredis.Client // what searches wait on: OpTimeout, no retry
	slow   *goredis.Client // heartbeats, writes, pub/sub
	prefix string          // "searxgate:g:<group>:": budgets, refusals, replicas, epoch
	cache  string          // "searxgate:c:": answers and in-flight locks, for every group
	mac    []byte          // the key messages, openings and answers' headers are authenticated with
	log    *slog.Logger

	up    atomic.Bool  // Redis answered and searches may ask it
	opens atomic.Bool  // the circuits others opened are to be read again (the heartbeat loop does it)
	lost  atomic.Bool  // the epoch changed: the shared windows are rebuilt before searches trust them
	fails atomic.Int32 // failures in a row of the searches' operations
	n     atomic.Int64 // replicas of the group seen within SeenFor (at least 1)
	seq   atomic.Uint64
	// epoch is the value of the epoch key this replica knows ("" before
	// Redis first answered); rebuild is until when (local clock, Unix ns)
	// every take also keeps to the local share: the other replicas write
	// back what they remember within a heartbeat or two.
	epoch   atomic.Pointer[string]
	rebuild atomic.Int64
	// After a loss (the epoch changed), the replicas seen are counted
	// afresh (Redis forgot them too): while afterLoss, this replica
	// counts at least floor of them, as many as it saw before, so that
	// its share does not grow to the group's whole budget while the
	// others have not beaten yet; and the rebuild ends only once floor
	// replicas wrote back what they remember (rebuiltKey), or the
	// longest window went by.
	floor     atomic.Int64
	afterLoss atomic.Bool
	// pause is until when (local clock, Unix ns) this replica takes
	// nothing after a loss while not every replica wrote back: a share
	// of its own would not know what the others had sent, and no
	// window is trusted yet. Past it (a replica died meanwhile), the
	// local share and the windows as rebuilt decide together.
	pause atomic.Int64
	oom   atomic.Bool // a queued write met ErrOOM (logged once until one succeeds)
	// hostile is when (local clock, Unix ns) a reply past the bounds
	// was last said in the log (once every hostileEvery); hostileHeld
	// counts those not said since.
	hostile     atomic.Int64
	hostileHeld atomic.Int64
	kick        chan struct{}

	// good counts the heartbeats in a row that answered within OpTimeout
	// while searches do not ask Redis.
	good atomic.Int32

	mu       sync.Mutex // guards since, lastErr, hist, opened
	since    time.Time  // when up last changed
	lastErr  string
	hist     map[string][]take  // this replica's own searches per instance, for the fallback and the replay
	opened   map[string]opening // the circuits this replica opened itself, while they are open: written back after an outage or a loss
	local    atomic.Uint64      // takes decided by the local fallback
	writes   chan func(context.Context) error
	closed   chan struct{}
	closeOne sync.Once
}

// take is one search this replica made to an instance.
type take struct {
	at     time.Time // local clock: when it was taken, then when it was sent (Restamp)
	member string    // its member in the shared windows
}

// opening is one circuit this replica opened: until when (local clock),
// and why.
type opening struct {
	until  time.Time
	reason string
}

// New connects to Redis (lazily: an unreachable one is not an error, the
// replica starts on its local budgets and joins when it answers). A URL
// that cannot be read, or a missing secret, is an error.
func New(opt Options) (*Shared, error) {
	opt.defaults()
	if len(opt.Secret) < minSecret {
		return nil, fmt.Errorf("%w (at least %d bytes)", ErrNoSecret, minSecret)
	}
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
	// Every reply is read through the guard (guard.go).
	fast.Dialer = guardDial(goredis.NewDialer(&fast))
	slow.Dialer = guardDial(goredis.NewDialer(&slow))
	s := &Shared{
		opt:    opt,
		fast:   goredis.NewClient(&fast),
		slow:   goredis.NewClient(&slow),
		prefix: "searxgate:g:" + opt.Group + ":",
		cache:  "searxgate:c:",
		mac:    macKey(opt.Secret),
		log:    opt.Logger,
		hist:   map[string][]take{},
		opened: map[string]opening{},
		writes: make(chan func(context.Context) error, 1024),
		closed: make(chan struct{}),
		kick:   make(chan struct{}, 1),
		since:  opt.Clock.Now(),
	}
	s.n.Store(1)
	s.epoch.Store(new(string))
	return s, nil
}

// Connect runs one heartbeat now, so that a replica whose Redis answers
// starts shared; it returns the error when it does not (the replica then
// starts on its local budgets, and Run keeps trying).
func (s *Shared) Connect(ctx context.Context) error {
	return s.heartbeat(ctx)
}

// Close removes this replica from the replicas seen (so that the others'
// N drops at once), then closes the connections. Run's loops end with
// their context.
func (s *Shared) Close() error {
	first := false
	s.closeOne.Do(func() { close(s.closed); first = true })
	if first && s.up.Load() {
		ctx, cancel := context.WithTimeout(context.Background(), slowTimeout)
		_ = s.slow.ZRem(ctx, s.prefix+"replicas", s.opt.Replica).Err()
		cancel()
	}
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
// A timeout opens the circuit at once: a Redis that was slow once is
// likely slow for the next search too, and each search should pay for it
// at most once.
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
	if errors.Is(err, errLost) {
		return err
	}
	err = named(err)
	if timedOut(err) || errors.Is(err, ErrReply) || int(s.fails.Add(1)) >= s.opt.Failures {
		s.down(err)
	}
	return err
}

// timedOut reports whether err is an operation that ran out of time.
func timedOut(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// down notes that Redis is unreachable, logging it once.
func (s *Shared) down(err error) {
	if !s.up.CompareAndSwap(true, false) {
		return
	}
	s.mu.Lock()
	s.since, s.lastErr = s.opt.Clock.Now(), err.Error()
	s.mu.Unlock()
	s.poke() // the heartbeat loop probes at its quicker pace from now
	n := s.n.Load()
	msg := "redis is unreachable: this replica keeps to its share of each budget and answers from its own cache until it is back"
	switch {
	case errors.Is(err, ErrOOM):
		msg = "redis is out of memory: this replica keeps to its share of each budget until Redis can write again (raise maxmemory, or use --maxmemory-policy volatile-lru)"
	case errors.Is(err, ErrAuth):
		msg = "redis refused this replica's credentials: it keeps to its share of each budget (check the user and password in --redis)"
	case timedOut(err):
		msg = "redis did not answer within the searches' timeout: this replica keeps to its share of each budget until it answers in time again (see --redis-timeout)"
	case errors.Is(err, ErrReply):
		// A server that keeps answering so would bring the replica
		// down and back at every Recover heartbeats: said once an hour.
		now, last := s.opt.Clock.Now().UnixNano(), s.hostile.Load()
		if last != 0 && now-last < int64(hostileEvery) || !s.hostile.CompareAndSwap(last, now) {
			s.hostileHeld.Add(1)
			return
		}
		held := s.hostileHeld.Swap(0)
		s.log.Warn("redis answered past searxgate's bounds (a hostile or broken server): the connection was dropped, and this replica keeps to its share of each budget until Redis answers properly",
			"err", err, "replicas", n, "group", s.opt.Group, "held_back", held)
		return
	}
	s.log.Warn(msg, "err", err, "replicas", n, "group", s.opt.Group)
}

// poke makes the heartbeat loop run a heartbeat now.
func (s *Shared) poke() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// heartbeats says this replica is alive every Heartbeat, four times as
// often while searches do not ask Redis, and at once when a search saw
// the epoch change.
func (s *Shared) heartbeats(ctx context.Context) {
	for {
		if s.up.Load() && s.opens.CompareAndSwap(true, false) {
			if err := s.loadOpens(ctx); err != nil {
				s.opens.Store(true) // next time
			}
		}
		every := s.opt.Heartbeat
		if !s.up.Load() {
			every /= 4
		}
		timer, stop := s.opt.Clock.NewTimer(every)
		select {
		case <-ctx.Done():
			stop()
			return
		case <-s.closed:
			stop()
			return
		case <-s.kick:
			stop()
		case <-timer:
		}
		_ = s.heartbeat(ctx)
	}
}

// heartbeatScript records a replica as seen at Redis's time, reads the
// epoch key (making it ARGV[3] when it is missing) and returns how many
// replicas were seen within the last ARGV[2] ms, and the epoch.
var heartbeatScript = goredis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
local e = redis.call('GET', KEYS[2])
if not e then
  redis.call('SET', KEYS[2], ARGV[3])
  e = ARGV[3]
end
return {redis.call('ZCARD', KEYS[1]), e}
`)

// heartbeat runs one heartbeat. It notices when Redis lost its memory
// (the epoch key changed or vanished), and it brings searches back to
// Redis after an outage only once Recover heartbeats in a row answered
// within OpTimeout. Either way this replica first writes back what it
// knows (restore), and for a while keeps to its local share as well.
func (s *Shared) heartbeat(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, slowTimeout)
	defer cancel()
	n, epoch, rtt, err := s.beat(ctx)
	if err != nil {
		err = named(err)
		s.good.Store(0)
		if s.up.Load() {
			s.down(err)
		} else {
			s.note(err.Error())
		}
		return err
	}
	now := s.opt.Clock.Now()
	if known := *s.epoch.Load(); known != "" && known != epoch {
		s.lost.Store(true)
	}
	if s.lost.Load() {
		if s.afterLoss.CompareAndSwap(false, true) {
			// Noticed just now (here, or by a take): Redis's count of
			// the replicas starts again from those that beat since.
			s.floor.Store(s.n.Load())
			s.pause.Store(now.Add(2 * s.opt.SeenFor).UnixNano())
		}
		// Until every replica wrote back, and never longer than the
		// longest window, after which nothing forgotten counts.
		s.rebuild.Store(now.Add(max(s.longest(), s.opt.SeenFor)).UnixNano())
	}
	if s.afterLoss.Load() {
		n = max(n, s.floor.Load())
	}
	s.n.Store(max(n, 1))
	s.epoch.Store(&epoch)
	up := s.up.Load()
	if up {
		s.good.Store(0) // counted afresh after the next failure
		if !s.lost.Load() {
			s.rebuilt(ctx, epoch, now)
			return nil
		}
	} else {
		if rtt > s.opt.OpTimeout {
			s.good.Store(0)
			s.note(fmt.Sprintf("%v: redis answers in %v, slower than the searches' timeout (%v)", ErrDown, rtt.Round(time.Millisecond), s.opt.OpTimeout))
			return nil
		}
		if int(s.good.Add(1)) < s.need() {
			return nil
		}
	}
	lost := s.lost.Load()
	if err := s.restore(ctx, epoch, lost); err != nil {
		err = named(err)
		s.note(err.Error())
		return err
	}
	s.lost.Store(false)
	switch {
	case lost:
		// Every replica writes back what it remembers once it notices
		// the epoch: until as many as were seen before did (rebuilt),
		// the local share counts too.
		s.rebuilt(ctx, epoch, now)
	case up || s.hadFailed():
		// The other replicas write back what they remember within a
		// heartbeat or two (they come back themselves): until then the
		// local share counts too.
		s.rebuild.Store(max(s.rebuild.Load(), now.Add(2*s.opt.Heartbeat).UnixNano()))
	}
	if lost {
		s.log.Warn("redis lost the shared state (its epoch key changed): this replica wrote back its recent searches and open circuits, and keeps to its share of each budget while the others do",
			"group", s.opt.Group, "replicas", n)
	}
	if !up {
		s.cameBack(n)
	}
	return nil
}

// beat writes this replica's heartbeat and reads the group's: the
// replicas seen, the epoch, and how long Redis took.
func (s *Shared) beat(ctx context.Context) (n int64, epoch string, rtt time.Duration, err error) {
	var b [12]byte
	_, _ = rand.Read(b[:])
	candidate := hex.EncodeToString(b[:])
	start := s.opt.Clock.Now()
	res, err := heartbeatScript.Run(ctx, s.slow, []string{s.prefix + "replicas", s.epochKey()},
		s.opt.Replica, s.opt.SeenFor.Milliseconds(), candidate).Slice()
	rtt = s.opt.Clock.Now().Sub(start)
	if err != nil {
		return 0, "", rtt, err
	}
	if len(res) != 2 {
		return 0, "", rtt, errBadReply
	}
	n, _ = res[0].(int64)
	epoch, _ = res[1].(string)
	if epoch == "" {
		return 0, "", rtt, errBadReply
	}
	return n, epoch, rtt, nil
}

// cameBack shares again after an outage (or for the first time), and
// says so once.
func (s *Shared) cameBack(n int64) {
	s.fails.Store(0)
	s.good.Store(0)
	s.mu.Lock()
	first := s.lastErr == ""
	s.since, s.lastErr = s.opt.Clock.Now(), ""
	s.up.Store(true)
	s.mu.Unlock()
	if first {
		s.log.Info("redis answers: budgets, refusals and answers are shared", "group", s.opt.Group, "replicas", n)
	} else {
		s.log.Info("redis is back: budgets, refusals and answers are shared again", "group", s.opt.Group, "replicas", n)
	}
}

// need is how many heartbeats in a row must answer in time before
// searches ask Redis: one when it never failed, Recover after a failure.
func (s *Shared) need() int {
	if s.hadFailed() {
		return s.opt.Recover
	}
	return 1
}

// hadFailed reports whether Redis failed since this replica last shared
// (or since it started).
func (s *Shared) hadFailed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr != ""
}

// note keeps the last error for Status.
func (s *Shared) note(msg string) {
	s.mu.Lock()
	s.lastErr = msg
	s.mu.Unlock()
}

// restore writes back what this replica knows into Redis: its recent
// searches into the shared windows, the circuits it opened that are still
// open; then reads the circuits the others opened. Run when searches come
// back to Redis and when Redis lost its memory.
func (s *Shared) restore(ctx context.Context, epoch string, lost bool) error {
	if err := s.replay(ctx); err != nil {
		return err
	}
	if lost {
		// Said once its searches are back: the others count it.
		key := s.rebuiltKey(epoch)
		pipe := s.slow.Pipeline()
		pipe.SAdd(ctx, key, s.opt.Replica)
		pipe.PExpire(ctx, key, max(s.longest(), s.opt.SeenFor)+s.opt.SeenFor)
		if _, err := pipe.Exec(ctx); err != nil {
			return err
		}
	}
	if err := s.republish(ctx); err != nil {
		return err
	}
	// Read by the heartbeat loop, right after this heartbeat: OnOpen
	// may need what its owner builds after Connect (cmd's pool).
	s.opens.Store(true)
	return nil
}

// rebuilt ends the rebuild after a loss once as many replicas as were
// seen before it wrote back what they remember; a Redis that does not
// say keeps it going, up to the longest window.
func (s *Shared) rebuilt(ctx context.Context, epoch string, now time.Time) {
	if !s.afterLoss.Load() {
		return
	}
	if !s.rebuilding(now) {
		s.afterLoss.Store(false) // the longest window went by
		return
	}
	n, err := s.slow.SCard(ctx, s.rebuiltKey(epoch)).Result()
	if err == nil && n >= s.floor.Load() {
		s.afterLoss.Store(false)
		s.pause.Store(0)
		s.rebuild.Store(0)
	}
}

// paused reports whether takes wait for the other replicas to write back
// after a loss (see Shared.pause); until is when to ask again.
func (s *Shared) paused(now time.Time) (bool, time.Time) {
	if s.lost.Load() || (s.afterLoss.Load() && now.UnixNano() < s.pause.Load()) {
		return true, now.Add(max(s.opt.Heartbeat/2, 10*time.Millisecond))
	}
	return false, now
}

// rebuiltKey is the set of the replicas that wrote back what they
// remember after Redis lost the state of epoch.
func (s *Shared) rebuiltKey(epoch string) string { return s.prefix + "rebuilt:" + epoch }

// rebuilding reports whether takes keep to the local share as well, the
// shared windows being rebuilt.
func (s *Shared) rebuilding(now time.Time) bool {
	return s.lost.Load() || now.UnixNano() < s.rebuild.Load()
}

func (s *Shared) epochKey() string { return s.prefix + "epoch" }

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
			s.wrote(f(wctx))
			cancel()
		}
	}
}

// wrote notes how a queued write ended: Redis out of memory is said once
// (until a write succeeds again), other failures at debug.
func (s *Shared) wrote(err error) {
	switch {
	case err == nil || errors.Is(err, goredis.Nil):
		s.oom.Store(false)
	case errors.Is(named(err), ErrOOM):
		s.note(named(err).Error())
		if s.oom.CompareAndSwap(false, true) {
			s.log.Warn("redis is out of memory: answers and open circuits are not kept there until it can write again (raise maxmemory, or use --maxmemory-policy volatile-lru)",
				"group", s.opt.Group)
		}
	default:
		s.log.Debug("a shared write failed", "err", named(err))
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
