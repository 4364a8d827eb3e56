package detect

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/searxgate/searxgate/results"
	"github.com/tidwall/gjson"
)

// Sentinel errors of the parsers; the returned errors wrap them with a
// detail.
var (
	// ErrNotJSON: the body is not a SearXNG JSON search answer.
	ErrNotJSON = errors.New("detect: not a SearXNG JSON answer")
	// ErrNotResultsPage: the body is not a SearXNG HTML results page.
	ErrNotResultsPage = errors.New("detect: not a SearXNG results page")
	// ErrNotConfig: the body is not a SearXNG /config answer.
	ErrNotConfig = errors.New("detect: not a SearXNG /config answer")
)

// ParseJSON reads a SearXNG JSON search answer, in the classic shape or the
// newer one (answers as objects, number_of_results absent, fields missing
// rather than empty). What it reads is sanitised: results whose URL is not
// http(s) are dropped, other URL fields that are not are blanked,
// parsed_url is rebuilt from url, bidirectional controls are stripped
// from every text, and unknown fields are kept only within MaxExtraDepth,
// MaxExtraBytes and MaxExtraKeys. An answer nested deeper than 64 levels
// is not read. The Page shares no memory with body.
func ParseJSON(body []byte) (*results.Page, error) {
	if tooDeep(body, maxJSONDepth) {
		return nil, fmt.Errorf("%w: nested deeper than %d", ErrNotJSON, maxJSONDepth)
	}
	// One copy of the body; every string read below points into it or is
	// freshly allocated, never into the caller's buffer. It is read once
	// (jsonScan), checked as it is read.
	sc := newScan(string(body))
	if sc.peek() != '{' {
		sc.skip()
		if sc.end(); !sc.ok {
			return nil, fmt.Errorf("%w: invalid JSON", ErrNotJSON)
		}
		return nil, fmt.Errorf("%w: not an object", ErrNotJSON)
	}
	var r results.Page
	seen := false
	var err error
	sc.object(func(key string) {
		if err != nil {
			sc.skip() // what follows is still checked: invalid JSON is said first
			return
		}
		if key == "results" {
			seen = true
			err = readResults(sc, &r)
			return
		}
		v := sc.value()
		switch key {
		case "query":
			seen = true
			r.Query = text(v)
		case "number_of_results":
			if v.Type == gjson.Number && !math.IsNaN(v.Num) {
				r.NumberOfResults = v.Int()
			}
		default:
			readTopLevel(&r, key, v)
		}
	})
	if sc.end(); !sc.ok {
		return nil, fmt.Errorf("%w: invalid JSON", ErrNotJSON)
	}
	if err != nil {
		return nil, err
	}
	if !seen {
		return nil, fmt.Errorf("%w: neither query nor results", ErrNotJSON)
	}
	sanitize(&r)
	return &r, nil
}

// readResults reads the results list the scan is on into r.Results
// (replacing any an earlier "results" member gave).
// firstResults is the room an answer's results are read into first: as
// many as fit in 4 KiB with the 8-byte header Go puts before an object
// with pointers (15 or so: SearXNG sends 10 to 30 a page), one of the
// allocator's size classes, so that a field added to Result does not move
// the allocation up a class (16 of 256 bytes took 4,864).
const firstResults = (4096 - 8) / int(unsafe.Sizeof(results.Result{}))

func readResults(sc *jsonScan, r *results.Page) error {
	if sc.peek() != '[' {
		sc.skip()
		return fmt.Errorf("%w: results is not a list", ErrNotJSON)
	}
	r.Results = make([]results.Result, 0, firstResults)
	// The results' engine lists share one backing array (each capped at
	// its own length, so that an append to one copies it): two engines a
	// result made two allocations each.
	strs := make([]string, 0, 64)
	sc.array(func() {
		if sc.peek() != '{' {
			sc.skip() // not an object: not a result
			return
		}
		if len(r.Results) == maxReadResults {
			sc.skip() // past what bound keeps: checked, not kept
			r.Dropped++
			return
		}
		var x results.Result
		sc.object(func(key string) { resultField(&x, key, sc.value(), &strs) })
		// Its URL is judged by sanitize, with parsed_url made in one parse.
		r.Results = append(r.Results, x)
	})
	return nil
}

