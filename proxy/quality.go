package proxy

import (
	"bytes"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/results"
)

// Quality: what an instance's answers hold, learned as its latency is
// (pool.Learn), and used three ways here: a search naming engines or a
// category goes first to instances that have them and do not report them
// suspended (checkoutFor); a thin answer in hand, when budget and deadline
// allow, is raced by one instance expected full and the fuller is served
// (holdThin); and every face says when an answer is thin and why
// (ThinNote).

// learnQuality tells the pool what a good answer of inst holds. An answer
// whose poverty may be the query's own (nothing found, a bang, engines the
// client named, more than one category, a later page) teaches only which
// engines answered or are suspended, never fullness.
func (p *Proxy) learnQuality(inst string, req *Request, v detect.Verdict) {
	if v.Kind != detect.OK || v.Results == nil {
		return
	}
	r := v.Results
	a := pool.Answer{Engines: answeringEngines(r), Suspended: r.UnresponsiveEngines}
	if len(req.Categories) == 1 {
		a.Category = req.Categories[0]
	}
	if !r.NothingFound() && req.PageNo <= 1 && len(req.Engines) == 0 && len(req.Categories) <= 1 && !namesEngines(req.Syntax) {
		a.Hits, a.Page = len(r.Results), pool.DefaultPage
	}
	p.pool.Learn(inst, a)
}

// answeringEngines are the engines that gave r's results, in order of
// first appearance.
func answeringEngines(r *results.Page) []string {
	out := make([]string, 0, 4)
	add := func(e string) {
		if e != "" && !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	for i := range r.Results {
		res := &r.Results[i]
		add(res.Engine)
		for _, e := range res.Engines {
			add(e)
		}
	}
	return out
}

// namesEngines reports whether q has a bang ("!go", "!images"): the
// client chose the engines or the category.
func namesEngines(q detect.Query) bool {
	for k := range q.Words() {
		if k == detect.WordBang {
			return true
		}
	}
	return false
}

// suspended are the engines r lists as suspended on its instance.
func suspended(r *results.Page) []string {
	var out []string
	for _, e := range r.UnresponsiveEngines {
		if pool.Suspends(e[1]) && e[0] != "" && !slices.Contains(out, e[0]) {
			out = append(out, e[0])
		}
	}
	return out
}

// thinPage reports whether r is a thin answer by its instance's doing: it
// lists a suspended engine and holds fewer results than a full page
// would (pool.ThinBelow of pool.DefaultPage).
func thinPage(r *results.Page) bool { return thinnerThan(r, pool.ThinBelow) }

// hedgeBelow is the fullness under which a thin answer is worth a quality
// hedge: half a page. A partial answer (one engine suspended, 7 results
// of 10) is said to be thin but served as it is.
const hedgeBelow = 0.5

// thinnerThan reports whether r lists a suspended engine and holds fewer
// than frac of a full page.
func thinnerThan(r *results.Page, frac float64) bool {
	return r != nil && !r.NothingFound() && float64(len(r.Results)) < frac*pool.DefaultPage && len(suspended(r)) > 0
}

// ThinNote says why an answer is thin, for the faces: "google, bing
// suspended on search.example; 4 results from wikipedia". It is "" for an
// answer that is not thin (see thinPage). instance is who served it (a
// comma-separated list for a merged answer).
func ThinNote(r *results.Page, instance string) string {
	if !thinPage(r) {
		return ""
	}
	var b strings.Builder
	b.WriteString(strings.Join(suspended(r), ", "))
	b.WriteString(" suspended on ")
	b.WriteString(hostsOf(instance))
	b.WriteString("; ")
	b.WriteString(strconv.Itoa(len(r.Results)))
	if len(r.Results) == 1 {
		b.WriteString(" result")
	} else {
		b.WriteString(" results")
	}
	if from := answeringEngines(r); len(from) > 0 {
		b.WriteString(" from ")
		b.WriteString(strings.Join(from, ", "))
	}
	return b.String()
}

// hostsOf is a comma-separated list of instance URLs as host names.
func hostsOf(instances string) string {
	parts := strings.Split(instances, ",")
	for i, s := range parts {
		s = strings.TrimSpace(s)
		if u, err := url.Parse(s); err == nil && u.Host != "" {
			s = u.Host
		}
		parts[i] = s
	}
	return strings.Join(parts, ", ")
}

// Thin says why the answer is thin ("" when it is not): ThinNote of its
// results, read from its JSON for a cached answer.
func (r *Response) Thin() string {
	if r == nil || r.Redirect != "" {
		return ""
	}
	if r.results == nil && !maySuspend(r.JSON) {
		return "" // a cached answer that names no suspension: not decoded for nothing
	}
	page, err := r.Results()
	if err != nil {
		return ""
	}
	return ThinNote(page, r.Instance)
}

// unresponsiveKey is the key of the engines an answer lists as down.
var unresponsiveKey = []byte(`"unresponsive_engines":`)

// maySuspend reports whether an answer's JSON could list a suspended
// engine: false when its unresponsive_engines hold none of the words
// pool.Suspends looks for, in any letter case. It allocates nothing and
// reads only that list, so a cache hit costs no decoding.
func maySuspend(json []byte) bool {
	i := bytes.LastIndex(json, unresponsiveKey)
	if i < 0 {
		return false
	}
	list := json[i+len(unresponsiveKey):]
	if end := bytes.Index(list, []byte("]]")); end >= 0 {
		list = list[:end]
	}
	for _, w := range pool.SuspendWords {
		if containsFold(list, w) {
			return true
		}
	}
	return false
}

// containsFold reports whether s holds word (ASCII, lower case) in any
// letter case.
func containsFold(s []byte, word string) bool {
	for i := 0; i+len(word) <= len(s); i++ {
		j := 0
		for ; j < len(word); j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != word[j] {
				break
			}
		}
		if j == len(word) {
			return true
		}
	}
	return false
}

