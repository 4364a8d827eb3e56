package detect

import (
	"bytes"

	"github.com/searxgate/searxgate/results"
)

// templateSpam reports whether results are spam that wraps parts of the
// query in one canned text with a counter: "Buy rust borrow cheap —
// spam 1", "Buy checker rust cheap — spam 2", each with the snippet
// "Best rust deals, offer N". templated misses it (each title differs by
// its counter), echoes too (the canned words are not the query's). Each
// result's title and snippet are reduced to their skeleton: their folded
// words but the query's, stop words and numbers. Off topic: more than
// half of the results, and at least TemplateMin, share one skeleton pair,
// neither empty, and a title or a snippet among them lacks a word of the
// query. Honest results have titles and snippets of their own.
// Not caught: a canned text around the whole query on every result
// ("Result N for <q>"), which is what SearXNG's own test engine answers,
// the real captures' results (see TestTemplateSpamSparesCaptures).
// words are asked's worth looking for (matchWords).
func templateSpam(asked []string, words [][]byte, rs []results.Result) bool {
	n := len(rs)
	if n < TemplateMin || len(asked) == 0 {
		return false
	}
	in := newWordSet(asked)
	type group struct {
		n       int
		partial bool // a title or snippet of the group lacks one of words
	}
	groups := make(map[string]group, n)
	var buf, title, snippet []byte
	for i := range rs {
		x := &rs[i]
		var held [2]int // the words the title holds, and the snippet
		for f, text := range [2]string{x.Title, x.Content} {
			buf = appendFold(buf[:0], text)
			for _, w := range words {
				if bytes.Contains(buf, w) {
					held[f]++
				}
			}
		}
		if held[0]+held[1] == 0 {
			continue
		}
		title = skeleton(title[:0], in, x.Title)
		snippet = skeleton(snippet[:0], in, x.Content)
		if len(title) == 0 || len(snippet) == 0 {
			continue
		}
		key := string(title) + "\x00" + string(snippet)
		g := groups[key]
		g.n++
		g.partial = g.partial || held[0] < len(words) || held[1] < len(words)
		groups[key] = g
	}
	need := max(n/2+1, TemplateMin)
	for _, g := range groups {
		if g.n >= need && g.partial {
			return true
		}
	}
	return false
}

// skeleton appends to dst the folded words of text that are neither the
// query's (in), nor stop words, nor numbers, one space apart.
func skeleton(dst []byte, in wordSet, text string) []byte {
	var scratch [256]byte
	b := appendFold(scratch[:0], text)
	for {
		var w []byte
		if w, b = nextWord(b); w == nil {
			break
		}
		if stopWords[string(w)] || allDigits(w) || in.has(w) {
			continue
		}
		if len(dst) > 0 {
			dst = append(dst, ' ')
		}
		dst = append(dst, w...)
	}
	return dst
}
