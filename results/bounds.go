package results

import (
	"encoding/json"
	"unicode/utf8"
)

// Bounds on one answer, applied where it is read (detect's ParseJSON and
// ParseHTML) and where answers are merged (Merge), so that whatever an
// instance sends, the Page searxgate caches and writes in any format stays
// small: SearXNG sends tens of results of a few hundred bytes each.
const (
	// MaxResults caps the results kept per answer; the first ones are
	// kept, the rest dropped and counted (Page.Dropped).
	MaxResults = 100
	// MaxAnswerBytes caps the bytes of text and links one answer keeps in
	// all, as written: a byte JSON or HTML escapes (control characters,
	// quotes, backslash, <, > and &) counts six, a result's URL twice
	// (parsed_url repeats it), unknown fields as written. Results are
	// counted first, in order, then answers, corrections, suggestions,
	// infoboxes and unresponsive engines; whatever would pass the cap is
	// dropped (results counted in Page.Dropped). An answer written in
	// any format is then about this size at most, plus the markup of each
	// result.
	MaxAnswerBytes = 512 << 10
	// MaxFieldBytes caps every text: a result's or an infobox's title and
	// content, an answer, a suggestion, an engine's name... A longer text
	// is cut on a rune boundary. (An instance echoes the query in titles
	// and contents: searxgate asks up to 16 KiB, proxy.MaxQueryLen.)
	MaxFieldBytes = 16 << 10
	// MaxURLBytes caps a link: a result whose URL is longer is dropped, a
	// longer thumbnail, img_src, iframe_src or infobox link is blanked
	// (a cut link would lead elsewhere).
	MaxURLBytes = 16 << 10
	// MaxListItems caps the answers, corrections and suggestions, an
	// infobox's links and attributes, and a result's or infobox's engines
	// and positions; MaxInfoboxes the infoboxes; MaxUnresponsive the
	// unresponsive engines.
	MaxListItems    = 32
	MaxInfoboxes    = 8
	MaxUnresponsive = 128
	// maxQueryBytes caps the echoed query (searxgate asks at most
	// proxy.MaxQueryLen, 16 KiB: a longer echo is not the query asked).
	maxQueryBytes = 16 << 10
)

// clip cuts s to at most n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// clipAll clips every string of v to n bytes.
func clipAll(v []string, n int) {
	for i, s := range v {
		v[i] = clip(s, n)
	}
}

// firstN is v cut to its first n items.
func firstN[T any](v []T, n int) []T {
	if len(v) <= n {
		return v
	}
	clear(v[n:])
	return v[:n:n]
}

// clipLink is u when it is at most MaxURLBytes long, else "".
func clipLink(u string) string {
	if len(u) > MaxURLBytes {
		return ""
	}
	return u
}

// ExtraSize is what extra fields take as written.
func ExtraSize(m map[string]json.RawMessage) int {
	n := 0
	for k, v := range m {
		n += len(k) + len(v) + 4
	}
	return n
}

// escapeCost is what a byte adds to its text's size when JSON or HTML
// escapes it (at most six bytes written for one).
var escapeCost = func() (t [256]uint8) {
	for c := range 0x20 {
		t[c] = 5
	}
	for _, c := range `"\'<>&` {
		t[c] = 5
	}
	return t
}()

// worstSize is the most s can take as written: every byte escaped.
func worstSize(s string) int { return 6 * len(s) }

// size is s's length as written, escapes counted.
func size(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		n += int(escapeCost[s[i]])
	}
	return n
}

func strsSize(v []string, size func(string) int) int {
	n := 0
	for _, s := range v {
		n += size(s) + 3
	}
	return n
}

// clipResult applies the field bounds to one result; ok is false when
// its URL is too long.
func clipResult(x *Result) bool {
	if len(x.URL) > MaxURLBytes {
		return false
	}
	x.Title = clip(x.Title, MaxFieldBytes)
	x.Content = clip(x.Content, MaxFieldBytes)
	x.Engine = clip(x.Engine, MaxFieldBytes)
	x.Engines = firstN(x.Engines, MaxListItems)
	clipAll(x.Engines, MaxFieldBytes)
	x.Positions = firstN(x.Positions, MaxListItems)
	x.Category = clip(x.Category, MaxFieldBytes)
	x.Template = clip(x.Template, MaxFieldBytes)
	x.PublishedDate = clip(x.PublishedDate, MaxFieldBytes)
	x.Thumbnail = clipLink(x.Thumbnail)
	x.ImgSrc = clipLink(x.ImgSrc)
	x.IframeSrc = clipLink(x.IframeSrc)
	return true
}

// resultSize is about what x takes written as JSON, its texts measured
// by size (escapes counted, or worstSize).
func resultSize(x *Result, size func(string) int) int {
	return 64 + 2*size(x.URL) + size(x.Title) + size(x.Content) + size(x.Engine) + strsSize(x.Engines, size) +
		4*len(x.Positions) + size(x.Category) + size(x.Template) + size(x.PublishedDate) +
		size(x.Thumbnail) + size(x.ImgSrc) + size(x.IframeSrc) + ExtraSize(x.Extra)
}

// clipAnswer applies the field bounds to one answer: a link too long is
// blanked.
func clipAnswer(a *Answer) {
	a.Answer = clip(a.Answer, MaxFieldBytes)
	a.URL = clipLink(a.URL)
	a.Engine = clip(a.Engine, MaxFieldBytes)
	a.Template = clip(a.Template, MaxFieldBytes)
}

