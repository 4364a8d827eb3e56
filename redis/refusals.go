package redis

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// refusal is one circuit opening, as the replicas of a group tell it each
// other: for how long from now (not until when: the replicas' clocks may
// differ), and why.
type refusal struct {
	From   string `json:"r"`
	Inst   string `json:"i"`
	ForMS  int64  `json:"ms"`
	Reason string `json:"why,omitempty"`
}

// Opened tells the other replicas of the group that inst's circuit opened
// here until then (see proxy.RefusalFeed). It never blocks: the message
// joins the queued writes (enqueue), and is dropped when Redis is
// unreachable or the queue is full. It is published for the replicas
// listening now, and kept for its time for those that start or come back
// meanwhile.
func (s *Shared) Opened(inst string, until time.Time, reason string) {
	d := until.Sub(s.opt.Clock.Now())
	if d <= 0 {
		return
	}
	r := refusal{From: s.opt.Replica, Inst: inst, ForMS: max(d.Milliseconds(), 1), Reason: reason}
	b, _ := json.Marshal(r)
	s.enqueue(func(ctx context.Context) error {
		pipe := s.slow.Pipeline()
		pipe.Publish(ctx, s.channel(), b)
		pipe.Set(ctx, s.openKey(inst), reason, time.Duration(r.ForMS)*time.Millisecond)
		_, err := pipe.Exec(ctx)
		return err
	})
}

func (s *Shared) channel() string { return s.prefix + "refusals" }

func (s *Shared) openKey(inst string) string { return s.prefix + "open:" + inst }

// loadOpens hands OnOpen the circuits other replicas opened that are
// still open: run when this replica starts sharing, and again whenever
// Redis comes back (what was published meanwhile was not heard).
func (s *Shared) loadOpens(ctx context.Context) error {
	if s.opt.OnOpen == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*slowTimeout)
	defer cancel()
	prefix := s.openKey("")
	var cursor uint64
	for {
		keys, next, err := s.slow.Scan(ctx, cursor, prefix+"*", 256).Result()
		if err != nil {
			return err
		}
		// One round trip per page: a key gone meanwhile fails its own
		// commands (and Exec reports it), the others are read.
		pipe := s.slow.Pipeline()
		reasons := make([]*goredis.StringCmd, len(keys))
		ttls := make([]*goredis.DurationCmd, len(keys))
		for i, k := range keys {
			reasons[i], ttls[i] = pipe.Get(ctx, k), pipe.PTTL(ctx, k)
		}
		if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, goredis.Nil) {
			return err
		}
		for i, k := range keys {
			if reasons[i].Err() != nil || ttls[i].Err() != nil {
				continue // gone meanwhile
			}
			if d := ttls[i].Val(); d > 0 {
				s.opt.OnOpen(k[len(prefix):], s.opt.Clock.Now().Add(d), reasons[i].Val())
			}
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

// subscriber hears the other replicas' refusals and hands them to OnOpen.
// The client resubscribes by itself after a lost connection; what was
// published meanwhile is not heard.
func (s *Shared) subscriber(ctx context.Context) {
	sub := s.slow.Subscribe(ctx, s.channel())
	defer sub.Close()
	ch := sub.Channel()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.closed:
			return
		case m, ok := <-ch:
			if !ok {
				return
			}
			var r refusal
			if json.Unmarshal([]byte(m.Payload), &r) != nil || r.From == s.opt.Replica || r.Inst == "" || r.ForMS <= 0 {
				continue
			}
			if s.opt.OnOpen != nil {
				s.opt.OnOpen(r.Inst, s.opt.Clock.Now().Add(time.Duration(r.ForMS)*time.Millisecond), r.Reason)
			}
		}
	}
}
