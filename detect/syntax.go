package detect

import (
	"iter"
	"strconv"
	"strings"
	"time"
)

// Query is a search's text with SearXNG's query syntax read once, word by
// word, as searx/query.py's RawTextQuery reads it. Every part of searxgate
// that asks what the syntax says asks a Query; none reads the text again.
//
// SearXNG decides some words by the instance's own lists: "!wp" is a bang
// only where an engine is named so, ":de" a language only where a locale
// is. Those lists differ between instances, so every "!x" and ":x" word
// counts as syntax here. "!!g" is an external bang only where SearXNG's
// list of them (bangs.go; the same on every instance of a version) knows
// the name: "c++ !!important" is three plain words to SearXNG, and a
// redirect answering it is no bang's.
// "<" and digits is a timeout on every instance.
//
// ParseQuery keeps no copy of the text and allocates nothing; a Query is
// small, since every request carries one.
type Query struct {
	text     string
	timeout  time.Duration // the last "<n"'s limit
	syntax   bool          // some word is syntax
	external bool          // a "!!bang" word
	lucky    bool          // a lone "!!" word
}

// MaxQueryTimeout bounds what a query's "<n" syntax reads as: a longer
// time, in digits too many to hold, is read as this one.
const MaxQueryTimeout = 1e9 * time.Millisecond

// WordKind is what SearXNG's syntax makes of one word of a query.
type WordKind uint8

// Word kinds. Every kind but WordPlain is syntax: SearXNG leaves it out of
// the words it searches for and echoes.
const (
	WordPlain        WordKind = iota // a word searched for
	WordTimeout                      // "<6", "<850": the engines' time, seconds below 100, milliseconds from 100
	WordLanguage                     // ":de", ":en-US": the search's language
	WordBang                         // "!wp", "!images": an engine or a category
	WordExternalBang                 // "!!g": the client is sent to the bang's site
	WordLucky                        // "!!": the client is sent to the first result
)

// KindOf returns what SearXNG's syntax makes of one word (no white space).
func KindOf(word string) WordKind {
	if len(word) < 2 {
		return WordPlain // "!", ":" and "<" alone are words
	}
	switch word[0] {
	case '!':
		switch {
		case word[1] != '!':
			return WordBang
		case len(word) == 2:
			return WordLucky
		case knownBang(word[2:]):
			return WordExternalBang
		}
		return WordPlain // searx/query.py: an external bang SearXNG does not know is a word
	case ':':
		return WordLanguage
	case '<':
		for i := 1; i < len(word); i++ {
			if word[i] < '0' || word[i] > '9' {
				return WordPlain // "<6s", and a sign: "<-6" and "<+6" are words
			}
		}
		return WordTimeout
	}
	return WordPlain
}

// ParseQuery reads the syntax of text, the query as typed. A query with no
// '!', ':' or '<' (nearly every one) costs one scan of its bytes.
func ParseQuery(text string) Query {
	q := Query{text: text}
	if !mayHaveSyntax(text) {
		return q
	}
	for w := range strings.FieldsSeq(text) {
		switch KindOf(w) {
		case WordPlain:
			continue
		case WordTimeout:
			// searx/query.py: below 100 the unit is the second, from 100 on
			// the millisecond. Past MaxQueryTimeout, a number is read as it.
			switch n, err := strconv.Atoi(w[1:]); {
			case err != nil || time.Duration(n) > MaxQueryTimeout/time.Millisecond:
				q.timeout = MaxQueryTimeout
			case n < 100:
				q.timeout = time.Duration(n) * time.Second
			default:
				q.timeout = time.Duration(n) * time.Millisecond
			}
		case WordExternalBang:
			q.external = true
		case WordLucky:
			q.lucky = true
		}
		q.syntax = true
	}
	return q
}

// mayHaveSyntax reports whether text has a byte that starts syntax.
func mayHaveSyntax(text string) bool {
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '!', ':', '<':
			return true
		}
	}
	return false
}

// Text is the query as typed.
func (q Query) Text() string { return q.text }

// String is the query as typed.
func (q Query) String() string { return q.text }

// HasSyntax reports whether some word of the query is syntax.
func (q Query) HasSyntax() bool { return q.syntax }

// Bang reports whether the query's answer is SearXNG's redirect, and
// which: ExternalBang when a word is "!!name", else FeelingLucky when a
// word is "!!". SearXNG's external bang wins wherever the words stand.
func (q Query) Bang() (Reason, bool) {
	switch {
	case q.external:
		return ExternalBang, true
	case q.lucky:
		return FeelingLucky, true
	}
	return "", false
}

// ExternalBang is the name of the query's external bang as typed ("g" of
// "!!g"; the last one when there are several), "" when it has none.
func (q Query) ExternalBang() string {
	return q.last(WordExternalBang, len("!!"))
}

// Lucky reports whether a word of the query is "!!" (feeling lucky).
func (q Query) Lucky() bool { return q.lucky }

// Timeout is the time the query's "<n" syntax gives its engines (the last
// one counts), 0 when it has none.
func (q Query) Timeout() time.Duration { return q.timeout }

// Language is the language the query's ":lang" syntax asks for, as typed
// ("de" of ":de"; the last one counts), "" when it has none.
func (q Query) Language() string {
	return q.last(WordLanguage, len(":"))
}

// last is the last word of kind without its first n bytes, "" for none.
func (q Query) last(kind WordKind, n int) string {
	v := ""
	for k, w := range q.Words() {
		if k == kind {
			v = w[n:]
		}
	}
	return v
}

// Words yields every word of the query with its kind, in order.
func (q Query) Words() iter.Seq2[WordKind, string] {
	return func(yield func(WordKind, string) bool) {
		for w := range strings.FieldsSeq(q.text) {
			k := WordPlain
			if q.syntax {
				k = KindOf(w)
			}
			if !yield(k, w) {
				return
			}
		}
	}
}

// Terms is the words searched for, one space apart, without the syntax:
// what SearXNG's JSON echoes as "query" (RawTextQuery.getQuery). It is ""
// when every word is syntax.
func (q Query) Terms() string {
	return q.without(func(k WordKind) bool { return k != WordPlain })
}

// Without is the query's words but those of kind, one space apart.
func (q Query) Without(kind WordKind) string {
	return q.without(func(k WordKind) bool { return k == kind })
}

func (q Query) without(drop func(WordKind) bool) string {
	var b strings.Builder
	for k, w := range q.Words() {
		if drop(k) {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	return b.String()
}
