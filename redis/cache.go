package redis

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/proxy/cache"
)

// Answers are kept under "searxgate:c:a:<hex id>", the id being the first
// half of the proxy's cache key (a keyed hash, never the query). The value
// is the answer sealed with the key's second half, which is never written
// anywhere (see cache.SealAnswer), after a small clear header: who
// answered, when, and when it expires; a MAC (see auth.go) over the id,
// the header and the sealed answer closes it, so that whoever can write
// Redis cannot make an old answer fresh, or say another instance gave
// it. Redis drops it StaleFor after it expires. The lock of a search in
// flight is "searxgate:c:l:<hex id>".

// recordVersion 2 added the MAC; a version 1 record (keyed with a secret
// kept in Redis) is a miss.
const recordVersion = 2

// encode writes a record: version, stored and expires (Unix ms), the
// instance, the sealed answer, then the MAC of all that and the id.
func (s *Shared) encode(id string, c cache.Entry, sealed []byte) []byte {
	b := make([]byte, 0, 1+8+8+2+len(c.Instance)+len(sealed)+macLen)
	b = append(b, recordVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(c.StoredAt.UnixMilli()))
	b = binary.BigEndian.AppendUint64(b, uint64(c.Expires.UnixMilli()))
	b = binary.BigEndian.AppendUint16(b, uint16(min(len(c.Instance), 0xffff)))
	b = append(b, c.Instance[:min(len(c.Instance), 0xffff)]...)
	b = append(b, sealed...)
	return append(b, s.sign([]byte("answer"), []byte(id), b)...)
}

// check returns the record without its MAC, if the MAC is right for id.
func (s *Shared) check(id string, b []byte) ([]byte, bool) {
	if len(b) < macLen {
		return nil, false
	}
	body, mac := b[:len(b)-macLen], b[len(b)-macLen:]
	return body, s.verify(mac, []byte("answer"), []byte(id), body)
}

// decode reads a record's clear header; b is the record without its MAC
// (check), or whole when only the header is read (a drop: the sealed
// answer then ends with the MAC, which is never opened).
func decode(b []byte) (c cache.Entry, sealed []byte, ok bool) {
	if len(b) < 19 || b[0] != recordVersion {
		return c, nil, false
	}
	c.StoredAt = time.UnixMilli(int64(binary.BigEndian.Uint64(b[1:])))
	c.Expires = time.UnixMilli(int64(binary.BigEndian.Uint64(b[9:])))
	n := int(binary.BigEndian.Uint16(b[17:]))
	if len(b) < 19+n {
		return c, nil, false
	}
	c.Instance = string(b[19 : 19+n])
	return c, b[19+n:], true
}

func (s *Shared) answerKey(id string) string { return s.cache + "a:" + hex.EncodeToString([]byte(id)) }
func (s *Shared) lockKey(id string) string   { return s.cache + "l:" + hex.EncodeToString([]byte(id)) }

// Get returns the answer kept for key, fresh or stale (see
// cache.Shared); a miss when Redis is unreachable or slow.
func (s *Shared) Get(ctx context.Context, key string) (cache.Entry, bool) {
	id, _, ok := cache.SplitKey(key)
	if !ok {
		return cache.Entry{}, false
	}
	var v []byte
	err := s.do(ctx, func(ctx context.Context) error {
		var err error
		v, err = s.fast.Get(ctx, s.answerKey(id)).Bytes()
		return err
	})
	if err != nil {
		return cache.Entry{}, false
	}
	return s.open(key, v)
}

// open reads a kept answer: its MAC, its clear header, then the answer
// sealed under key (cache.OpenAnswer).
func (s *Shared) open(key string, v []byte) (cache.Entry, bool) {
	id, _, ok := cache.SplitKey(key)
	if !ok {
		return cache.Entry{}, false
	}
	body, ok := s.check(id, v)
	if !ok {
		return cache.Entry{}, false
	}
	c, sealed, ok := decode(body)
	if !ok {
		return cache.Entry{}, false
	}
	js, ok := cache.OpenAnswer(key, sealed)
	if !ok {
		return cache.Entry{}, false
	}
	c.JSON = js
	return c, true
}

// Put seals c and queues its write (see cache.Shared).
func (s *Shared) Put(key string, c cache.Entry) {
	if !s.up.Load() {
		return
	}
	id, sealed, err := cache.SealAnswer(key, c.JSON)
	if err != nil {
		return
	}
	ttl := c.Expires.Sub(s.opt.Clock.Now()) + s.opt.StaleFor
	if ttl <= 0 {
		return
	}
	v, k := s.encode(id, c, sealed), s.answerKey(id)
	if len(v) > MaxValue {
		return // never written: no replica could read it back (guard.go)
	}
	s.enqueue(func(ctx context.Context) error { return s.slow.Set(ctx, k, v, ttl).Err() })
}

// unlockScript deletes a lock only if it is still the one its owner set.
var unlockScript = goredis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)

// lockSlack keeps a search's lock a little past its deadline: a replica
// that died with it leaves it that long.
const lockSlack = time.Second

