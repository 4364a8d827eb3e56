package sim

import (
	"slices"
	"strings"
)

// What a Thin or a Partial instance's engines are, and how SearXNG 2026
// lists the suspended ones (shared/fixtures/searxng-2026/
// json-search-engine-suspended.txt and html-search-engine-suspended.txt).
var (
	thinEngines    = []string{"google", "bing", "duckduckgo", "wikipedia"}
	thinSuspended  = [][2]string{{"google", "Suspended: CAPTCHA"}, {"bing", "Suspended: too many requests"}, {"duckduckgo", "Suspended: access denied"}}
	partialDown    = [2]string{"google", "Suspended: CAPTCHA"}
	thinAnswering  = "wikipedia"
	defaultCatList = []string{"general"}
)

// engineListOf is the engine list of an instance of behaviour b whose
// drawn list is drawn: Thin has the big three and wikipedia, Partial has
// google first and then three others, the drawn ones first; the others
// keep theirs.
func engineListOf(b Behaviour, drawn []string) []string {
	switch b {
	case Thin:
		return slices.Clone(thinEngines)
	case Partial:
		// Four engines, google one of them: its share is a fourth.
		out := []string{partialDown[0]}
		for _, e := range append(slices.Clone(drawn), enginePool...) {
			if len(out) < 4 && !slices.Contains(out, e) {
				out = append(out, e)
			}
		}
		return out
	}
	return drawn
}

// suspend applies an instance's suspended engines to p, a page of
// results built from its whole engine list: Thin keeps only the results
// of its one answering engine and lists the big ones suspended; Partial
// drops google's share (7 results of 10) and lists google suspended. Pages of other
// behaviours are left as they are.
func suspend(b Behaviour, p *page) {
	switch b {
	case Thin:
		p.Unresponsive = append(p.Unresponsive, thinSuspended...)
		for i := range p.Results {
			r := &p.Results[i]
			r.Content = strings.TrimSuffix(r.Content, " through "+r.Engine+".") + " through " + thinAnswering + "."
			r.Engine, r.Engines = thinAnswering, []string{thinAnswering}
		}
	case Partial:
		p.Unresponsive = append(p.Unresponsive, partialDown)
		kept := p.Results[:0]
		for _, r := range p.Results {
			if r.Engine == partialDown[0] {
				continue
			}
			r.Engines = slices.DeleteFunc(r.Engines, func(e string) bool { return e == partialDown[0] })
			r.Position = len(kept) + 1
			kept = append(kept, r)
		}
		p.Results = kept
	}
}

// categories is what /config lists as the instance's categories: its
// own when it names them, else general (and, for the demo's rich fleet,
// every category it answers apart).
func (s *site) categories() []string {
	switch {
	case len(s.Categories) > 0:
		return s.Categories
	case s.Rich:
		return richCategories
	}
	return defaultCatList
}

// richCategories are the categories the demo's rich fleet lists.
var richCategories = []string{"general", "images", "news", "videos", "it", "science"}

// lacksCategories reports whether the search asks only for categories
// the instance has no engine for (never when it names none, or when the
// instance says nothing of its categories).
func (in *Instance) lacksCategories(s search) bool {
	asked := s.params["categories"]
	if len(in.cfg.Categories) == 0 || strings.TrimSpace(asked) == "" {
		return false
	}
	for c := range strings.SplitSeq(asked, ",") {
		if slices.Contains(in.cfg.Categories, strings.TrimSpace(c)) {
			return false
		}
	}
	return true
}