// readTopLevel reads the top-level member key other than query,
// number_of_results and results.
func readTopLevel(r *results.Page, key string, v gjson.Result) {
	switch key {
	case "answers":
		r.Answers = readAnswers(v)
	case "corrections":
		r.Corrections = readTexts(v)
	case "suggestions":
		r.Suggestions = readTexts(v)
	case "infoboxes":
		v.ForEach(func(_, item gjson.Result) bool {
			if item.IsObject() {
				r.Infoboxes = append(r.Infoboxes, readInfobox(item))
			}
			return true
		})
	case "unresponsive_engines":
		r.UnresponsiveEngines = readUnresponsive(v)
	}
}

// readUnresponsive reads unresponsive_engines: [engine, reason] pairs, or
// bare engine names.
func readUnresponsive(v gjson.Result) [][2]string {
	var out [][2]string
	v.ForEach(func(_, item gjson.Result) bool {
		var e [2]string
		if item.IsArray() {
			i := 0
			item.ForEach(func(_, f gjson.Result) bool {
				e[i] = text(f)
				i++
				return i < 2
			})
		} else {
			e[0] = text(item)
		}
		if e[0] != "" {
			out = append(out, e)
		}
		return true
	})
	return out
}

// text returns a JSON string's value, a number's or boolean's literal
// text, and "" for null, objects and arrays.
func text(v gjson.Result) string {
	switch v.Type {
	case gjson.String:
		return v.Str
	case gjson.Number, gjson.True, gjson.False:
		return v.Raw
	}
	return ""
}

// resultField reads the member key of a result object into x: a known
// field of the wrong type, and any unknown field, is kept cleaned in
// x.Extra (putExtra). Lists of strings are appended to *strs.
func resultField(x *results.Result, key string, f gjson.Result, strs *[]string) {
	typed := true
	switch key {
	case "url":
		typed = f.Type == gjson.String
		x.URL = f.Str
	case "title":
		typed = isStringOrNull(f)
		x.Title = f.Str
	case "content":
		typed = isStringOrNull(f)
		x.Content = f.Str
	case "engine":
		typed = isStringOrNull(f)
		x.Engine = f.Str
	case "category":
		typed = isStringOrNull(f)
		x.Category = f.Str
	case "template":
		typed = isStringOrNull(f)
		x.Template = f.Str
	case "publishedDate":
		typed = isStringOrNull(f)
		x.PublishedDate = f.Str
		if f.Str == "" {
			x.MarkEmpty(results.HasPublishedDate) // written back empty, as it came
		}
	case "thumbnail":
		typed = isStringOrNull(f)
		x.Thumbnail = f.Str
		if f.Str == "" {
			x.MarkEmpty(results.HasThumbnail) // written back empty, as it came
		}
	case "img_src":
		typed = isStringOrNull(f)
		x.ImgSrc = f.Str
		if f.Str == "" {
			x.MarkEmpty(results.HasImgSrc) // written back empty, as it came
		}
	case "iframe_src":
		typed = isStringOrNull(f)
		x.IframeSrc = f.Str
	case "score":
		typed = f.Type == gjson.Number || f.Type == gjson.Null
		x.Score = f.Num
	case "engines":
		x.Engines, typed = readStringsInto(f, strs)
	case "parsed_url":
		// never trusted: rebuilt from url (sanitize)
	case "positions":
		x.Positions, typed = readInts(f)
	default:
		typed = false
	}
	if !typed {
		putExtra(&x.Extra, key, f)
	}
}

