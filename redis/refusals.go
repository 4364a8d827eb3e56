package redis

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// refusal is one circuit opening, as the replicas of a group tell it each
// other: who opened it, when (Unix ms of its clock), for how long from
// then, and why. On the channel and under "open:<instance>" it is written
// as the MAC (base64), a dot, then the JSON; the MAC covers the group,
// the instance the key names (for a kept one) and the JSON.
type refusal struct {
	From   string `json:"r"`
	Inst   string `json:"i"`
	At     int64  `json:"t"`
	ForMS  int64  `json:"ms"`
	Reason string `json:"why,omitempty"`
}

// maxSkew is how far the replicas' clocks may be apart: a refusal sent
// longer ago than that (or that far in the future) is not believed. The
// replicas' clocks are expected to follow NTP.
const maxSkew = 30 * time.Second

// Why an opening heard from another replica is capped (MaxHeard, 10 min
// by default, where the pool's own cooldowns reach 30 min): it is taken
// on another process's word. A replica with a bug, or whoever holds the
// secret, could otherwise close the whole pool for half an hour with one
// message per instance; with the cap, a heard opening costs at most ten
// minutes, after which this replica's own half-open trial (one search,
// and one replica of the group at a time: Trial) finds out for itself. A
// real refusal longer than that is learned again by that trial, at the
// price of one search per instance per ten minutes for the whole group.

// seal returns the wire form of r: the MAC, a dot, the JSON. kind and
// inst say where it goes ("refusal" on the channel, "open" under inst's
// key).
func (s *Shared) seal(kind string, r refusal) []byte {
	js, _ := json.Marshal(r)
	inst := ""
	if kind == "open" {
		inst = r.Inst
	}
	mac := s.sign([]byte(kind), []byte(s.opt.Group), []byte(inst), js)
	out := make([]byte, 0, base64.RawStdEncoding.EncodedLen(macLen)+1+len(js))
	out = base64.RawStdEncoding.AppendEncode(out, mac)
	out = append(out, '.')
	return append(out, js...)
}

// unseal reads a refusal of kind, checking its MAC; inst is the instance
// the key names ("" on the channel). It returns the MAC too, which names
// the message (to hear it once).
func (s *Shared) unseal(kind, inst string, v []byte) (refusal, string, bool) {
	dot := bytes.IndexByte(v, '.')
	if dot < 0 {
		return refusal{}, "", false
	}
	mac, err := base64.RawStdEncoding.DecodeString(string(v[:dot]))
	js := v[dot+1:]
	if err != nil || !s.verify(mac, []byte(kind), []byte(s.opt.Group), []byte(inst), js) {
		return refusal{}, "", false
	}
	var r refusal
	if json.Unmarshal(js, &r) != nil || r.Inst == "" || r.ForMS <= 0 || (inst != "" && r.Inst != inst) {
		return refusal{}, "", false
	}
	return r, string(v[:dot]), true
}

// Opened tells the other replicas of the group that inst's circuit opened
// here until then (see proxy.RefusalFeed). It never blocks: the message
// joins the queued writes (enqueue). It is published for the replicas
// listening now, and kept for its time for those that start or come back
// meanwhile. This replica remembers it while it is open: when Redis was
// unreachable (the write dropped) or lost its memory, it is written back
// (republish).
func (s *Shared) Opened(inst string, until time.Time, reason string) {
	now := s.opt.Clock.Now()
	if !until.After(now) {
		return
	}
	s.mu.Lock()
	if o, ok := s.opened[inst]; !ok || until.After(o.until) {
		s.opened[inst] = opening{until: until, reason: reason}
	}
	if len(s.opened) > 1024 { // a large pool, long open: drop what closed
		for k, o := range s.opened {
			if !o.until.After(now) {
				delete(s.opened, k)
			}
		}
	}
	s.mu.Unlock()
	s.enqueue(func(ctx context.Context) error { return s.tell(ctx, inst, until, reason, now) })
}

