package pool

import (
	"math"
	"slices"
	"strings"
	"time"
)

// Learn takes what each good answer holds. fullness is an EWMA (weight
// 0.3; the first answer sets it) of min(1, results/page) over the answers that list an engine the
// instance reports suspended ("Suspended: CAPTCHA", "too many requests",
// "access denied"); an answer with no suspended engine counts 1: fewer
// results with every engine answering are the query's. It starts at 1
// and what thin answers taught fades with QualityHalfLife (default 30 min)
// since the last one, so a recovered instance is tried again. ThinCost
// (default 3 s) is what a thin answer costs: an answer of half a page
// (HalfPage) or less is worth no more than none. A thin instance 60 ms
// away with fullness 0.4 scores 3060: after a full one at 450 ms and one
// not measured yet (the default prior, 2.5 s), before a full one at 4 s.
// A partial one (fullness 0.7, 60 ms) scores 1860. Fullness is kept apart per
// category asked. The engines that answered, and those reported
// suspended (until SearXNG's own suspension time: 24 h for a CAPTCHA or
// access denied, 1 h for too many requests, 2 min else, or until the
// engine answers again) are remembered per instance: Lacking names the
// instances a search naming engines or a category should try last, Thin
// those expected thin. Suspensions are the instance's state: they move
// no circuit and no failure average.
//
// The defaults below are its constants.
const (
	// DefaultThinCost is what a thin answer is taken to cost a search, in
	// the score: the time to a good answer it adds when the answers of an
	// instance hold half a page or less. Default 3s, more than the
	// default prior: a thin instance ranks after one not measured yet.
	DefaultThinCost = 3 * time.Second
	// DefaultQualityHalfLife is the half-life of what an instance's thin
	// answers taught: an instance not asked for that long is trusted to
	// have half recovered, so it is tried again in time. Default 30min.
	DefaultQualityHalfLife = 30 * time.Minute
	// DefaultPage is the page size a full answer holds when Answer.Page
	// is not given: SearXNG's engines give about 10 results each a page.
	DefaultPage = 10
	// fullnessAlpha: a new answer moves the fullness EWMA 30% of the way,
	// as a new latency moves the latency EWMA.
	fullnessAlpha = 0.3
	// maxEngines bounds the engines remembered per instance, answering
	// and suspended each; maxCategories the categories.
	maxEngines    = 32
	maxCategories = 8
)

// How long SearXNG suspends an engine, by the reason it gives (its
// search.suspended_times defaults): the answer does not say, so the pool
// remembers a suspension that long, or until the engine answers again.
const (
	suspendCaptcha      = 24 * time.Hour  // SearxEngineCaptcha
	suspendAccessDenied = 24 * time.Hour  // SearxEngineAccessDenied
	suspendTooMany      = time.Hour       // SearxEngineTooManyRequests
	suspendOther        = 2 * time.Minute // other errors: max_ban_time_on_fail
)

// Answer is what one good answer of an instance says of its quality, for
// Learn. The caller (the proxy) decides which answers say anything: an
// answer whose poverty is the query's own (nothing found, a bang, engines
// named by the client, a later page) is learned with Page 0 (engines only).
type Answer struct {
	// Category is the category asked ("" or "general": the instance's
	// main figure; another is kept apart where it differs).
	Category string
	// Hits is the number of results; Page the results a full answer
	// holds (0: no fullness sample, only the engines are learned).
	Hits, Page int
	// Engines are the engines that gave results.
	Engines []string
	// Suspended are the engines the instance reports suspended, with
	// its reason ("Suspended: CAPTCHA", ...). Only an answer that lists
	// one is taken as thin by the instance's doing: fewer results with
	// every engine answering are the query's (fullness 1).
	Suspended [][2]string
}

// Suspension is one engine an instance reports suspended.
type Suspension struct {
	Engine string    `json:"engine"`
	Reason string    `json:"reason"`
	Until  time.Time `json:"until"`
}

// EngineSeen is one engine that answered on an instance, and when last.
type EngineSeen struct {
	Engine string    `json:"engine"`
	At     time.Time `json:"at"`
}