func clipInfobox(b *Infobox) {
	b.Infobox = clip(b.Infobox, MaxFieldBytes)
	b.ID = clip(b.ID, MaxFieldBytes)
	b.Content = clip(b.Content, MaxFieldBytes)
	b.ImgSrc = clipLink(b.ImgSrc)
	b.Engine = clip(b.Engine, MaxFieldBytes)
	b.Engines = firstN(b.Engines, MaxListItems)
	clipAll(b.Engines, MaxFieldBytes)
	urls := b.URLs[:0]
	for _, u := range b.URLs {
		if len(u.URL) <= MaxURLBytes {
			u.Title = clip(u.Title, MaxFieldBytes)
			urls = append(urls, u)
		}
	}
	clear(b.URLs[len(urls):])
	if len(urls) == 0 {
		urls = nil
	}
	b.URLs = firstN(urls, MaxListItems)
	b.Attributes = firstN(b.Attributes, MaxListItems)
	for i := range b.Attributes {
		a := &b.Attributes[i]
		a.Label, a.Value = clip(a.Label, MaxFieldBytes), clip(a.Value, MaxFieldBytes)
	}
}

func infoboxSize(b *Infobox, size func(string) int) int {
	n := 96 + size(b.Infobox) + size(b.ID) + size(b.Content) + size(b.ImgSrc) + size(b.Engine) +
		strsSize(b.Engines, size) + ExtraSize(b.Extra)
	for _, u := range b.URLs {
		n += 32 + size(u.Title) + size(u.URL) + ExtraSize(u.Extra)
	}
	for _, a := range b.Attributes {
		n += 32 + size(a.Label) + size(a.Value) + ExtraSize(a.Extra)
	}
	return n
}

// keepStrings keeps the first strings of v that fit in *budget.
func keepStrings(v []string, budget *int) []string {
	for i, s := range v {
		if *budget -= size(s) + 3; *budget < 0 {
			return firstN(v, i)
		}
	}
	return v
}

// Bound applies the bounds (see MaxResults) to r, whose links were
// already judged: fields are clipped, lists cut, and what passes
// MaxAnswerBytes dropped. Results dropped are added to r.Dropped.
func (r *Page) Bound() {
	r.Query = clip(r.Query, maxQueryBytes)
	// An answer that could not pass MaxAnswerBytes even with every byte
	// escaped (every real one) is not measured byte by byte.
	exact := r.answerSize(worstSize) > MaxAnswerBytes
	budget := MaxAnswerBytes
	kept := r.Results[:0]
	for i := range r.Results {
		x := &r.Results[i]
		if len(kept) == MaxResults {
			r.Dropped += len(r.Results) - i
			break
		}
		if !clipResult(x) {
			r.Dropped++
			continue
		}
		if exact {
			if budget -= resultSize(x, size); budget < 0 {
				r.Dropped += len(r.Results) - i
				break
			}
		}
		kept = append(kept, *x)
	}
	clear(r.Results[len(kept):])
	r.Results = kept
	budget = max(budget, 0)
	r.Answers = firstN(r.Answers, MaxListItems)
	for i := range r.Answers {
		clipAnswer(&r.Answers[i])
		if exact {
			if budget -= answerObjSize(&r.Answers[i], size); budget < 0 {
				r.Answers = firstN(r.Answers, i)
				budget = 0
				break
			}
		}
	}
	for _, list := range []*[]string{&r.Corrections, &r.Suggestions} {
		*list = firstN(*list, MaxListItems)
		clipAll(*list, MaxFieldBytes)
		if exact {
			*list = keepStrings(*list, &budget)
		}
	}
	r.Infoboxes = firstN(r.Infoboxes, MaxInfoboxes)
	for i := range r.Infoboxes {
		clipInfobox(&r.Infoboxes[i])
		if !exact {
			continue
		}
		if budget -= infoboxSize(&r.Infoboxes[i], size); budget < 0 {
			r.Infoboxes = firstN(r.Infoboxes, i)
			break
		}
	}
	r.UnresponsiveEngines = firstN(r.UnresponsiveEngines, MaxUnresponsive)
	for i := range r.UnresponsiveEngines {
		e := &r.UnresponsiveEngines[i]
		e[0], e[1] = clip(e[0], MaxFieldBytes), clip(e[1], MaxFieldBytes)
		if !exact {
			continue
		}
		if budget -= 8 + size(e[0]) + size(e[1]); budget < 0 {
			r.UnresponsiveEngines = firstN(r.UnresponsiveEngines, i)
			break
		}
	}
}

// answerSize is what r takes as written, its texts measured by size.
func (r *Page) answerSize(size func(string) int) int {
	n := 0
	for i := range r.Results {
		n += resultSize(&r.Results[i], size)
	}
	for i := range r.Answers {
		n += answerObjSize(&r.Answers[i], size)
	}
	n += strsSize(r.Corrections, size) + strsSize(r.Suggestions, size)
	for i := range r.Infoboxes {
		n += infoboxSize(&r.Infoboxes[i], size)
	}
	for _, e := range r.UnresponsiveEngines {
		n += 8 + size(e[0]) + size(e[1])
	}
	return n
}
