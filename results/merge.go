package results

import (
	"net/url"
	"slices"
	"sort"
	"strings"
)

// Merge unites the answers of several instances to one search the way
// SearXNG unites its engines' results (searx/results.py):
//
//   - results are the same when their normalised URLs are (SameURLKey: the
//     scheme, a leading "www.", a trailing slash, the fragment and
//     tracking parameters do not count); the first seen keeps its URL, the
//     longer title and content win, engines are united and the positions
//     of every source kept;
//   - each result's score is SearXNG's for one weight: the number of
//     positions times the sum of 1/position over them, so a result that
//     several instances ranked high rises;
//   - results are ranked by score, highest first; equal scores keep the
//     order in which they were first seen (the answers in the order given,
//     each answer's results in its own order);
//   - answers, corrections, suggestions and unresponsive engines are
//     united without duplicates, infoboxes by id (else title);
//   - number_of_results is the largest any answer gave.
//
// The query is the first answer's. Merge does not modify its arguments;
// nil answers are skipped. With one answer it returns a copy of it with
// the same ranking rule applied.
func Merge(answers ...*Page) *Page {
	out := &Page{}
	type slot struct {
		r     Result
		first int // order of first sight
	}
	byKey := make(map[string]*slot)
	var order []*slot
	seenAnswer, seenCorr, seenSugg := map[string]bool{}, map[string]bool{}, map[string]bool{}
	seenEngine := map[[2]string]bool{}
	seenBox := map[string]int{}
	for _, a := range answers {
		if a == nil {
			continue
		}
		if out.Query == "" {
			out.Query = a.Query
		}
		out.NumberOfResults = max(out.NumberOfResults, a.NumberOfResults)
		for _, r := range a.Results {
			k := SameURLKey(r.URL)
			if s, ok := byKey[k]; ok {
				mergeResult(&s.r, &r)
				continue
			}
			s := &slot{r: cloneResult(r), first: len(order)}
			byKey[k] = s
			order = append(order, s)
		}
		for i := range a.Answers {
			if k := strings.TrimSpace(sameAnswer(&a.Answers[i])); k != "" && !seenAnswer[k] {
				seenAnswer[k] = true
				out.Answers = append(out.Answers, a.Answers[i])
			}
		}
		out.Corrections = appendNew(out.Corrections, seenCorr, a.Corrections)
		out.Suggestions = appendNew(out.Suggestions, seenSugg, a.Suggestions)
		for _, e := range a.UnresponsiveEngines {
			if !seenEngine[e] {
				seenEngine[e] = true
				out.UnresponsiveEngines = append(out.UnresponsiveEngines, e)
			}
		}
		for _, b := range a.Infoboxes {
			id := b.ID
			if id == "" {
				id = "title:" + strings.ToLower(b.Infobox)
			}
			if i, ok := seenBox[id]; ok {
				if len(b.Content) > len(out.Infoboxes[i].Content) {
					out.Infoboxes[i].Content = b.Content
				}
				out.Infoboxes[i].Engines = unite(out.Infoboxes[i].Engines, b.Engines)
				continue
			}
			seenBox[id] = len(out.Infoboxes)
			b.Engines = slices.Clone(b.Engines)
			out.Infoboxes = append(out.Infoboxes, b)
		}
	}
	for _, s := range order {
		s.r.Score = score(s.r.Positions)
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].r.Score > order[j].r.Score })
	out.Results = make([]Result, len(order))
	for i, s := range order {
		out.Results[i] = s.r
	}
	out.Bound()
	return out
}

// score is SearXNG's score of a result with weight 1: len(positions)
// times the sum of 1/position.
func score(positions []int) float64 {
	s := 0.0
	for _, p := range positions {
		if p > 0 {
			s += 1 / float64(p)
		}
	}
	return s * float64(len(positions))
}

func cloneResult(r Result) Result {
	r.Engines = slices.Clone(r.Engines)
	r.Positions = slices.Clone(r.Positions)
	r.ParsedURL = slices.Clone(r.ParsedURL)
	return r
}

// mergeResult folds b, the same result from another answer, into a.
func mergeResult(a, b *Result) {
	if len(b.Content) > len(a.Content) {
		a.Content = b.Content
	}
	if len(b.Title) > len(a.Title) {
		a.Title = b.Title
	}
	a.Engines = unite(a.Engines, b.Engines)
	if a.Engine == "" {
		a.Engine = b.Engine
	}
	a.Positions = append(a.Positions, b.Positions...)
	if a.Thumbnail == "" {
		a.Thumbnail = b.Thumbnail
	}
	if a.ImgSrc == "" {
		a.ImgSrc = b.ImgSrc
	}
	if a.PublishedDate == "" {
		a.PublishedDate = b.PublishedDate
	}
}

func unite(a, b []string) []string {
	for _, s := range b {
		if !slices.Contains(a, s) {
			a = append(a, s)
		}
	}
	return a
}

func appendNew(dst []string, seen map[string]bool, src []string) []string {
	for _, s := range src {
		k := strings.TrimSpace(s)
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		dst = append(dst, s)
	}
	return dst
}

// trackingParams are query parameters that say where a click came from,
// not what the page is.
var trackingParams = map[string]bool{
	"fbclid": true, "gclid": true, "dclid": true, "msclkid": true, "yclid": true, "mc_cid": true, "mc_eid": true,
	"igshid": true, "ref_src": true, "_hsenc": true, "_hsmi": true, "mkt_tok": true, "oly_anon_id": true, "oly_enc_id": true,
	"vero_id": true, "wickedid": true, "rb_clickid": true, "s_cid": true, "srsltid": true,
}

// SameURLKey normalises a result URL for telling duplicates apart: the
// host lower-cased without a leading "www." or a default port, the path
// without a trailing slash, the query without tracking parameters (utm_*
// and the like) and sorted, no scheme, no fragment. A URL that does not
// parse is its own key.
func SameURLKey(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	host := strings.ToLower(u.Hostname())
	host = strings.TrimPrefix(host, "www.")
	if p := u.Port(); p != "" && p != "80" && p != "443" {
		host += ":" + p
	}
	path := strings.TrimRight(u.EscapedPath(), "/")
	q := u.Query()
	for k := range q {
		if strings.HasPrefix(strings.ToLower(k), "utm_") || trackingParams[strings.ToLower(k)] {
			q.Del(k)
		}
	}
	key := host + path
	if enc := q.Encode(); enc != "" { // Encode sorts by key
		key += "?" + enc
	}
	return key
}