// Lead asks to be the replica that searches key (see cache.Shared):
// a lock key set if absent, for the search's time. Without Redis, every
// replica leads its own. A replica that died holding the lock leaves it
// until the search's deadline plus lockSlack; the others wait for it at
// most three quarters of their own deadline (proxy), then search it
// themselves.
func (s *Shared) Lead(ctx context.Context, key string, until time.Time) (bool, func()) {
	id, _, ok := cache.SplitKey(key)
	if !ok {
		return true, func() {}
	}
	token, k := s.member(), s.lockKey(id)
	ttl := until.Sub(s.opt.Clock.Now()) + lockSlack
	var set bool
	err := s.do(ctx, func(ctx context.Context) error {
		var err error
		set, err = s.fast.SetNX(ctx, k, token, ttl).Result()
		return err
	})
	if err != nil {
		return true, func() {}
	}
	if !set {
		return false, func() {}
	}
	return true, func() {
		// After the answer's write: the writes are queued in order.
		s.enqueue(func(ctx context.Context) error { return unlockScript.Run(ctx, s.slow, []string{k}, token).Err() })
	}
}

// pollFirst and pollMax pace Wait's reads: the first soon (a cached
// search answers in milliseconds), then less often.
const (
	pollFirst = 5 * time.Millisecond
	pollMax   = 50 * time.Millisecond
)

// Wait waits for the answer another replica is searching (see
// cache.Shared): it reads the answer and the lock together until a
// fresh answer is there, the lock is gone without one, or until.
func (s *Shared) Wait(ctx context.Context, key string, until time.Time) (cache.Entry, bool) {
	id, _, ok := cache.SplitKey(key)
	if !ok {
		return cache.Entry{}, false
	}
	ak, lk := s.answerKey(id), s.lockKey(id)
	pause := pollFirst
	for {
		var vals []any
		err := s.do(ctx, func(ctx context.Context) error {
			var err error
			vals, err = s.fast.MGet(ctx, ak, lk).Result()
			return err
		})
		if err != nil || len(vals) != 2 {
			return cache.Entry{}, false
		}
		if v, ok := vals[0].(string); ok {
			if c, ok := s.open(key, []byte(v)); ok && s.opt.Clock.Now().Before(c.Expires) {
				return c, true
			}
		}
		if vals[1] == nil { // the search ended (or died) without a fresh answer
			return cache.Entry{}, false
		}
		left := until.Sub(s.opt.Clock.Now())
		if left <= 0 {
			return cache.Entry{}, false
		}
		timer, stop := s.opt.Clock.NewTimer(min(pause, left))
		select {
		case <-ctx.Done():
			stop()
			return cache.Entry{}, false
		case <-s.closed:
			stop()
			return cache.Entry{}, false
		case <-timer:
		}
		pause = min(pause*2, pollMax)
	}
}

// Interfaces Shared satisfies.
var (
	_ proxy.SharedBudget = (*Shared)(nil)
	_ cache.Shared       = (*Shared)(nil)
	_ proxy.RefusalFeed  = (*Shared)(nil)
	_ proxy.SharedTrials = (*Shared)(nil)
	_ cache.Dropper      = (*Shared)(nil)
)

// dropTimeout bounds a drop of answers (an operator's call, not a search).
const dropTimeout = 10 * time.Second

// CacheDropInstance drops from Redis every answer inst gave, alone or
// merged with others (see cache.Dropper): a scan of the answers,
// reading who answered from each one's clear header.
func (s *Shared) CacheDropInstance(inst string) (int, error) {
	return s.dropAnswers(func(v string) bool {
		c, _, ok := decode([]byte(v))
		return ok && cache.AnsweredBy(c.Instance, inst)
	})
}

// CachePurge drops every answer from Redis (see cache.Dropper); the
// locks stay.
func (s *Shared) CachePurge() (int, error) { return s.dropAnswers(nil) }

// dropAnswers deletes the answers doomed says so of (all when nil).
func (s *Shared) dropAnswers(doomed func(v string) bool) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), dropTimeout)
	defer cancel()
	n := 0
	var cursor uint64
	for {
		keys, next, err := s.slow.Scan(ctx, cursor, s.cache+"a:*", 512).Result()
		if err != nil {
			return n, err
		}
		if doomed != nil && len(keys) > 0 {
			heads, err := s.heads(ctx, keys)
			if err != nil {
				return n, err
			}
			kept := keys[:0]
			for i, h := range heads {
				if doomed(h) {
					kept = append(kept, keys[i])
				}
			}
			keys = kept
		}
		if len(keys) > 0 {
			d, err := s.slow.Del(ctx, keys...).Result()
			if err != nil {
				return n, err
			}
			n += int(d)
		}
		if cursor = next; cursor == 0 {
			return n, nil
		}
	}
}

// headLen is the longest clear header of a kept answer (see encode).
const headLen = 1 + 8 + 8 + 2 + 0xffff

// heads reads the clear header of each answer in keys (all of it when
// shorter), in one round trip: a reply of many whole answers could pass
// the guard's bound on one reply (guard.go).
func (s *Shared) heads(ctx context.Context, keys []string) ([]string, error) {
	pipe := s.slow.Pipeline()
	cmds := make([]*goredis.StringCmd, len(keys))
	for i, k := range keys {
		cmds[i] = pipe.GetRange(ctx, k, 0, headLen-1)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, goredis.Nil) {
		return nil, err
	}
	out := make([]string, len(keys))
	for i, c := range cmds {
		out[i] = c.Val()
	}
	return out, nil
}
