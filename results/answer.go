package results

import (
	"cmp"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
)

// The answer templates of SearXNG's simple theme (searx/result_types/answer.py).
const (
	LegacyAnswer       = "answer/legacy.html"       // a text, maybe with a link
	TranslationsAnswer = "answer/translations.html" // translations, no text
	WeatherAnswer      = "answer/weather.html"      // current weather and forecasts, no text
)

// Answer is one of SearXNG's answers, as newer SearXNG writes them
// (`{url, engine, parsed_url, template, ...}`): a text with an optional
// link (LegacyAnswer), or a typed answer whose content is in Extra
// (translations; current, forecasts and service of the weather; whatever
// a template not known here holds). A classic answer, a plain string,
// is an Answer with its text alone.
type Answer struct {
	Answer   string // the text; "" for a typed answer
	URL      string // "" = none (written null, as SearXNG)
	Engine   string
	Template string // "" = LegacyAnswer
	// Extra holds the other fields, cleaned as a result's are
	// (Result.Extra); parsed_url is never kept: it is rebuilt from URL.
	Extra map[string]json.RawMessage
}

// IsTyped reports whether a is a typed answer: one whose content is not a
// text of its own.
func (a *Answer) IsTyped() bool {
	return a.Template != "" && a.Template != LegacyAnswer && a.Answer == ""
}

// Text is a's content as one line of text, for the faces that show
// answers as text (the classic JSON's strings, CSV, RSS, MCP, the page):
// the answer's text; a translation's texts (with transliterations) joined
// by "; "; the weather's current summary, with its service; "" when a
// typed answer holds nothing this reads.
func (a *Answer) Text() string {
	if a.Answer != "" || !a.IsTyped() {
		return a.Answer
	}
	switch a.Template {
	case TranslationsAnswer:
		var items []struct {
			Text            string `json:"text"`
			Transliteration string `json:"transliteration"`
		}
		_ = json.Unmarshal(a.Extra["translations"], &items)
		parts := make([]string, 0, len(items))
		for _, it := range items {
			switch {
			case it.Text == "":
			case it.Transliteration != "":
				parts = append(parts, it.Text+" ("+it.Transliteration+")")
			default:
				parts = append(parts, it.Text)
			}
		}
		return strings.Join(parts, "; ")
	case WeatherAnswer:
		var cur struct {
			Summary string `json:"summary"`
		}
		var service string
		_ = json.Unmarshal(a.Extra["current"], &cur)
		_ = json.Unmarshal(a.Extra["service"], &service)
		if cur.Summary != "" && service != "" {
			return cur.Summary + " (" + service + ")"
		}
		return cur.Summary
	}
	return ""
}

// Classic is a as the classic shape's string: its Text, with its link
// appended as " (url)" when the text does not hold it already.
func (a *Answer) Classic() string {
	t := a.Text()
	if t == "" || a.URL == "" || strings.Contains(t, a.URL) {
		return t
	}
	return t + " (" + a.URL + ")"
}

// Host is the host name of a's link ("" without one), what SearXNG's page
// shows as the link's text.
func (a *Answer) Host() string {
	u, err := url.Parse(a.URL)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// appendJSON writes a as SearXNG writes an answer object: url, engine,
// parsed_url, template, then answer (for a text answer) and the fields
// of Extra in key order.
func (a *Answer) appendJSON(dst []byte) []byte {
	w := objectWriter{dst: append(dst, '{'), extra: a.Extra}
	if w.key("url") {
		w.dst = appendStringOrNull(w.dst, a.URL)
	}
	w.str("engine", a.Engine)
	if w.key("parsed_url") {
		if a.URL == "" {
			w.dst = append(w.dst, "null"...)
		} else {
			w.dst = appendStrings(w.dst, ParsedURL(a.URL))
		}
	}
	w.str("template", cmp.Or(a.Template, LegacyAnswer))
	if !a.IsTyped() {
		w.str("answer", a.Answer)
	}
	return w.close()
}

func appendStringOrNull(dst []byte, s string) []byte {
	if s == "" {
		return append(dst, "null"...)
	}
	return AppendString(dst, s)
}

// appendAnswers writes answers in shape: objects, or the classic strings
// (Answer.Classic; an answer with no text is left out).
func appendAnswers(dst []byte, answers []Answer, shape Shape) []byte {
	dst = append(dst, '[')
	n := 0
	for i := range answers {
		a := &answers[i]
		if shape == Classic {
			t := a.Classic()
			if t == "" {
				continue
			}
			if n > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, t)
		} else {
			if n > 0 {
				dst = append(dst, ',')
			}
			dst = a.appendJSON(dst)
		}
		n++
	}
	return append(dst, ']')
}

// Shape is which of SearXNG's JSON shapes AppendJSONAs writes: they differ
// in number_of_results and answers only.
type Shape uint8

// The shapes.
const (
	// Classic is SearXNG's JSON until its answers became objects
	// (2024-12): number_of_results, answers as strings (a link appended
	// as " (url)"). The zero Shape.
	Classic Shape = iota
	// Current is SearXNG's JSON since 2026-05: answers as objects, and
	// no number_of_results (dropped then).
	Current
	// Full is what searxgate keeps and passes between its parts:
	// number_of_results, and answers as objects (nothing lost).
	Full
)

// ShapeNames are the shapes' names, as an operator sets them.
var ShapeNames = []string{"classic", "current"}

// ParseShape reads an operator's name of a shape (ShapeNames).
func ParseShape(s string) (Shape, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "classic":
		return Classic, true
	case "current":
		return Current, true
	}
	return 0, false
}

// String is the shape's name.
func (s Shape) String() string {
	switch s {
	case Classic:
		return "classic"
	case Current:
		return "current"
	}
	return "full"
}

// answerObjSize is about what a takes written as JSON.
func answerObjSize(a *Answer, size func(string) int) int {
	return 80 + 2*size(a.URL) + size(a.Engine) + size(a.Template) + size(a.Answer) + ExtraSize(a.Extra)
}

// sameAnswer is the key under which Merge and SearXNG's AnswerSet count
// two answers as one: a text answer by its text, a typed one by its
// template and content.
func sameAnswer(a *Answer) string {
	if !a.IsTyped() {
		return a.Answer
	}
	keys := make([]string, 0, len(a.Extra))
	for k := range a.Extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString(a.Template)
	for _, k := range keys {
		b.WriteByte(0)
		b.WriteString(k)
		b.WriteByte(0)
		b.Write(a.Extra[k])
	}
	return b.String()
}

// ClassicAnswers is answers as the classic shape's strings
// (Answer.Classic), those without text left out.
func ClassicAnswers(answers []Answer) []string {
	var out []string
	for i := range answers {
		if t := answers[i].Classic(); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// TextAnswers makes classic answers (strings) Answers.
func TextAnswers(texts ...string) []Answer {
	out := make([]Answer, len(texts))
	for i, t := range texts {
		out[i] = Answer{Answer: t}
	}
	return out
}
