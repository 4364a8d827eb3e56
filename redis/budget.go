package redis

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/searxgate/searxgate/proxy"
)

// takeScript takes one search of an instance from every window of the
// group's budget at once, or none. KEYS[1] is the epoch key, KEYS[2] the
// replicas' heartbeats, then the windows' sorted sets (one per window
// and instance: member = one search, score = its time in µs); ARGV[1] is
// the new search's member, ARGV[2] the epoch this replica knows, ARGV[3]
// how long a replica counts as seen (ms), then the limit and Per (ms)
// per window. Time is Redis's own (TIME), so the replicas' clocks do not
// matter. A window allows one more search when fewer than its limit of
// its searches are younger than Per, as SearXNG's limiter counts (and
// polite.Politeness). It returns {1, now, now, n} when taken, {0, free,
// now, n} when not (free is when the last window to free allows one, in
// µs of Redis's clock), and {-1, 0, now, n} when the epoch is not the one
// the replica knows: Redis lost its memory, and nothing is taken. n is
// the replicas seen, so that a replica's share is of those there now,
// not of those it counted at its last heartbeat.
var takeScript = goredis.NewScript(`
if redis.replicate_commands then pcall(redis.replicate_commands) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local seen = redis.call('ZCOUNT', KEYS[2], math.floor(now / 1000) - tonumber(ARGV[3]), '+inf')
if redis.call('GET', KEYS[1]) ~= ARGV[2] then return {-1, 0, now, seen} end
local free = 0
for i = 3, #KEYS do
  local key = KEYS[i]
  local max = tonumber(ARGV[2 * i - 2])
  local per = tonumber(ARGV[2 * i - 1]) * 1000
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - per)
  local n = redis.call('ZCARD', key)
  if n >= max then
    local e = redis.call('ZRANGE', key, n - max, n - max, 'WITHSCORES')
    local f = tonumber(e[2]) + per
    if f > free then free = f end
  end
end
if free > now then return {0, free, now, seen} end
for i = 3, #KEYS do
  redis.call('ZADD', KEYS[i], now, ARGV[1])
  redis.call('PEXPIRE', KEYS[i], tonumber(ARGV[2 * i - 1]) + 1000)
end
return {1, now, now, seen}
`)

// restampScript moves one search to Redis's now in every window that
// still holds it (ZADD XX: a window rebuilt without it is left alone):
// KEYS are the windows, ARGV[1] the member.
var restampScript = goredis.NewScript(`
if redis.replicate_commands then pcall(redis.replicate_commands) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, 'XX', now, ARGV[1])
end
return 1
`)

// limit is how many searches the group takes from window w: one fewer
// than its Max (but at least one). The search kept as a margin is for
// what the windows cannot see exactly: a search whose move to its send
// time (Restamp) was lost with a slow Redis, the moments between Redis's
// clock and the instance's, a window straddling an outage.
func limit(w proxy.Window) int { return max(w.Max-1, 1) }

// replayScript writes searches back into the windows (after Redis was
// unreachable, or restarted empty): ARGV[1] is the number of windows,
// then Per (ms) per window, then pairs of age (µs before Redis's now) and
// member. A member already there only moves by the clocks' drift.
var replayScript = goredis.NewScript(`
if redis.replicate_commands then pcall(redis.replicate_commands) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local nw = tonumber(ARGV[1])
for i = 1, nw do
  local per = tonumber(ARGV[1 + i]) * 1000
  local key = KEYS[i]
  for j = 2 + nw, #ARGV, 2 do
    local age = tonumber(ARGV[j])
    if age < per then redis.call('ZADD', key, now - age, ARGV[j + 1]) end
  end
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - per)
  redis.call('PEXPIRE', key, tonumber(ARGV[1 + i]) + 1000)
end
return 1
`)

// windowKeys are the sorted sets of inst's windows.
func (s *Shared) windowKeys(inst string) []string {
	keys := make([]string, len(s.opt.Budget))
	for i, w := range s.opt.Budget {
		keys[i] = s.prefix + "w:" + strconv.FormatInt(w.Per.Milliseconds(), 10) + ":" + inst
	}
	return keys
}

