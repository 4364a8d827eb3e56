package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
)

// ErrNoAutocomplete: no instance known to offer autocompletion could be
// asked (none offers it, or those that do are out of budget).
var ErrNoAutocomplete = errors.New("no instance offers autocompletion now")

// autocompleteTTL is how long suggestions are cached.
const autocompleteTTL = time.Hour

// Autocomplete returns suggestions for the prefix q, from an instance whose
// /config names an autocomplete backend, within its politeness budget, and
// cached. It asks at most two instances and never waits for a budget.
func (p *Proxy) Autocomplete(ctx context.Context, q, language string) ([]string, error) {
	q = strings.TrimSpace(q)
	if q == "" {
		return []string{}, nil
	}
	if len(q) > MaxQueryLen {
		q = q[:MaxQueryLen]
	}
	now := p.cfg.Now()
	key := "ac\x00" + language + "\x00" + q
	if c, ok := p.cache.get(key); ok && now.Before(c.Expires) {
		var out []string
		if json.Unmarshal(c.JSON, &out) == nil {
			return out, nil
		}
	}
	skip := func(inst string) bool { return p.caps.get(inst).Autocomplete == "" }
	req := Request{Language: language}
	deadline := now.Add(min(p.cfg.Deadline, 2*time.Second))
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	args := fasthttp.AcquireArgs()
	defer fasthttp.ReleaseArgs(args)
	args.Set("q", q)
	var lastErr error = ErrNoAutocomplete
	asked := 0
	for _, inst := range p.pool.Rank(8, skip) {
		if asked == 2 || ctx.Err() != nil {
			break
		}
		if !p.polite.Take(inst, now) {
			continue
		}
		asked++
		rep, err := p.up.get(inst, "autocompleter", args, req.acceptLanguage(), deadline)
		if err != nil {
			lastErr = err
			continue
		}
		if rep.Status != fasthttp.StatusOK {
			lastErr = &statusError{rep.Status}
			continue
		}
		out, err := parseSuggestions(rep.Body)
		if err != nil {
			lastErr = err
			continue
		}
		if js, err := json.Marshal(out); err == nil {
			p.cache.put(key, &Cached{JSON: js, Instance: inst, StoredAt: now, Expires: now.Add(autocompleteTTL)})
		}
		return out, nil
	}
	return nil, lastErr
}

// parseSuggestions reads SearXNG's /autocompleter answer in either shape:
// OpenSearch's [prefix, [suggestions...]] (what a browser's address bar
// gets) or a plain list (what its own search form gets).
func parseSuggestions(body []byte) ([]string, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, err
	}
	if len(raw) == 2 {
		var prefix string
		var list []string
		if json.Unmarshal(raw[0], &prefix) == nil && json.Unmarshal(raw[1], &list) == nil {
			return nonEmpty(list), nil
		}
	}
	out := make([]string, 0, len(raw))
	for _, r := range raw {
		var s string
		if err := json.Unmarshal(r, &s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return nonEmpty(out), nil
}

func nonEmpty(in []string) []string {
	out := in[:0]
	for _, s := range in {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	if out == nil {
		out = []string{}
	}
	return out
}