// QualityState is what was learned of an instance's answers, for Stats
// and Export: its fullness average (0 to 1; 1 until measured), per
// category where one was asked, and its engines.
type QualityState struct {
	Fullness   float64            `json:"fullness"`
	Samples    int                `json:"samples,omitempty"`
	At         time.Time          `json:"at,omitzero"`
	Categories map[string]float64 `json:"categories,omitempty"`
	Answering  []EngineSeen       `json:"answering,omitempty"`
	Suspended  []Suspension       `json:"suspended,omitempty"`
}

// quality is what the pool learned of one instance's answers; nil until
// its first answer. Guarded by Pool.mu.
type quality struct {
	full    float64 // fullness EWMA, 0..1
	samples int
	at      int64 // mono time of the last fullness sample
	cats    map[string]float64
	answer  map[string]int64 // engine -> mono time last seen answering
	susp    map[string]susp
}

type susp struct {
	reason string
	until  int64 // mono
}

// suspendFor is how long SearXNG suspends an engine for reason.
func suspendFor(reason string) time.Duration {
	r := strings.ToLower(reason)
	switch {
	case strings.Contains(r, "captcha"):
		return suspendCaptcha
	case strings.Contains(r, "access denied"):
		return suspendAccessDenied
	case strings.Contains(r, "too many requests"):
		return suspendTooMany
	}
	return suspendOther
}

// ReasonDirectory is the suspension reason of an engine the directory saw
// fail (SeedFailing); DirectorySuspension how long it is believed.
const (
	ReasonDirectory     = "failing on searx.space"
	DirectorySuspension = 24 * time.Hour
)

// SeedFailing takes, for each instance of failing, the engines the
// directory saw never answer there (its test searches of them found
// nothing) as suspended for DirectorySuspension, unless an answer already
// said how the engine does there. It moves no score: the directory says
// nothing of how full the answers are. Unknown URLs are ignored.
func (p *Pool) SeedFailing(failing map[string][]string) {
	nowM := p.mono(p.clock.Now())
	p.mu.Lock()
	defer p.mu.Unlock()
	for u, engines := range failing {
		if in := p.byURL[u]; in != nil {
			p.priorFailing(in, engines, nowM)
		}
	}
}

// priorFailing takes the directory's failing engines of in as suspended,
// unless an answer already said how the engine does there; mu must be
// held for writing.
func (p *Pool) priorFailing(in *instance, engines []string, nowM int64) {
	for _, e := range engines {
		q := in.q
		if q != nil {
			if _, seen := q.answer[e]; seen {
				continue
			}
			if _, known := q.susp[e]; known {
				continue
			}
		}
		if q == nil {
			q = &quality{full: 1, at: never}
			in.q = q
		}
		if len(q.susp) >= maxEngines {
			return
		}
		if q.susp == nil {
			q.susp = make(map[string]susp, len(engines))
		}
		q.susp[e] = susp{reason: ReasonDirectory, until: nowM + int64(DirectorySuspension)}
	}
}

// Suspends reports whether reason, as SearXNG lists an unresponsive
// engine, says the engine is suspended on the instance (its state, not
// the query's): "Suspended: ...", a CAPTCHA, too many requests, access
// denied.
func Suspends(reason string) bool {
	r := strings.ToLower(reason)
	if strings.HasPrefix(r, SuspendWords[0]) {
		return true
	}
	for _, w := range SuspendWords[1:] {
		if strings.Contains(r, w) {
			return true
		}
	}
	return false
}

// SuspendWords are the words, lower case, of the reasons Suspends reads
// as a suspension: "suspended" at the start, any other anywhere.
var SuspendWords = [...]string{"suspended", "captcha", "too many requests", "access denied"}

