package results

import (
	"encoding/json"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Page is one answer's content in one shape, whether the instance sent
// JSON or an HTML page. AppendJSONAs writes it in one of SearXNG's JSON
// shapes.
type Page struct {
	Query           string
	NumberOfResults int64 // 0 when absent
	Results         []Result
	// Answers holds the answers as newer SearXNG writes them (objects:
	// text, link, engine, template, typed content); a classic answer, a
	// string, is one with its text alone.
	Answers             []Answer
	Corrections         []string
	Infoboxes           []Infobox
	Suggestions         []string
	UnresponsiveEngines [][2]string // [engine, reason]
	// Dropped counts the results the bounds dropped where the answer was
	// read (MaxResults, MaxAnswerBytes, MaxURLBytes); never written.
	Dropped int
}

// Result is one search result, with SearXNG's field names in its JSON.
type Result struct {
	URL, Title, Content, Engine  string
	Engines                      []string
	Positions                    []int
	Score                        float64
	Category                     string
	ParsedURL                    []string // SearXNG's parsed_url 6-tuple
	Template                     string
	PublishedDate                string // as upstream gave it ("" = null)
	Thumbnail, ImgSrc, IframeSrc string
	// Extra holds the other fields of an upstream JSON result, cleaned
	// as they were read (see detect.ParseJSON: depth, size and count
	// capped, no bidirectional controls, URL-named fields http(s) only)
	// and written back as they are. A key here overrides the field of the
	// same JSON name (that is how a known field of an unexpected type
	// survives; parsed_url never comes from upstream). Values must be
	// valid JSON.
	Extra map[string]json.RawMessage
	// present marks the optional keys (publishedDate, thumbnail,
	// img_src) the upstream JSON had empty ("" or null), so that they are
	// written back as they came (newer SearXNG writes "thumbnail": "" and
	// "publishedDate": null on every result; 2024's writes neither).
	present Optional
}

// Optional is a set of Result's optional keys.
type Optional uint8

// The optional keys, one bit each.
const (
	HasPublishedDate Optional = 1 << iota
	HasThumbnail
	HasImgSrc
)

// MarkEmpty records that the upstream JSON had the keys k, but empty
// ("" or null): AppendJSON writes them back as they came.
func (x *Result) MarkEmpty(k Optional) { x.present |= k }

// Infobox is one SearXNG infobox.
type Infobox struct {
	Infobox    string // the title
	ID         string
	Content    string
	ImgSrc     string
	URLs       []InfoboxURL
	Attributes []InfoboxAttribute
	Engine     string
	Engines    []string
	Extra      map[string]json.RawMessage // other fields, as Result.Extra
}

// InfoboxURL is one link of an infobox.
type InfoboxURL struct {
	Title, URL string
	Extra      map[string]json.RawMessage // e.g. official, entity
}

// InfoboxAttribute is one label/value row of an infobox.
type InfoboxAttribute struct {
	Label, Value string
	Extra        map[string]json.RawMessage // e.g. entity, image, or a value that is not a string
}

// NothingFound reports whether r holds nothing to show: no result, no
// answer, no infobox. With no unresponsive engine that is SearXNG's honest
// "no results" (an OK verdict); with engines down it is a poor page
// (detect's Soft, EnginesDown).
func (r *Page) NothingFound() bool {
	return len(r.Results) == 0 && len(r.Answers) == 0 && len(r.Infoboxes) == 0
}

// AppendJSON appends r in the Full shape (AppendJSONAs).
func (r *Page) AppendJSON(dst []byte) []byte { return r.AppendJSONAs(dst, Full) }

// AppendJSONAs appends r as SearXNG's JSON answer in shape: every
// top-level key present (number_of_results but in the Current shape),
// answers as objects or strings (Shape), every result with url, title, content,
// engine, parsed_url, template, engines, positions, score and category
// (publishedDate, thumbnail, img_src and iframe_src when known), then its Extra
// fields in key order. Strings are escaped as encoding/json does.
func (r *Page) AppendJSONAs(dst []byte, shape Shape) []byte {
	dst = slices.Grow(dst, r.jsonSizeHint())
	dst = append(dst, `{"query":`...)
	dst = AppendString(dst, r.Query)
	if shape != Current {
		dst = append(dst, `,"number_of_results":`...)
		dst = strconv.AppendInt(dst, r.NumberOfResults, 10)
	}
	dst = append(dst, `,"results":[`...)
	for i := range r.Results {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = r.Results[i].appendJSON(dst)
	}
	dst = append(dst, `],"answers":`...)
	dst = appendAnswers(dst, r.Answers, shape)
	dst = append(dst, `,"corrections":`...)
	dst = appendStrings(dst, r.Corrections)
	dst = append(dst, `,"infoboxes":[`...)
	for i := range r.Infoboxes {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = r.Infoboxes[i].appendJSON(dst)
	}
	dst = append(dst, `],"suggestions":`...)
	dst = appendStrings(dst, r.Suggestions)
	dst = append(dst, `,"unresponsive_engines":[`...)
	for i, e := range r.UnresponsiveEngines {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '[')
		dst = AppendString(dst, e[0])
		dst = append(dst, ',')
		dst = AppendString(dst, e[1])
		dst = append(dst, ']')
	}
	return append(dst, "]}"...)
}

