package detect

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/searxgate/searxgate/results"
	"github.com/tidwall/gjson"
)

// Limits on what an upstream answer may carry through searxgate. They are
// applied where answers are read, so every format written from a
// results.Page (JSON, HTML, CSV, RSS) gets them.
const (
	// MaxExtraDepth is the deepest nesting an unknown field's value may
	// have (a scalar is 0, [1] is 1, [[1]] is 2). A deeper value is
	// dropped with its key.
	MaxExtraDepth = 8
	// MaxExtraBytes caps one unknown field's value as written back; a
	// larger value is dropped with its key.
	MaxExtraBytes = 4096
	// MaxExtraKeys caps the unknown fields kept per result, infobox,
	// infobox link or attribute; the first ones in the answer are kept.
	MaxExtraKeys = 32
	// MaxExtraTotal caps the unknown fields of one result, infobox,
	// infobox link or attribute in all, as written; a field that would
	// pass it is dropped.
	MaxExtraTotal = 8 << 10
	// MaxAnswerExtraBytes caps a typed answer's content, one field and in
	// all: a weather answer's forecasts run to about 100 KB (open-meteo's
	// hourly ones for a week), where a result's unknown fields are a few
	// hundred bytes.
	MaxAnswerExtraBytes = 128 << 10
	// maxExtraKey caps the length of an unknown field's name.
	maxExtraKey = 64
	// maxJSONDepth is the deepest nesting of a JSON answer read at all:
	// SearXNG's answers nest about six levels; a hostile one nested a
	// million deep would cost a deep recursion just to validate.
	maxJSONDepth = 64
	// maxReadResults caps the results read from an answer at all, before
	// links are judged; the others are skipped as they are read.
	maxReadResults = 4 * results.MaxResults
)

// IsBidiControl reports the Unicode bidirectional controls (embeddings,
// overrides, isolates, LRM, RLM and ALM), which would let an upstream
// string reorder the text around it where a client shows it. They are
// stripped from every text read and make a URL unusable.
func IsBidiControl(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
}

// StripBidi returns s without its bidirectional controls (IsBidiControl).
// s is returned as is, without a copy, when it has none.
func StripBidi(s string) string {
	if !hasBidi(s) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if IsBidiControl(r) {
			return -1
		}
		return r
	}, s)
}

// hasBidi reports whether s holds a bidirectional control. They are all
// encoded as E2 80 xx, E2 81 xx or D8 9C: strings without those lead
// bytes (nearly all) are passed at the speed of IndexByte.
func hasBidi(s string) bool {
	for _, lead := range [...]byte{0xe2, 0xd8} {
		for i := 0; i < len(s); {
			j := strings.IndexByte(s[i:], lead)
			if j < 0 {
				break
			}
			i += j
			r, size := utf8.DecodeRuneInString(s[i:])
			if IsBidiControl(r) {
				return true
			}
			i += size
		}
	}
	return false
}

// link returns u when it is an http(s) URL a client may follow, else "".
func link(u string) string {
	if httpURL(u) {
		return u
	}
	return ""
}