// Take takes one search of the public instance inst from the group's
// budget (see proxy.SharedBudget). While Redis is unreachable it decides
// alone, on a budget of 1/N of the group's, N being the replicas seen
// within SeenFor when Redis last answered; while the shared windows are
// rebuilt (after an outage, or once Redis lost its memory) a search must
// fit both that share and the shared windows.
func (s *Shared) Take(ctx context.Context, inst string, now time.Time) (bool, time.Time) {
	if len(s.opt.Budget) == 0 {
		return true, now
	}
	member := s.member()
	if !s.up.Load() {
		s.local.Add(1)
		return s.takeLocal(inst, now, member)
	}
	if wait, until := s.paused(now); wait {
		// Redis forgot, and not every replica wrote back yet: what the
		// others sent is known to nobody, so nothing is sent (a
		// heartbeat or two; see Shared.pause).
		s.local.Add(1)
		return false, until
	}
	rebuilding := s.rebuilding(now)
	if rebuilding {
		// The local share first (it records the search), then the
		// shared windows as rebuilt so far; a refusal there takes the
		// search back from the share.
		if ok, until := s.takeLocal(inst, now, member); !ok {
			s.local.Add(1)
			return false, until
		}
	}
	ok, until, err := s.takeShared(ctx, inst, now, member)
	switch {
	case err != nil:
		s.local.Add(1)
		if errors.Is(err, errLost) {
			s.lost.Store(true)
			s.poke() // the heartbeat loop rebuilds
			if rebuilding {
				s.untake(inst, member)
			}
			_, until := s.paused(now)
			return false, until
		}
		if rebuilding {
			return true, now // the share allowed it, and recorded it
		}
		return s.takeLocal(inst, now, member)
	case !ok && rebuilding:
		s.untake(inst, member)
	case ok && !rebuilding:
		s.record(inst, now, member)
	}
	return ok, until
}

// takeShared runs the window script.
func (s *Shared) takeShared(ctx context.Context, inst string, now time.Time, member string) (bool, time.Time, error) {
	args := make([]any, 0, 3+2*len(s.opt.Budget))
	args = append(args, member, *s.epoch.Load(), s.opt.SeenFor.Milliseconds())
	for _, w := range s.opt.Budget {
		args = append(args, limit(w), w.Per.Milliseconds())
	}
	keys := append([]string{s.epochKey(), s.prefix + "replicas"}, s.windowKeys(inst)...)
	var res []int64
	err := s.do(ctx, func(ctx context.Context) error {
		var err error
		res, err = takeScript.Run(ctx, s.fast, keys, args...).Int64Slice()
		if err == nil && len(res) == 4 && res[0] == -1 {
			err = errLost
		}
		return err
	})
	if err != nil {
		return false, time.Time{}, err
	}
	if len(res) != 4 {
		return false, time.Time{}, errBadReply
	}
	// More replicas than the last heartbeat counted: the share is of
	// them from now (the heartbeat alone lowers it, as they leave).
	s.atLeast(res[3])
	if res[0] == 1 {
		return true, now, nil
	}
	// Redis's "free" as a span from its now, on the local clock; never
	// further than the longest window (whoever wrote a search into the
	// future holds no instance longer than that).
	free := time.Duration(res[1]-res[2]) * time.Microsecond
	return false, now.Add(min(free, s.longest())), nil
}

// atLeast raises the count of replicas seen to n, if it is lower.
func (s *Shared) atLeast(n int64) {
	for {
		old := s.n.Load()
		if n <= old || s.n.CompareAndSwap(old, n) {
			return
		}
	}
}

// longest is the longest window's span.
func (s *Shared) longest() time.Duration {
	var d time.Duration
	for _, w := range s.opt.Budget {
		d = max(d, w.Per)
	}
	return d
}

// Restamp moves one search of inst this replica took at taken to now,
// when it is sent (see proxy.SharedRestamper): in its own history at
// once, in the shared windows through the queued writes (Redis's time
// then is a little after the send, which only keeps the search counted a
// little longer).
func (s *Shared) Restamp(inst string, taken, now time.Time) {
	if !now.After(taken) {
		return
	}
	s.mu.Lock()
	h := s.hist[inst]
	member := ""
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].at.Equal(taken) {
			member = h[i].member
			// now is after every time in h: it goes last.
			h = append(h[:i], h[i+1:]...)
			h = append(h, take{at: now, member: member})
			s.hist[inst] = h
			break
		}
	}
	s.mu.Unlock()
	if member == "" {
		return
	}
	keys := s.windowKeys(inst)
	s.enqueue(func(ctx context.Context) error { return restampScript.Run(ctx, s.slow, keys, member).Err() })
}

type replyError string

func (e replyError) Error() string { return string(e) }

const errBadReply = replyError("redis: unexpected reply from the window script")

