package redis

import (
	"context"
	"sort"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/searxgate/searxgate/proxy"
)

// takeScript takes one search of an instance from every window of the
// group's budget at once, or none. KEYS are the windows' sorted sets (one
// per window and instance: member = one search, score = its time in µs);
// ARGV[1] is the new search's member, then Max and Per (ms) per window.
// Time is Redis's own (TIME), so the replicas' clocks do not matter. A
// window allows one more search when fewer than Max of its searches are
// younger than Per, as SearXNG's limiter counts (and proxy.Politeness).
// It returns {1, now, now} when taken, else {0, free, now}: free is when
// the last window to free allows one, in µs of Redis's clock.
var takeScript = goredis.NewScript(`
if redis.replicate_commands then pcall(redis.replicate_commands) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local free = 0
for i, key in ipairs(KEYS) do
  local max = tonumber(ARGV[2 * i])
  local per = tonumber(ARGV[2 * i + 1]) * 1000
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - per)
  local n = redis.call('ZCARD', key)
  if n >= max then
    local e = redis.call('ZRANGE', key, n - max, n - max, 'WITHSCORES')
    local f = tonumber(e[2]) + per
    if f > free then free = f end
  end
end
if free > now then return {0, free, now} end
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, now, ARGV[1])
  redis.call('PEXPIRE', key, tonumber(ARGV[2 * i + 1]) + 1000)
end
return {1, now, now}
`)

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
// within SeenFor when Redis last answered.
func (s *Shared) Take(ctx context.Context, inst string, now time.Time) (bool, time.Time) {
	if len(s.opt.Budget) == 0 {
		return true, now
	}
	member := s.member()
	ok, until, err := s.takeShared(ctx, inst, now, member)
	if err != nil {
		s.local.Add(1)
		return s.takeLocal(inst, now, member)
	}
	if ok {
		s.record(inst, now, member)
	}
	return ok, until
}

// takeShared runs the window script.
func (s *Shared) takeShared(ctx context.Context, inst string, now time.Time, member string) (bool, time.Time, error) {
	args := make([]any, 0, 1+2*len(s.opt.Budget))
	args = append(args, member)
	for _, w := range s.opt.Budget {
		args = append(args, w.Max, w.Per.Milliseconds())
	}
	var res []int64
	err := s.do(ctx, func(ctx context.Context) error {
		var err error
		res, err = takeScript.Run(ctx, s.fast, s.windowKeys(inst), args...).Int64Slice()
		return err
	})
	if err != nil {
		return false, time.Time{}, err
	}
	if len(res) != 3 {
		return false, time.Time{}, errBadReply
	}
	if res[0] == 1 {
		return true, now, nil
	}
	// Redis's "free" as a span from its now, on the local clock.
	return false, now.Add(time.Duration(res[1]-res[2]) * time.Microsecond), nil
}

type replyError string

func (e replyError) Error() string { return string(e) }

const errBadReply = replyError("redis: unexpected reply from the window script")

// share is this replica's part of window w among n replicas: Max/n
// searches per Per, or, when that is less than one, one search per
// Per·n/Max.
func share(w proxy.Window, n int) (limit int, span time.Duration) {
	if n <= 1 {
		return w.Max, w.Per
	}
	if w.Max >= n {
		return w.Max / n, w.Per
	}
	return 1, time.Duration((int64(w.Per)*int64(n) + int64(w.Max) - 1) / int64(w.Max))
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
		limit, span := share(w, n)
		// h is oldest first: the searches younger than span are a suffix.
		i := sort.Search(len(h), func(i int) bool { return now.Sub(h[i].at) < span })
		if len(h)-i >= limit {
			if f := h[len(h)-limit].at.Add(span); f.After(until) {
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
	s.mu.Unlock()
}

// Trial claims the trial search of a half-open instance for this replica
// until then (see proxy.SharedTrials): a key set if absent. Without
// Redis, every replica takes its own.
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
	return false, now.Add(left)
}