// jsonSizeHint is about the length of r's JSON, so that AppendJSON grows
// its buffer once: the keys every result carries (about 220 bytes), its
// strings (the URL twice: parsed_url repeats it) and its extra fields; the
// other top-level lists are usually short.
func (r *Page) jsonSizeHint() int {
	n := 256 + len(r.Query)
	for i := range r.Results {
		x := &r.Results[i]
		n += 220 + 2*len(x.URL) + len(x.Title) + len(x.Content) + len(x.Engine) + len(x.Template) +
			len(x.PublishedDate) + len(x.Category) + len(x.Thumbnail) + len(x.ImgSrc) + len(x.IframeSrc)
		for _, e := range x.Engines {
			n += len(e) + 3
		}
		for k, v := range x.Extra {
			n += len(k) + len(v) + 4
		}
	}
	for _, s := range r.Suggestions {
		n += len(s) + 3
	}
	for i := range r.Answers {
		n += answerObjSize(&r.Answers[i], func(s string) int { return len(s) })
	}
	return n
}

// objectWriter writes the members of one JSON object; a member whose key
// is in extra is skipped, and extra is written last.
type objectWriter struct {
	dst   []byte
	extra map[string]json.RawMessage
	n     int
}

func (w *objectWriter) key(k string) bool {
	if _, ok := w.extra[k]; ok {
		return false
	}
	if w.n > 0 {
		w.dst = append(w.dst, ',')
	}
	w.n++
	w.dst = append(w.dst, '"')
	w.dst = append(w.dst, k...)
	w.dst = append(w.dst, `":`...)
	return true
}

func (w *objectWriter) str(k, v string) {
	if w.key(k) {
		w.dst = AppendString(w.dst, v)
	}
}

// pairs writes k as an array of n objects with two strings, k1 and k2
// (an infobox's urls or attributes); at gives the i-th object's values
// and the keys it had that searxgate does not model.
func (w *objectWriter) pairs(k, k1, k2 string, n int, at func(i int) (extra map[string]json.RawMessage, v1, v2 string)) {
	if !w.key(k) {
		return
	}
	w.dst = append(w.dst, '[')
	for i := range n {
		if i > 0 {
			w.dst = append(w.dst, ',')
		}
		extra, v1, v2 := at(i)
		ow := objectWriter{dst: append(w.dst, '{'), extra: extra}
		ow.str(k1, v1)
		ow.str(k2, v2)
		w.dst = ow.close()
	}
	w.dst = append(w.dst, ']')
}

func (w *objectWriter) strs(k string, v []string) {
	if w.key(k) {
		w.dst = appendStrings(w.dst, v)
	}
}

func (w *objectWriter) close() []byte {
	if len(w.extra) > 0 {
		keys := make([]string, 0, len(w.extra))
		for k := range w.extra {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if w.n > 0 {
				w.dst = append(w.dst, ',')
			}
			w.n++
			w.dst = AppendString(w.dst, k)
			w.dst = append(w.dst, ':')
			if v := w.extra[k]; len(v) > 0 {
				w.dst = append(w.dst, v...)
			} else {
				w.dst = append(w.dst, "null"...)
			}
		}
	}
	return append(w.dst, '}')
}