// sanitize applies the read-time rules to everything r holds: no
// bidirectional controls in any text, only http(s) URLs in URL fields,
// parsed_url rebuilt from url. Results whose URL fails are dropped.
// Unknown fields were cleaned as they were read (cleanExtra). Then the
// bounds are applied (results.Page.Bound).
func sanitize(r *results.Page) {
	r.Query = StripBidi(r.Query)
	kept := r.Results[:0]
	// The parsed_url tuples are pieces of one array, each capped at its
	// own length so that an append to one copies it.
	tuples := make([]string, 0, 6*len(r.Results))
	for i := range r.Results {
		x := r.Results[i]
		p, ok := parseLink(x.URL)
		if !ok {
			continue
		}
		tuples = p.AppendParsedURL(tuples)
		x.ParsedURL = tuples[len(tuples)-6 : len(tuples) : len(tuples)]
		x.Title = StripBidi(x.Title)
		x.Content = StripBidi(x.Content)
		x.Engine = StripBidi(x.Engine)
		stripAll(x.Engines)
		x.Category = StripBidi(x.Category)
		x.Template = StripBidi(x.Template)
		x.PublishedDate = StripBidi(x.PublishedDate)
		x.Thumbnail = link(x.Thumbnail)
		x.ImgSrc = link(x.ImgSrc)
		x.IframeSrc = link(x.IframeSrc)
		kept = append(kept, x)
	}
	clear(r.Results[len(kept):])
	r.Results = kept
	for i := range r.Answers {
		a := &r.Answers[i]
		a.Answer, a.Engine, a.Template = StripBidi(a.Answer), StripBidi(a.Engine), StripBidi(a.Template)
		a.URL = link(a.URL)
	}
	stripAll(r.Corrections)
	stripAll(r.Suggestions)
	for i := range r.Infoboxes {
		b := &r.Infoboxes[i]
		b.Infobox = StripBidi(b.Infobox)
		b.ID = StripBidi(b.ID)
		b.Content = StripBidi(b.Content)
		b.ImgSrc = link(b.ImgSrc)
		b.Engine = StripBidi(b.Engine)
		stripAll(b.Engines)
		urls := b.URLs[:0]
		for _, u := range b.URLs {
			if httpURL(u.URL) {
				u.Title = StripBidi(u.Title)
				urls = append(urls, u)
			}
		}
		clear(b.URLs[len(urls):])
		if len(urls) == 0 {
			urls = nil
		}
		b.URLs = urls
		for j := range b.Attributes {
			a := &b.Attributes[j]
			a.Label, a.Value = StripBidi(a.Label), StripBidi(a.Value)
		}
	}
	for i := range r.UnresponsiveEngines {
		e := &r.UnresponsiveEngines[i]
		e[0], e[1] = StripBidi(e[0]), StripBidi(e[1])
	}
	r.Bound()
}

func stripAll(v []string) {
	for i, s := range v {
		v[i] = StripBidi(s)
	}
}

// urlKey reports whether an unknown field named k holds a link by
// SearXNG's naming (url, *_url, *_src, src, href, link, thumbnail,
// torrentfile, magnetlink): its string value must then pass the URL rule.
func urlKey(k string) bool {
	switch k {
	case "url", "src", "href", "link", "thumbnail", "torrentfile", "magnetlink":
		return true
	}
	return strings.HasSuffix(k, "_url") || strings.HasSuffix(k, "_src") || strings.HasSuffix(k, "_link")
}

// linkValue is the rule for a string under a URL key: http(s) only; a
// magnet link (SearXNG's torrent results) is passed only as magnetlink.
func linkValue(k, v string) string {
	if k == "magnetlink" && len(v) > 8 && strings.EqualFold(v[:8], "magnet:?") && !hasBidi(v) && !strings.ContainsFunc(v, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return v
	}
	return link(v)
}

// putExtra keeps a field the typed reader did not take, cleaned
// (cleanExtra): a value too deep or too large, a name that is too long,
// holds a bidirectional control or is parsed_url (always rebuilt), and
// fields beyond MaxExtraKeys are dropped.
func putExtra(m *map[string]json.RawMessage, key string, f gjson.Result) {
	putExtraWithin(m, key, f, MaxExtraBytes, MaxExtraTotal)
}

// putExtraWithin is putExtra with the bounds of one value (maxBytes) and
// of all (maxTotal) given.
func putExtraWithin(m *map[string]json.RawMessage, key string, f gjson.Result, maxBytes, maxTotal int) {
	if key == "" || len(key) > maxExtraKey || key == "parsed_url" || hasBidi(key) || len(*m) >= MaxExtraKeys {
		return
	}
	v, ok := cleanExtra(key, f, maxBytes)
	if !ok || results.ExtraSize(*m)+len(key)+len(v)+4 > maxTotal {
		return
	}
	if *m == nil {
		*m = make(map[string]json.RawMessage, 4)
	}
	(*m)[key] = v
}