// Learn takes what one good answer of url says of its quality (see
// Answer) and ranks it anew. It moves no circuit: a suspended engine is
// the instance's state, not a failure. Unknown URLs are ignored.
func (p *Pool) Learn(url string, a Answer) {
	nowM := p.mono(p.clock.Now())
	p.mu.Lock()
	defer p.mu.Unlock()
	in := p.byURL[url]
	if in == nil {
		return
	}
	q := in.q
	if q == nil {
		q = &quality{full: 1, at: never}
		in.q = q
	}
	q.learnEngines(a, nowM)
	if a.Page > 0 {
		f := 1.0
		if hasSuspended(a.Suspended) {
			f = min(float64(max(a.Hits, 0))/float64(a.Page), 1)
		}
		cat := strings.ToLower(a.Category)
		if cat == "" || cat == "general" {
			if q.samples == 0 {
				q.full = f // the first answer replaces the guess, as a first latency does
			} else {
				q.full = q.decayed(nowM, p.cfg.QualityHalfLife)
				q.full += fullnessAlpha * (f - q.full)
			}
			q.samples++
			q.at = nowM
		} else if _, ok := q.cats[cat]; ok || len(q.cats) < maxCategories {
			if q.cats == nil {
				q.cats = make(map[string]float64, 1)
			}
			old, ok := q.cats[cat]
			if !ok {
				old = 1
			}
			q.cats[cat] = old + fullnessAlpha*(f-old)
		}
	}
	in.thinMS = p.thinPenalty(in, nowM)
	p.rescore(in)
}

func hasSuspended(pairs [][2]string) bool {
	return slices.ContainsFunc(pairs, func(e [2]string) bool { return Suspends(e[1]) })
}

// learnEngines remembers the engines that answered and those suspended.
func (q *quality) learnEngines(a Answer, nowM int64) {
	for _, e := range a.Engines {
		if e == "" {
			continue
		}
		delete(q.susp, e) // it answers: no longer suspended
		if _, ok := q.answer[e]; ok || len(q.answer) < maxEngines {
			if q.answer == nil {
				q.answer = make(map[string]int64, 4)
			}
			q.answer[e] = nowM
		}
	}
	for _, e := range a.Suspended {
		if e[0] == "" || !Suspends(e[1]) {
			continue
		}
		if _, ok := q.susp[e[0]]; ok || len(q.susp) < maxEngines {
			if q.susp == nil {
				q.susp = make(map[string]susp, 4)
			}
			q.susp[e[0]] = susp{reason: e[1], until: nowM + int64(suspendFor(e[1]))}
		}
	}
}

// decayed is the fullness at nowM: what thin answers taught fades with
// half-life h since the last sample.
func (q *quality) decayed(nowM int64, h time.Duration) float64 {
	if q == nil {
		return 1
	}
	if q.at == never || h <= 0 || nowM <= q.at {
		return q.full
	}
	k := math.Exp2(-float64(nowM-q.at) / float64(h))
	return 1 - (1-q.full)*k
}

// thinPenalty is the score's thin term in ms at nowM (doc.go, "Ranking"):
// ThinCost * min(1, (1 - fullness) / HalfPage).
func (p *Pool) thinPenalty(in *instance, nowM int64) float64 {
	if in.q == nil {
		return 0
	}
	return durMS(p.cfg.ThinCost) * min(1, (1-in.q.decayed(nowM, p.cfg.QualityHalfLife))/HalfPage)
}

// HalfPage is the fullness at and under which an answer is worth no more
// than none in the score: it costs the whole ThinCost.
const HalfPage = 0.5

// suspendedAt reports whether engine is suspended on q at nowM.
func (q *quality) suspendedAt(engine string, nowM int64) bool {
	if q == nil {
		return false
	}
	s, ok := q.susp[engine]
	return ok && nowM < s.until
}

// Lacking returns the instances that cannot answer a search that names
// engines or a category as well as others: one of the engines is
// suspended there now, or its answers in that category were thin
// (fullness under ThinBelow). A caller tries the others first. It
// returns nil when no instance lacks anything.
func (p *Pool) Lacking(engines []string, category string) map[string]bool {
	nowM := p.mono(p.clock.Now())
	category = strings.ToLower(category)
	p.mu.RLock()
	defer p.mu.RUnlock()
	var out map[string]bool
	for _, in := range p.list {
		q := in.q
		if q == nil {
			continue
		}
		lacks := slices.ContainsFunc(engines, func(e string) bool { return q.suspendedAt(e, nowM) })
		if f, ok := q.cats[category]; ok && category != "" && f < ThinBelow {
			lacks = true
		}
		if lacks {
			if out == nil {
				out = make(map[string]bool)
			}
			out[in.url] = true
		}
	}
	return out
}