// maxQualityHedges bounds the quality hedges of one search: a second
// one only when the first instance, not known yet, answered thin too.
const maxQualityHedges = 2

// holdThin decides what a search does with r, a good answer with results:
// when r is thin by its instance's doing (under hedgeBelow of a page),
// nothing else is in flight, and one more instance expected full can be
// asked now within the budget and the deadline, the fuller of r and the answer held so far is held and
// that instance asked (a quality hedge, charged as an extra); holdThin
// then reports true. Never for a bang, a search naming its engines or a
// later page (thin by the query's doing), and at most maxQualityHedges
// times a search.
func (s *search) holdThin(r attemptResult) bool {
	req := &s.req
	if s.qualityHedges >= maxQualityHedges || s.fanout > 1 || s.inflight > 0 || s.started >= s.p.cfg.MaxAttempts ||
		req.PageNo > 1 || len(req.Engines) > 0 || namesEngines(req.Syntax) || !thinnerThan(r.verdict.Results, hedgeBelow) {
		return false
	}
	if !s.launch(launchQuality) {
		return false
	}
	// The thin answer waits for the fuller one only as long as that
	// instance usually takes (qualityWait), not a hedge's whole delay.
	p := s.p
	s.stopHedge()
	s.hedge, s.stopHedge = p.timer(min(p.qualityWait(s.log[len(s.log)-1].Instance), s.deadline.Sub(p.now())))
	p.metrics.qualityHedges.Add(1)
	s.qualityHedges++
	held := s.fuller(r)
	s.thin = &held
	return true
}

// thinTTL is how long a thin answer is cached: briefly, as an answer
// whose poverty is the query's (queryFaultTTL), so that a repeat soon
// asks again where the engines may answer; 0 (the usual time) for the
// others.
func thinTTL(r attemptResult) time.Duration {
	if r.verdict.Kind == detect.OK && thinPage(r.verdict.Results) {
		return queryFaultTTL
	}
	return 0
}

// qualityWaitUnknown is how long a thin answer waits for the fuller one
// of an instance not measured yet: about what a full public instance
// takes at the slow end (searx.space's medians are mostly under 0.7 s).
const qualityWaitUnknown = 700 * time.Millisecond

// qualityWait is how long a thin answer waits for the fuller answer of
// inst: its usual latency times HedgeFactor when measured, else
// qualityWaitUnknown.
func (p *Proxy) qualityWait(inst string) time.Duration {
	if lat, ok := p.usual(inst); ok && lat > 0 {
		return max(time.Duration(float64(lat)*p.cfg.HedgeFactor), 100*time.Millisecond)
	}
	return qualityWaitUnknown
}