// share is this replica's part of window w among n replicas: limit(w)/n
// searches per Per, or, when that is less than one, one search per
// Per·n/limit(w).
func share(w proxy.Window, n int) (max int, span time.Duration) {
	l := limit(w)
	if n <= 1 {
		return l, w.Per
	}
	if l >= n {
		return l / n, w.Per
	}
	return 1, time.Duration((int64(w.Per)*int64(n) + int64(l) - 1) / int64(l))
}

// takeLocal is Take while Redis is unreachable: this replica's own
// searches (those it made while shared too) against its share.
func (s *Shared) takeLocal(inst string, now time.Time, member string) (bool, time.Time) {
	n := int(s.n.Load())
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.hist[inst]
	var until time.Time
	for _, w := range s.opt.Budget {
		most, span := share(w, n)
		// h is oldest first: the searches younger than span are a suffix.
		i := sort.Search(len(h), func(i int) bool { return now.Sub(h[i].at) < span })
		if len(h)-i >= most {
			if f := h[len(h)-most].at.Add(span); f.After(until) {
				until = f
			}
		}
	}
	if !until.IsZero() {
		return false, until
	}
	s.recordLocked(inst, now, member, n)
	return true, now
}

// untake takes back the search member from this replica's history (the
// shared windows refused it after the local share allowed it).
func (s *Shared) untake(inst, member string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.hist[inst]
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].member == member {
			s.hist[inst] = append(h[:i], h[i+1:]...)
			return
		}
	}
}

// record remembers one search this replica made, for the fallback and
// the replay.
func (s *Shared) record(inst string, now time.Time, member string) {
	n := int(s.n.Load())
	s.mu.Lock()
	s.recordLocked(inst, now, member, n)
	s.mu.Unlock()
}

func (s *Shared) recordLocked(inst string, now time.Time, member string, n int) {
	h := s.hist[inst]
	keep := time.Duration(0)
	for _, w := range s.opt.Budget {
		_, span := share(w, n)
		keep = max(keep, span, w.Per)
	}
	i := 0
	for i < len(h) && now.Sub(h[i].at) >= keep {
		i++
	}
	h = append(h[i:], take{at: now, member: member})
	s.hist[inst] = h
}

// replay writes this replica's own recent searches back into the shared
// windows: what it searched while Redis was unreachable counts against
// the group as soon as it is back, and a Redis that restarted empty gets
// back what every replica remembers.
func (s *Shared) replay(ctx context.Context) error {
	now := s.opt.Clock.Now()
	type one struct {
		inst  string
		takes []take
	}
	s.mu.Lock()
	all := make([]one, 0, len(s.hist))
	for inst, h := range s.hist {
		all = append(all, one{inst, append([]take(nil), h...)})
	}
	s.mu.Unlock()
	if len(all) == 0 || len(s.opt.Budget) == 0 {
		return nil
	}
	pipe := s.slow.Pipeline()
	for _, o := range all {
		args := []any{len(s.opt.Budget)}
		for _, w := range s.opt.Budget {
			args = append(args, w.Per.Milliseconds())
		}
		for _, t := range o.takes {
			args = append(args, now.Sub(t.at).Microseconds(), t.member)
		}
		replayScript.Eval(ctx, pipe, s.windowKeys(o.inst), args...)
	}
	_, err := pipe.Exec(ctx)
	return err
}

// Forget drops what this replica remembers of inst's searches (it left
// the pool); the shared windows expire by themselves.
func (s *Shared) Forget(inst string) {
	s.mu.Lock()
	delete(s.hist, inst)
	delete(s.opened, inst)
	s.mu.Unlock()
}

// Trial claims the trial search of a half-open instance for this replica
// until then (see proxy.SharedTrials): a key set if absent. Without
// Redis, every replica takes its own. A trial that closes the circuit is
// not told to the others: each takes its own trial later, one at a time.
func (s *Shared) Trial(ctx context.Context, inst string, until, now time.Time) (bool, time.Time) {
	ttl := until.Sub(now)
	if ttl <= 0 {
		return true, now
	}
	var set bool
	var left time.Duration
	err := s.do(ctx, func(ctx context.Context) error {
		var err error
		set, err = s.fast.SetNX(ctx, s.prefix+"trial:"+inst, s.opt.Replica, ttl).Result()
		if err != nil || set {
			return err
		}
		left, err = s.fast.PTTL(ctx, s.prefix+"trial:"+inst).Result()
		return err
	})
	if err != nil || set {
		return true, now
	}
	if left <= 0 { // gone meanwhile: a moment, then try again
		left = 10 * time.Millisecond
	}
	// No claim lasts longer than this replica's own would: whoever set
	// one with a longer TTL holds the instance no longer.
	left = min(left, ttl)
	return false, now.Add(left)
}