func (x *Result) appendJSON(dst []byte) []byte {
	w := objectWriter{dst: append(dst, '{'), extra: x.Extra}
	w.str("url", x.URL)
	w.str("title", x.Title)
	w.str("content", x.Content)
	w.str("engine", x.Engine)
	if w.key("parsed_url") {
		if x.ParsedURL != nil {
			w.dst = appendStrings(w.dst, x.ParsedURL)
		} else {
			w.dst = appendStrings(w.dst, ParsedURL(x.URL))
		}
	}
	w.str("template", x.Template)
	w.strs("engines", x.Engines)
	if w.key("positions") {
		w.dst = append(w.dst, '[')
		for i, p := range x.Positions {
			if i > 0 {
				w.dst = append(w.dst, ',')
			}
			w.dst = strconv.AppendInt(w.dst, int64(p), 10)
		}
		w.dst = append(w.dst, ']')
	}
	// publishedDate, thumbnail, img_src and iframe_src are written only
	// when the result has them: SearXNG's JSON has them only for the
	// results whose engine gave them (fixture a-search-json.txt has none).
	// An upstream JSON that had them empty gets them back as it had them.
	if x.PublishedDate != "" {
		w.str("publishedDate", x.PublishedDate)
	} else if x.present&HasPublishedDate != 0 && w.key("publishedDate") {
		w.dst = append(w.dst, "null"...)
	}
	if w.key("score") {
		w.dst = appendFloat(w.dst, x.Score)
	}
	w.str("category", x.Category)
	if x.Thumbnail != "" || x.present&HasThumbnail != 0 {
		w.str("thumbnail", x.Thumbnail)
	}
	if x.ImgSrc != "" || x.present&HasImgSrc != 0 {
		w.str("img_src", x.ImgSrc)
	}
	if x.IframeSrc != "" {
		w.str("iframe_src", x.IframeSrc)
	}
	return w.close()
}

func (b *Infobox) appendJSON(dst []byte) []byte {
	w := objectWriter{dst: append(dst, '{'), extra: b.Extra}
	w.str("infobox", b.Infobox)
	w.str("id", b.ID)
	w.str("content", b.Content)
	w.str("img_src", b.ImgSrc)
	w.pairs("urls", "title", "url", len(b.URLs), func(i int) (map[string]json.RawMessage, string, string) {
		return b.URLs[i].Extra, b.URLs[i].Title, b.URLs[i].URL
	})
	w.pairs("attributes", "label", "value", len(b.Attributes), func(i int) (map[string]json.RawMessage, string, string) {
		return b.Attributes[i].Extra, b.Attributes[i].Label, b.Attributes[i].Value
	})
	w.str("engine", b.Engine)
	w.strs("engines", b.Engines)
	return w.close()
}

// ParsedURL returns Python's urlparse 6-tuple of u (scheme, netloc, path,
// params, query, fragment), as SearXNG puts in parsed_url.
func ParsedURL(u string) []string {
	p, err := url.Parse(u)
	if err != nil {
		return []string{"", "", "", "", "", ""}
	}
	return PartsOf(p).AppendParsedURL(nil)
}

// URLParts is a URL split as url.Parse splits it, each part in its
// escaped form: what parsed_url is made of.
type URLParts struct{ Scheme, Host, Path, Query, Fragment string }

// PartsOf returns the parts of a parsed URL (its user info, if any, as
// part of the host, as SearXNG's netloc has it).
func PartsOf(p *url.URL) URLParts {
	host := p.Host
	if p.User != nil {
		host = p.User.String() + "@" + host
	}
	return URLParts{p.Scheme, host, p.EscapedPath(), p.RawQuery, p.EscapedFragment()}
}

// AppendParsedURL appends ParsedURL's 6-tuple of the parts p to dst.
func (p URLParts) AppendParsedURL(dst []string) []string {
	path, params := p.Path, ""
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		if j := strings.IndexByte(path[i:], ';'); j >= 0 {
			path, params = path[:i+j], path[i+j+1:]
		}
	}
	return append(dst, p.Scheme, p.Host, path, params, p.Query, p.Fragment)
}

// AppendStrings appends v as a JSON list of strings.
func AppendStrings(dst []byte, v []string) []byte { return appendStrings(dst, v) }

func appendStrings(dst []byte, v []string) []byte {
	dst = append(dst, '[')
	for i, s := range v {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, s)
	}
	return append(dst, ']')
}

// appendFloat writes f as encoding/json does; NaN and infinities, which
// JSON cannot carry, are written as 0.
func appendFloat(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, '0')
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9, as encoding/json does
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

const hexDigits = "0123456789abcdef"

// jsonSafe tells the ASCII bytes AppendString writes as they are: printable,
// and neither a quote, a backslash nor one of HTML's <, > and &.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = !strings.ContainsRune(`"\<>&`, rune(c))
	}
	return t
}()

// AppendString writes s as a JSON string, escaping as encoding/json does
// (HTML-safe: <, > and & as \u escapes; U+2028 and U+2029 escaped;
// invalid UTF-8 as U+FFFD).
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