// fuller is the answer to serve when r came: r, or the thin one held when
// it holds more results.
func (s *search) fuller(r attemptResult) attemptResult {
	if t := s.thin; t != nil && (r.verdict.Results == nil || len(t.verdict.Results.Results) > len(r.verdict.Results.Results)) {
		return *t
	}
	return r
}

// checkoutFor takes the instance for an attempt of kind: for a quality
// hedge, one whose answers were full when one is free, else one not
// known yet, never one expected thin; for a search naming engines or a
// category, one that has them and does not report them suspended, when
// one is free, else any.
func (s *search) checkoutFor(kind launchKind, now time.Time) (leased, bool) {
	p := s.p
	if kind == launchQuality {
		thin := s.skipping(p.pool.Thin())
		if l, ok := p.checkout(s.ctx, s.req.Client, skipAlso(thin, p.pool.Unproven()), now, false); ok {
			return l, true
		}
		return p.checkout(s.ctx, s.req.Client, thin, now, false)
	}
	if s.avoid == nil {
		s.avoid = p.lacking(&s.req)
	}
	if len(s.avoid) > 0 {
		if l, ok := p.checkout(s.ctx, s.req.Client, s.skipping(s.avoid), now, false); ok {
			return l, true
		}
	}
	return p.checkout(s.ctx, s.req.Client, s.tried, now, false)
}

// skipping is the instances tried and those of more.
func (s *search) skipping(more map[string]bool) map[string]bool { return skipAlso(s.tried, more) }

// skipAlso is a new set of the instances of set and of more (set itself
// when more is empty).
func skipAlso(set, more map[string]bool) map[string]bool {
	if len(more) == 0 {
		return set
	}
	out := make(map[string]bool, len(set)+len(more))
	maps.Copy(out, set)
	maps.Copy(out, more)
	return out
}

// noneLacking is the avoid set of a search that names nothing.
var noneLacking = map[string]bool{}

// lacking returns the instances a search naming engines (engines=, an
// engine bang) or a category (categories=, a category bang) should try
// last: those whose /config lists none of the engines or the category
// asked, and those that report one of the engines suspended, or whose
// answers in the category were thin (pool.Lacking).
func (p *Proxy) lacking(req *Request) map[string]bool {
	asked := slices.Clone(req.Engines)
	for k, w := range req.Syntax.Words() {
		if k == detect.WordBang {
			asked = append(asked, strings.ToLower(strings.TrimPrefix(w, "!")))
		}
	}
	// Every instance has general engines: asking for it names nothing
	// (the search page sends it with most searches).
	cats := slices.DeleteFunc(slices.Clone(req.Categories), func(c string) bool { return c == "general" })
	if len(asked) == 0 && len(cats) == 0 {
		return noneLacking
	}
	out := make(map[string]bool)
	names := slices.Clone(asked)
	for _, f := range p.pool.FreeAt(nil) {
		c := p.recs.Caps(f.URL)
		if len(c.Engines) == 0 {
			continue // its engines are not known: nothing to hold against it
		}
		has, resolved := hasAsked(c.Engines, asked, cats)
		names = append(names, resolved...)
		if !has {
			out[f.URL] = true
		}
	}
	cat := ""
	if len(cats) == 1 {
		cat = cats[0]
	}
	maps.Copy(out, p.pool.Lacking(names, cat))
	return out
}

// hasAsked reports whether engines (an instance's /config) hold one of
// the asked engine names, shortcuts or category bangs, or one of the
// categories; resolved are the names the shortcuts asked stand for.
func hasAsked(engines []Engine, asked, cats []string) (has bool, resolved []string) {
	if len(asked) == 0 && len(cats) == 0 {
		return true, nil
	}
	for _, e := range engines {
		for _, a := range asked {
			switch {
			case strings.EqualFold(e.Name, a) || slices.Contains(e.Categories, a):
				has = true
			case strings.EqualFold(e.Shortcut, a):
				has = true
				resolved = append(resolved, e.Name)
			}
		}
		for _, c := range cats {
			if slices.Contains(e.Categories, c) {
				has = true
			}
		}
	}
	return has, resolved
}
