package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy/cache"
	"github.com/searxgate/searxgate/proxy/upstream"
)

// ErrNoAutocomplete: no instance known to offer autocompletion could be
// asked (none offers it, or those that do are out of budget).
var ErrNoAutocomplete = errors.New("no instance offers autocompletion now")

// autocompleteTTL is how long suggestions are cached.
const autocompleteTTL = time.Hour

type clientKey struct{}

// WithClient returns ctx carrying the client key of the request it
// serves (what Request.Client is for a search), for Autocomplete: each
// client gets its share of the public instances' autocompletion budget.
func WithClient(ctx context.Context, client string) context.Context {
	return context.WithValue(ctx, clientKey{}, client)
}

// clientFrom is the client key WithClient put in ctx ("" when none).
func clientFrom(ctx context.Context) string {
	c, _ := ctx.Value(clientKey{}).(string)
	return c
}

// Autocomplete returns suggestions for the prefix q, from an instance whose
// /config names an autocomplete backend, within its politeness budget, and
// cached (unless NoCache). It asks at most two instances, the operator's
// own first, and never waits for a budget. The client WithClient put in
// ctx gets its share of the public instances' autocompletion budget, as
// a search's client does of theirs (polite.Fair): over it, only the
// operator's own instances suggest.
func (p *Proxy) Autocomplete(ctx context.Context, q, language string) ([]string, error) {
	q = strings.TrimSpace(q)
	if q == "" {
		return []string{}, nil
	}
	if len(q) > MaxQueryLen {
		q = q[:MaxQueryLen]
	}
	now := p.now()
	key := "ac\x00" + language + "\x00" + q // memory only: a plain key
	if c, ok := p.cache.Suggestions().Get(key); ok && !p.cfg.NoCache && now.Before(c.Expires) {
		var out []string
		if json.Unmarshal(c.JSON, &out) == nil {
			return out, nil
		}
	}
	req := Request{Language: language}
	deadline := now.Add(min(p.cfg.Deadline, 2*time.Second))
	if d, ok := p.ctxDeadline(ctx, now); ok && d.Before(deadline) {
		deadline = d
	}
	args := fasthttp.AcquireArgs()
	defer fasthttp.ReleaseArgs(args)
	args.Set("q", q)
	client := clientFrom(ctx)
	asked := map[string]bool{}
	skip := func(inst string) bool {
		// The terms a search keeps to (a link-token bot check bars an
		// instance) bind its suggestions too; their budget is their own.
		return asked[inst] || !p.recs.Get(inst).Suggests(now)
	}
	var lastErr error = ErrNoAutocomplete
	for len(asked) < 2 && ctx.Err() == nil {
		// A lease, like a search's: the instance's circuit, its trial and
		// its in-flight limit apply, and a refusal here cools it down.
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deadline.Sub(p.now())+time.Second)
		// The operator's own instances first: suggestions cost a public
		// instance's small autocompletion budget only when none of them
		// offers it now.
		leases, err := p.pool.CheckoutOwn(lctx, 1, skip)
		if ok, _ := p.acFair.Allowed(client, now); ok && (err != nil || len(leases) == 0) {
			leases, err = p.pool.Checkout(lctx, 1, skip)
		}
		if err != nil || len(leases) == 0 {
			cancel()
			break
		}
		l := leases[0]
		inst := l.Instance()
		asked[inst] = true
		if !p.acPolite.TakeAs(inst, l.Own(), now) {
			p.giveBack(l, cancel)
			p.dispatch()
			continue
		}
		// The share is checked and counted in one step: the client's
		// concurrent suggestions cannot all pass its check.
		if !l.Own() && !p.acFair.TakeIfAllowed(client, now) {
			p.acPolite.Untake(inst, now)
			p.giveBack(l, cancel)
			p.dispatch()
			continue
		}
		start := p.now()
		rep, err := p.up.Get(inst, "autocompleter", args, req.acceptLanguage(), deadline.Sub(start))
		out, o := p.judgeSuggestions(q, rep, err)
		p.pool.Record(l, o, p.now().Sub(start))
		cancel()
		p.dispatch() // its slot is free again
		if out == nil {
			lastErr = fmt.Errorf("%s: %s %s", inst, o.Kind, o.Reason)
			continue
		}
		if js, err := json.Marshal(out); err == nil && !p.cfg.NoCache {
			p.cache.Suggestions().Put(key, &cache.Entry{JSON: js, Instance: inst, StoredAt: now, Expires: now.Add(autocompleteTTL)})
		}
		return out, nil
	}
	return nil, lastErr
}

// judgeSuggestions reads an /autocompleter answer and says what the pool
// should learn from it. A refusal (429, a challenge, the limiter's
// redirect) is the instance's word about searxgate and cools it down like
// a search's; anything else, good or not, says nothing about its searches
// (autocompletion has its own backends) and is recorded as cancelled.
func (p *Proxy) judgeSuggestions(q string, rep *upstream.Reply, err error) ([]string, pool.Outcome) {
	if err != nil {
		return nil, suggestionOutcome(nil)
	}
	if rep.Status == fasthttp.StatusOK {
		if out, err := parseSuggestions(rep.Body); err == nil {
			return out, suggestionOutcome(nil)
		}
	}
	v := detect.Classify(detect.Answer{Status: rep.Status, Header: rep.Header, Body: rep.Body,
		Format: FormatJSON, Query: detect.ParseQuery(q), Now: p.now(), MaxBody: p.up.MaxBody()})
	return nil, suggestionOutcome(&v)
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