func isStringOrNull(v gjson.Result) bool {
	return v.Type == gjson.String || v.Type == gjson.Null
}

// readStrings reads a list of strings; ok is false when v is anything
// else. Null and an empty list read as nil (written back as []).
func readStrings(v gjson.Result) (out []string, ok bool) {
	var strs []string
	return readStringsInto(v, &strs)
}

// readStringsInto is readStrings appending to *strs: the list it returns
// is a piece of it, capped at its length.
func readStringsInto(v gjson.Result, strs *[]string) (out []string, ok bool) {
	if v.Type == gjson.Null {
		return nil, true
	}
	if !v.IsArray() {
		return nil, false
	}
	ok = true
	start := len(*strs)
	v.ForEach(func(_, e gjson.Result) bool {
		if e.Type != gjson.String {
			ok = false
			return false
		}
		*strs = append(*strs, e.Str)
		return true
	})
	all := *strs
	if !ok {
		clear(all[start:])
		*strs = all[:start]
		return nil, false
	}
	if len(all) == start {
		return nil, true
	}
	return all[start:len(all):len(all)], true
}

// readInts reads a list of integers; ok is false when v is anything else.
// Null and an empty list read as nil (written back as []).
func readInts(v gjson.Result) (out []int, ok bool) {
	if v.Type == gjson.Null {
		return nil, true
	}
	if !v.IsArray() {
		return nil, false
	}
	ok = true
	v.ForEach(func(_, e gjson.Result) bool {
		if e.Type != gjson.Number || e.Num != math.Trunc(e.Num) || math.Abs(e.Num) > 1<<31 {
			ok = false
			return false
		}
		out = append(out, int(e.Num))
		return true
	})
	if !ok {
		return nil, false
	}
	return out, true
}

// readTexts reads a list of strings, or of objects with a title or url
// (newer SearXNG's corrections and suggestions), skipping anything else.
func readTexts(v gjson.Result) []string {
	var out []string
	v.ForEach(func(_, e gjson.Result) bool {
		var s string
		switch {
		case e.Type == gjson.String:
			s = e.Str
		case e.IsObject():
			s = e.Get("title").Str
			if s == "" {
				s = e.Get("url").Str
			}
		}
		if s != "" {
			out = append(out, s)
		}
		return true
	})
	return out
}

// readAnswers reads answers as strings (classic) or objects (newer
// SearXNG: answer, url, engine, template, and a typed answer's content,
// kept in Extra within the answers' larger bounds, MaxAnswerExtraBytes).
// An answer whose link is not http(s) keeps its text, not the link; one
// with neither text nor content is dropped.
func readAnswers(v gjson.Result) []results.Answer {
	var out []results.Answer
	v.ForEach(func(_, e gjson.Result) bool {
		var a results.Answer
		switch {
		case e.Type == gjson.String:
			a.Answer = e.Str
		case e.IsObject():
			e.ForEach(func(k, f gjson.Result) bool {
				answerField(&a, k.Str, f)
				return true
			})
		}
		a.Template = cmp.Or(a.Template, results.LegacyAnswer)
		if a.Answer != "" || (a.IsTyped() && len(a.Extra) > 0) {
			out = append(out, a)
		}
		return true
	})
	return out
}

// answerField reads the member key of an answer object into a: a known
// field of the wrong type, and any unknown one, goes to a.Extra.
func answerField(a *results.Answer, key string, f gjson.Result) {
	typed := isStringOrNull(f)
	switch key {
	case "answer":
		a.Answer = f.Str
	case "url":
		if httpURL(f.Str) {
			a.URL = f.Str
		}
	case "engine":
		a.Engine = f.Str
	case "template":
		a.Template = f.Str
	case "parsed_url":
		return // rebuilt from url
	default:
		typed = false
	}
	if !typed {
		putExtraWithin(&a.Extra, key, f, MaxAnswerExtraBytes, MaxAnswerExtraBytes)
	}
}