// cleanExtra writes the value of the unknown field k afresh: strings
// without bidirectional controls, strings under URL keys through the URL
// rule, at most MaxExtraDepth levels and MaxExtraBytes bytes. ok is false
// when the value must be dropped: too deep, too large, or a top-level URL
// field whose value is not a URL a client may follow.
func cleanExtra(k string, f gjson.Result, maxBytes int) (json.RawMessage, bool) {
	if urlKey(k) {
		switch {
		case f.Type == gjson.Null:
			return json.RawMessage("null"), true // no link: kept as it came
		case f.Type != gjson.String:
			return nil, false
		case f.Str == "":
			return json.RawMessage(`""`), true
		}
		u := linkValue(k, f.Str)
		if u == "" || len(u) > maxBytes {
			return nil, false
		}
		if v := results.AppendString(nil, u); len(v) <= maxBytes {
			return v, true
		}
		return nil, false
	}
	w := extraWriter{dst: make([]byte, 0, min(len(f.Raw)+8, maxBytes)), max: maxBytes}
	if !w.value("", f, 0) || len(w.dst) > maxBytes {
		return nil, false
	}
	return w.dst, true
}

// extraWriter writes one cleaned value; it gives up (false) as soon as
// the value is too deep or too large.
type extraWriter struct {
	dst []byte
	max int // the most the value may take
}

func (w *extraWriter) value(k string, v gjson.Result, depth int) bool {
	if len(w.dst) > w.max {
		return false
	}
	switch v.Type {
	case gjson.String:
		s := StripBidi(v.Str)
		if urlKey(k) {
			s = linkValue(k, s)
		}
		w.dst = results.AppendString(w.dst, s)
	case gjson.Number:
		w.dst = append(w.dst, v.Raw...)
	case gjson.True:
		w.dst = append(w.dst, "true"...)
	case gjson.False:
		w.dst = append(w.dst, "false"...)
	case gjson.Null:
		w.dst = append(w.dst, "null"...)
	default: // an object or array
		if urlKey(k) {
			// not a link: nothing a client could follow
			w.dst = append(w.dst, "null"...)
			return true
		}
		if depth >= MaxExtraDepth {
			return false
		}
		obj := v.IsObject()
		open, end := byte('['), byte(']')
		if obj {
			open, end = '{', '}'
		}
		w.dst = append(w.dst, open)
		n, ok := 0, true
		v.ForEach(func(key, e gjson.Result) bool {
			name := ""
			if obj {
				name = StripBidi(key.Str)
			}
			if n > 0 {
				w.dst = append(w.dst, ',')
			}
			n++
			if obj {
				w.dst = results.AppendString(w.dst, name)
				w.dst = append(w.dst, ':')
			}
			ok = w.value(name, e, depth+1)
			return ok
		})
		if !ok {
			return false
		}
		w.dst = append(w.dst, end)
	}
	return len(w.dst) <= w.max
}

// tooDeep reports whether body nests arrays and objects deeper than
// limit. It counts brackets outside strings (a stray closing one does not
// count below zero); a body with no more brackets than limit in all is
// not scanned.
func tooDeep(body []byte, limit int) bool {
	if bytes.Count(body, []byte{'['})+bytes.Count(body, []byte{'{'}) <= limit {
		return false
	}
	return jsonDepth(body, limit) > limit
}

// jsonDepth is the nesting depth of JSON (a scalar is 0), counted until it
// passes stop.
func jsonDepth(b []byte, stop int) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			depth++
			if deepest = max(deepest, depth); deepest > stop {
				return deepest
			}
		case ']', '}':
			depth = max(depth-1, 0)
		}
	}
	return deepest
}
