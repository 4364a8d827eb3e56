package detect

import (
	"bytes"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/searxgate/searxgate/results"
)

// OnTopicPercent is the share of results, in percent, that must mention a
// word of the query for an answer to be on topic: at least this many
// (rounded up, and at least one). It is low on purpose: engines match
// stems, synonyms and other languages, so an honest page often has results
// that do not repeat the query; a page for some other query has almost
// none that do.
const OnTopicPercent = 30

// OnTopic reports whether r belongs to query: the echoed query, when r
// has one, matches it (see SameQuery), and at least OnTopicPercent percent
// of the results mention a word of the query in their title, content or
// URL, after case and accent folding. SearXNG syntax in the query (!bang,
// !!bang, :lang, <timeout) is ignored. A query with no words, or an
// answer without results, is on topic: there is nothing to judge.
func OnTopic(query string, r *results.Page) bool {
	if r == nil {
		return true
	}
	asked := queryWords(query)
	if r.Query != "" && !sameWords(asked, queryWords(r.Query)) {
		return false
	}
	return enoughMention(asked, r.Results)
}

// enoughMention is OnTopic's rule on results, for the query's folded
// words.
func enoughMention(asked []string, rs []results.Result) bool {
	return mentioned(matchWords(asked), rs)
}

// mentioned is enoughMention for the words worth looking for (matchWords).
func mentioned(words [][]byte, rs []results.Result) bool {
	n := len(rs)
	if len(words) == 0 || n == 0 {
		return true
	}
	need := (n*OnTopicPercent + 99) / 100
	if need < 1 {
		need = 1
	}
	buf := make([]byte, 0, 512) // most results' title, snippet and URL fit
	hits := 0
	for i := range rs {
		x := &rs[i]
		buf = appendFold(buf[:0], x.Title)
		buf = append(buf, ' ')
		buf = appendFold(buf, x.Content)
		buf = append(buf, ' ')
		buf = appendFold(buf, x.URL)
		for _, w := range words {
			if bytes.Contains(buf, w) {
				hits++
				break
			}
		}
		if hits >= need {
			return true
		}
	}
	return false
}

// TemplateMin is the fewest results an answer needs before it can be
// judged a template (see templated).
const TemplateMin = 4

// templated reports whether results only wrap the query in a template:
// every title reads the same, and so does every snippet ("Buy <q> cheap",
// "Best <q> deals ..."), once case is set aside: within one answer the
// query is the same, so a template fills in the same text every time. A
// results page of real engines has titles of their own; a hostile or
// broken instance that echoes the query into canned results has one.
// Caught: pages whose every title and snippet are the same text. Not
// caught: templates with a counter or a varying word in them, pages that
// mix canned and real results, and real results that do not repeat the
// query (those are for the off-topic rule). It allocates nothing.
func templated(rs []results.Result) bool {
	if len(rs) < TemplateMin {
		return false
	}
	t0, c0 := strings.TrimSpace(rs[0].Title), strings.TrimSpace(rs[0].Content)
	for i := range rs[1:] {
		x := &rs[i+1]
		if !strings.EqualFold(strings.TrimSpace(x.Title), t0) || !strings.EqualFold(strings.TrimSpace(x.Content), c0) {
			return false
		}
	}
	return true
}

// EchoPercent is the share of results, in percent, that may only echo the
// query (see echoes) before an answer of at least TemplateMin results is
// off topic.
const EchoPercent = 50

// echoes reports whether results only echo the query back, as spam pages
// generated from it do: at least TemplateMin results, and at least
// EchoPercent percent of them made of nothing but the query's own words
// (see echoOnly), in any order, any number of times, any subset. This is
// what templated misses when each result echoes the query differently
// ("rust borrow", "Checker Rust", "borrow checker rust rust"). An honest
// result that merely contains the query's words has words of its own
// around them, in its title or its snippet, and is not an echo.
// words are asked's worth looking for (matchWords).
func echoes(asked []string, words [][]byte, rs []results.Result) bool {
	n := len(rs)
	if n < TemplateMin || len(asked) == 0 {
		return false
	}
	need := max((n*EchoPercent+99)/100, 1)
	in := newWordSet(asked)
	var scratch [512]byte // most results' title and snippet fit
	buf := scratch[:0]
	echoed := 0
	for i := range rs {
		var echo bool
		if echo, buf = echoOnly(buf, in, words, &rs[i]); echo {
			echoed++
			if echoed >= need {
				return true
			}
		} else if echoed+(n-i-1) < need {
			return false // too few left to reach need
		}
	}
	return false
}