// readInfobox reads one infobox object.
func readInfobox(v gjson.Result) results.Infobox {
	var b results.Infobox
	parsed := false
	v.ForEach(func(k, f gjson.Result) bool {
		key := k.Str
		typed := true
		switch key {
		case "infobox":
			typed = isStringOrNull(f)
			b.Infobox = f.Str
		case "id":
			typed = isStringOrNull(f)
			b.ID = f.Str
		case "content":
			typed = isStringOrNull(f)
			b.Content = f.Str
		case "img_src":
			typed = isStringOrNull(f)
			b.ImgSrc = f.Str
		case "engine":
			typed = isStringOrNull(f)
			b.Engine = f.Str
		case "engines":
			b.Engines, typed = readStrings(f)
		case "urls":
			b.URLs, typed = readInfoboxURLs(f)
		case "attributes":
			b.Attributes, typed = readInfoboxAttributes(f)
		default:
			typed = false
		}
		// Links that are not a list of link objects are not passed on in
		// another shape.
		if !typed && key != "urls" {
			putExtra(&b.Extra, key, f)
		}
		parsed = parsed || key == "parsed_url"
		return true
	})
	if parsed {
		// Newer SearXNG gives an infobox a result's fields, parsed_url
		// among them: rebuilt from its url, as a result's is.
		b.Extra = infoboxParsedURL(b.Extra)
	}
	return b
}

// infoboxParsedURL adds parsed_url to an infobox's extra fields: null
// without a url (as SearXNG writes it), else the url's tuple.
func infoboxParsedURL(extra map[string]json.RawMessage) map[string]json.RawMessage {
	var u string
	if json.Unmarshal(extra["url"], &u) != nil || u == "" {
		u = ""
	}
	v := json.RawMessage("null")
	if u != "" {
		v = results.AppendStrings(nil, results.ParsedURL(u))
	}
	if extra == nil {
		extra = make(map[string]json.RawMessage, 1)
	}
	extra["parsed_url"] = v
	return extra
}

func readInfoboxURLs(v gjson.Result) ([]results.InfoboxURL, bool) {
	return readPairs(v, "title", "url", func(u *results.InfoboxURL) (*string, *string, *map[string]json.RawMessage) {
		return &u.Title, &u.URL, &u.Extra
	}, func(u *results.InfoboxURL) bool { return httpURL(u.URL) })
}

func readInfoboxAttributes(v gjson.Result) ([]results.InfoboxAttribute, bool) {
	return readPairs(v, "label", "value", func(a *results.InfoboxAttribute) (*string, *string, *map[string]json.RawMessage) {
		return &a.Label, &a.Value, &a.Extra
	}, nil)
}

// readPairs reads an array of objects with two string fields (keys a and b)
// into Ts, whatever else each object holds going to its Extra. fields
// points into a T; keep, when not nil, drops the Ts it refuses. It reports
// false when v is neither null nor an array of objects.
func readPairs[T any](v gjson.Result, a, b string, fields func(*T) (*string, *string, *map[string]json.RawMessage), keep func(*T) bool) ([]T, bool) {
	if v.Type == gjson.Null {
		return nil, true
	}
	if !v.IsArray() {
		return nil, false
	}
	ok := true
	var out []T
	v.ForEach(func(_, e gjson.Result) bool {
		if !e.IsObject() {
			ok = false
			return false
		}
		var t T
		fa, fb, extra := fields(&t)
		e.ForEach(func(k, f gjson.Result) bool {
			switch {
			case k.Str == a && isStringOrNull(f):
				*fa = f.Str
			case k.Str == b && isStringOrNull(f):
				*fb = f.Str
			default:
				putExtra(extra, k.Str, f)
			}
			return true
		})
		if keep == nil || keep(&t) {
			out = append(out, t)
		}
		return true
	})
	if !ok {
		return nil, false
	}
	return out, true
}