// ThinBelow is the fullness under which an instance's answers are
// expected thin (Stats.Thin, Thin, Lacking).
const ThinBelow = 0.8

// Thin returns the instances whose answers are expected thin now
// (fullness under ThinBelow), for a search that wants a fuller answer
// than the one it holds; nil when none.
func (p *Pool) Thin() map[string]bool {
	nowM := p.mono(p.clock.Now())
	p.mu.RLock()
	defer p.mu.RUnlock()
	var out map[string]bool
	for _, in := range p.list {
		if in.q != nil && in.q.decayed(nowM, p.cfg.QualityHalfLife) < ThinBelow {
			if out == nil {
				out = make(map[string]bool)
			}
			out[in.url] = true
		}
	}
	return out
}

// Unproven returns the instances no answer has measured the fullness of
// yet; nil when none.
func (p *Pool) Unproven() map[string]bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	var out map[string]bool
	for _, in := range p.list {
		if in.q == nil || in.q.samples == 0 {
			if out == nil {
				out = make(map[string]bool)
			}
			out[in.url] = true
		}
	}
	return out
}

// qualityState is q as Stats and Export show it at nowM.
func (p *Pool) qualityState(q *quality, nowM int64) QualityState {
	if q == nil {
		return QualityState{Fullness: 1}
	}
	st := QualityState{Fullness: q.decayed(nowM, p.cfg.QualityHalfLife), Samples: q.samples, At: p.wall(q.at)}
	if len(q.cats) > 0 {
		st.Categories = make(map[string]float64, len(q.cats))
		for c, f := range q.cats {
			st.Categories[c] = f
		}
	}
	for e, at := range q.answer {
		st.Answering = append(st.Answering, EngineSeen{Engine: e, At: p.wall(at)})
	}
	slices.SortFunc(st.Answering, func(a, b EngineSeen) int { return strings.Compare(a.Engine, b.Engine) })
	for e, s := range q.susp {
		if nowM < s.until {
			st.Suspended = append(st.Suspended, Suspension{Engine: e, Reason: s.reason, Until: p.wall(s.until)})
		}
	}
	slices.SortFunc(st.Suspended, func(a, b Suspension) int { return strings.Compare(a.Engine, b.Engine) })
	return st
}

// restoreQuality sets in's quality from an exported state; mu must be
// held for writing.
func (p *Pool) restoreQuality(in *instance, st *QualityState, nowM int64) {
	in.q = nil
	if st == nil {
		return
	}
	q := &quality{full: 1, at: never}
	if finite(st.Fullness) {
		q.full = min(max(st.Fullness, 0), 1)
	}
	q.samples = max(st.Samples, 0)
	if !st.At.IsZero() {
		q.at = min(p.mono(st.At), nowM)
	}
	for c, f := range st.Categories {
		if finite(f) && c != "" && len(q.cats) < maxCategories {
			if q.cats == nil {
				q.cats = make(map[string]float64, len(st.Categories))
			}
			q.cats[c] = min(max(f, 0), 1)
		}
	}
	for _, e := range st.Answering {
		if e.Engine != "" && len(q.answer) < maxEngines {
			if q.answer == nil {
				q.answer = make(map[string]int64, len(st.Answering))
			}
			q.answer[e.Engine] = min(p.mono(e.At), nowM)
		}
	}
	for _, s := range st.Suspended {
		until := p.mono(s.Until)
		if s.Engine == "" || until <= nowM || len(q.susp) >= maxEngines {
			continue
		}
		if q.susp == nil {
			q.susp = make(map[string]susp, len(st.Suspended))
		}
		q.susp[s.Engine] = susp{reason: s.Reason, until: min(until, nowM+int64(suspendCaptcha))}
	}
	in.q = q
	in.thinMS = p.thinPenalty(in, nowM)
}