// echoOnly reports whether x's title and snippet, case and accents folded,
// hold a word worth looking for (matchWords) and otherwise nothing but
// the query's words, stop words and numbers. The title is read first: an
// honest result's title nearly always has a word of its own, and its
// snippet is then never folded. buf is scratch space, given back for the
// next result.
func echoOnly(buf []byte, asked wordSet, words [][]byte, x *results.Result) (bool, []byte) {
	found := false
	for _, text := range [2]string{x.Title, x.Content} {
		buf = appendFold(buf[:0], text)
		if !onlyQueryWords(buf, asked, words, &found) {
			return false, buf
		}
	}
	return found, buf
}

// onlyQueryWords reports whether the folded text b holds nothing but the
// query's words, stop words and numbers; found is set once it holds a
// word worth looking for.
func onlyQueryWords(b []byte, asked wordSet, words [][]byte, found *bool) bool {
	for {
		var w []byte
		if w, b = nextWord(b); w == nil {
			break
		}
		if !*found {
			for _, m := range words {
				if bytes.Equal(w, m) {
					*found = true
					break
				}
			}
		}
		if !isStopWord(w) && !allDigits(w) && !asked.has(w) {
			return false
		}
	}
	return true
}

// nextWord returns the first word of b, the run of letters and digits
// once what is neither is skipped, and what follows it; nil when b has
// none.
func nextWord(b []byte) (w, rest []byte) {
	start := 0
	for start < len(b) {
		if c := b[start]; c < utf8.RuneSelf {
			if asciiWord[c] {
				break
			}
			start++
			continue
		}
		r, n := utf8.DecodeRune(b[start:])
		if !notWordRune(r) {
			break
		}
		start += n
	}
	end := start
	for end < len(b) {
		if c := b[end]; c < utf8.RuneSelf {
			if !asciiWord[c] {
				break
			}
			end++
			continue
		}
		r, n := utf8.DecodeRune(b[end:])
		if notWordRune(r) {
			break
		}
		end += n
	}
	if end == start {
		return nil, nil
	}
	return b[start:end], b[end:]
}

// asciiLower lower-cases an ASCII byte.
var asciiLower = func() (t [utf8.RuneSelf]byte) {
	for c := range t {
		t[c] = byte(c)
		if 'A' <= c && c <= 'Z' {
			t[c] += 'a' - 'A'
		}
	}
	return t
}()

// asciiWord says which ASCII bytes are letters or digits.
var asciiWord = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	return t
}()

// wordSet is a query's words as a set: a list to walk for a query of a few,
// a map for a long one (a 9,000-byte query has hundreds, and each word
// of each result is looked up).
type wordSet struct {
	few  []string
	many map[string]bool
}

func newWordSet(asked []string) wordSet {
	if len(asked) <= 16 {
		return wordSet{few: asked}
	}
	m := make(map[string]bool, len(asked))
	for _, a := range asked {
		m[a] = true
	}
	return wordSet{many: m}
}

// has reports whether w is one of the words (without allocating).
func (ws wordSet) has(w []byte) bool {
	if ws.many != nil {
		return ws.many[string(w)]
	}
	for _, a := range ws.few {
		if a == string(w) {
			return true
		}
	}
	return false
}