// tell publishes one opening and keeps it under its key.
func (s *Shared) tell(ctx context.Context, inst string, until time.Time, reason string, now time.Time) error {
	d := until.Sub(now)
	if d <= 0 {
		return nil
	}
	r := refusal{From: s.opt.Replica, Inst: inst, At: now.UnixMilli(), ForMS: max(d.Milliseconds(), 1), Reason: reason}
	pipe := s.slow.Pipeline()
	pipe.Publish(ctx, s.channel(), s.seal("refusal", r))
	pipe.Set(ctx, s.openKey(inst), s.seal("open", r), time.Duration(r.ForMS)*time.Millisecond)
	_, err := pipe.Exec(ctx)
	return err
}

// republish writes back the circuits this replica opened that are still
// open (their messages were dropped while Redis was unreachable, or Redis
// lost their keys), and forgets those that closed.
func (s *Shared) republish(ctx context.Context) error {
	now := s.opt.Clock.Now()
	type one struct {
		inst string
		o    opening
	}
	var all []one
	s.mu.Lock()
	for inst, o := range s.opened {
		if !o.until.After(now) {
			delete(s.opened, inst)
			continue
		}
		all = append(all, one{inst, o})
	}
	s.mu.Unlock()
	for _, a := range all {
		if err := s.tell(ctx, a.inst, a.o.until, a.o.reason, now); err != nil {
			return err
		}
	}
	return nil
}

func (s *Shared) channel() string { return s.prefix + "refusals" }

func (s *Shared) openKey(inst string) string { return s.prefix + "open:" + inst }

// heardUntil is when an opening heard from another replica ends here:
// what is left of it, capped at MaxHeard.
func (s *Shared) heardUntil(left time.Duration, now time.Time) time.Time {
	return now.Add(min(left, s.opt.MaxHeard))
}

// loadOpens hands OnOpen the circuits other replicas opened that are still
// open: run when this replica starts sharing, and again whenever Redis
// comes back (what was published meanwhile was not heard). A value whose
// MAC is wrong, that names another instance, or that has ended by its
// own time is left alone.
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
		vals := make([]*goredis.StringCmd, len(keys))
		ttls := make([]*goredis.DurationCmd, len(keys))
		for i, k := range keys {
			vals[i], ttls[i] = pipe.Get(ctx, k), pipe.PTTL(ctx, k)
		}
		if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, goredis.Nil) {
			return err
		}
		now := s.opt.Clock.Now()
		for i, k := range keys {
			if vals[i].Err() != nil || ttls[i].Err() != nil {
				continue // gone meanwhile
			}
			inst := k[len(prefix):]
			r, _, ok := s.unseal("open", inst, []byte(vals[i].Val()))
			if !ok || r.From == s.opt.Replica || time.UnixMilli(r.At).After(now.Add(maxSkew)) {
				continue
			}
			// Neither its TTL nor its own end: an old value written back
			// is worth no more than what was left of it.
			left := min(ttls[i].Val(), time.UnixMilli(r.At+r.ForMS).Sub(now))
			if left > 0 {
				s.opt.OnOpen(inst, s.heardUntil(left, now), r.Reason)
			}
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

// subscriber hears the other replicas' refusals and hands them to OnOpen.
// The client resubscribes by itself after a lost connection; what was
// published meanwhile is not heard (restore reads the keys). A message
// whose MAC is wrong, sent more than maxSkew ago or ahead, or heard
// before, is dropped.
func (s *Shared) subscriber(ctx context.Context) {
	sub := s.slow.Subscribe(ctx, s.channel())
	defer sub.Close()
	ch := sub.Channel()
	heard := map[string]time.Time{} // the MACs of the messages heard within 2·maxSkew
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
			now := s.opt.Clock.Now()
			r, id, ok := s.unseal("refusal", "", []byte(m.Payload))
			if !ok || r.From == s.opt.Replica {
				continue
			}
			age := now.Sub(time.UnixMilli(r.At))
			if age > maxSkew || age < -maxSkew {
				continue
			}
			if _, again := heard[id]; again {
				continue
			}
			if len(heard) >= 256 {
				for k, at := range heard {
					if now.Sub(at) > 2*maxSkew {
						delete(heard, k)
					}
				}
			}
			heard[id] = now
			left := time.Duration(r.ForMS)*time.Millisecond - max(age, 0)
			if left > 0 && s.opt.OnOpen != nil {
				s.opt.OnOpen(r.Inst, s.heardUntil(left, now), r.Reason)
			}
		}
	}
}