func allDigits(w []byte) bool {
	for _, c := range w {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(w) > 0
}

// SameQuery reports whether an echoed query is the query asked: the same
// words, in order, after case and accent folding, with SearXNG syntax
// (!bang, :lang, <timeout) left out of both.
func SameQuery(asked, echoed string) bool {
	return sameWords(queryWords(asked), queryWords(echoed))
}

func sameWords(a, e []string) bool {
	if len(a) != len(e) {
		return false
	}
	for i := range a {
		if a[i] != e[i] {
			return false
		}
	}
	return true
}

// queryWords returns the folded words of a query, SearXNG syntax removed:
// its tokens but the syntax folded into one string, split at what is
// neither a letter nor a digit (one allocation for the text, one for the
// list).
func queryWords(q string) []string {
	buf := make([]byte, 0, len(q)+8)
	for tok := range strings.FieldsSeq(q) {
		if KindOf(tok) == WordPlain {
			buf = append(appendFold(buf, tok), ' ')
		}
	}
	var words []string
	for w := range strings.FieldsFuncSeq(string(buf), notWordRune) {
		if words == nil {
			words = make([]string, 0, 8)
		}
		words = append(words, w)
	}
	return words
}

func notWordRune(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }

// isStopWord reports whether w is one of stopWords (none is longer than
// four bytes).
func isStopWord(w []byte) bool { return len(w) <= 4 && stopWords[string(w)] }

// stopWords are words too common to show that a result is about a query.
var stopWords = map[string]bool{
	"the": true, "an": true, "of": true, "and": true, "or": true, "in": true, "on": true,
	"to": true, "for": true, "is": true, "are": true, "with": true, "how": true, "what": true,
	"de": true, "la": true, "le": true, "les": true, "el": true, "los": true, "et": true, "y": true,
	"der": true, "die": true, "das": true, "und": true, "il": true, "di": true, "en": true, "het": true,
}

// matchWords returns the words worth looking for: without one-letter
// words and stop words, unless that leaves none.
func matchWords(words []string) [][]byte {
	var keep []string
	for _, w := range words {
		if utf8.RuneCountInString(w) > 1 && !stopWords[w] {
			keep = append(keep, w)
		}
	}
	if len(keep) == 0 {
		keep = words
	}
	n := 0
	for _, w := range keep {
		n += len(w)
	}
	all := make([]byte, 0, n) // the words' bytes, in one array
	out := make([][]byte, len(keep))
	for i, w := range keep {
		all = append(all, w...)
		out[i] = all[len(all)-len(w) : len(all) : len(all)]
	}
	return out
}

// latin1Fold and latinExtAFold give the base letter of U+00C0..U+00FF and
// U+0100..U+017F: '.' keeps the rune, '*' is a ligature handled in
// foldRune.
const (
	latin1Fold = "aaaaaa*ceeeeiiii" +
		"dnooooo.ouuuuy**" +
		"aaaaaa*ceeeeiiii" +
		"dnooooo.ouuuuy*y"
	latinExtAFold = "aaaaaaccccccccdd" +
		"ddeeeeeeeeeegggg" +
		"gggghhhhiiiiiiii" +
		"ii**jjkkklllllll" +
		"lllnnnnnnnnnoooo" +
		"oo**rrrrrrssssss" +
		"ssttttttuuuuuuuu" +
		"uuuuwwyyyzzzzzzs"
)

// appendFold appends s lower-cased and without accents: Latin letters lose
// their diacritics (é→e, ß→ss, æ→ae), Greek its tonos, Cyrillic ё→е. Other
// scripts are lower-cased only.
func appendFold(dst []byte, s string) []byte {
	dst = slices.Grow(dst, len(s))
	for i := 0; i < len(s); {
		// A run of ASCII, written in place: most text is.
		n, j := len(dst), i
		for j < len(s) && s[j] < utf8.RuneSelf && n+j-i < cap(dst) {
			j++
		}
		if j > i {
			dst = dst[:n+j-i]
			for k := i; k < j; k++ {
				dst[n+k-i] = asciiLower[s[k]]
			}
			i = j
			continue
		}
		if c := s[i]; c < utf8.RuneSelf { // no room left
			dst = append(dst, asciiLower[c])
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		dst = foldRune(dst, unicode.ToLower(r))
	}
	return dst
}

func foldRune(dst []byte, r rune) []byte {
	var m byte = '.'
	switch {
	case r >= 0xC0 && r <= 0xFF:
		m = latin1Fold[r-0xC0]
	case r >= 0x100 && r <= 0x17F:
		m = latinExtAFold[r-0x100]
	}
	switch m {
	case '.':
	case '*':
		switch r {
		case 'æ', 'Æ':
			return append(dst, "ae"...)
		case 'þ', 'Þ':
			return append(dst, "th"...)
		case 'ß':
			return append(dst, "ss"...)
		case 'ĳ', 'Ĳ':
			return append(dst, "ij"...)
		case 'œ', 'Œ':
			return append(dst, "oe"...)
		}
	default:
		return append(dst, m)
	}
	switch r {
	case 'ά':
		r = 'α'
	case 'έ':
		r = 'ε'
	case 'ή':
		r = 'η'
	case 'ί', 'ϊ', 'ΐ':
		r = 'ι'
	case 'ό':
		r = 'ο'
	case 'ύ', 'ϋ', 'ΰ':
		r = 'υ'
	case 'ώ':
		r = 'ω'
	case 'ς':
		r = 'σ'
	case 'ё':
		r = 'е'
	}
	return utf8.AppendRune(dst, r)
}
