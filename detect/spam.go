package detect

import (
	"bytes"

	"github.com/searxgate/searxgate/results"
)

// templateSpam reports whether results are spam that wraps cuts of the
// query in one canned text with a counter: "Buy rust borrow cheap —
// spam 1" / "Best checker deals, offer 1", "Buy checker rust cheap —
// spam 2" / "Best borrow deals, offer 2". templated misses it (each title
// differs by its counter), echoes too (the canned words are not the
// query's). Each result's title and snippet are reduced to their
// skeleton: their folded words but the query's, stop words and numbers.
// Off topic: more than half of the results, and at least TemplateMin,
// share one skeleton pair, neither empty, and the query's words they hold
// are not the same in each: a generator cutting the query differently
// every time. An honest series ("Go generics, part 3: ...") or SearXNG's
// own test engine ("Result 3 for hello world"), the real captures'
// results (TestTemplateSpamSparesCaptures), hold the same words in every
// result, and are spared; so is spam with the same cut on every result.
// words are asked's worth looking for (matchWords). Titles are read
// first, snippets only when most titles share a skeleton; skeletons are
// compared by a 64-bit hash. It allocates nothing for results of usual
// sizes.
func templateSpam(asked []string, words [][]byte, rs []results.Result) bool {
	n := len(rs)
	if n < TemplateMin || n > results.MaxResults || len(asked) == 0 {
		return false
	}
	in := newWordSet(asked)
	need := max(n/2+1, TemplateMin)
	var scratch [512]byte
	var title, held [results.MaxResults]uint64
	for i := range rs {
		title[i], held[i] = skeletonHash(scratch[:0], in, words, rs[i].Title)
	}
	t, ok := majority(title[:n], need)
	if !ok {
		return false
	}
	// The snippets' words first (folding is cheaper than the skeleton):
	// a series holds the same words in every result and stops here.
	first, varying := uint64(0), false
	for i := range rs {
		if title[i] != t {
			continue
		}
		_, h := foldHeld(scratch[:0], words, rs[i].Content)
		held[i] |= h << 32
		if first == 0 {
			first = held[i]
		}
		varying = varying || held[i] != first
	}
	if !varying {
		return false
	}
	var snippet [results.MaxResults]uint64
	for i := range rs {
		if title[i] == t && held[i] != 0 { // a result without a word of the query is in no group
			snippet[i], _ = skeletonHash(scratch[:0], in, words, rs[i].Content)
		}
	}
	sn, ok := majority(snippet[:n], need)
	if !ok {
		return false
	}
	first, varying = 0, false
	for i := range rs {
		if title[i] == t && snippet[i] == sn {
			if first == 0 {
				first = held[i]
			}
			varying = varying || held[i] != first
		}
	}
	return varying
}

// majority returns the value, not 0, that at least need of hs hold, when
// one does (need is more than half of them): Boyer and Moore's vote,
// then a count.
func majority(hs []uint64, need int) (uint64, bool) {
	var cand uint64
	votes := 0
	for _, h := range hs {
		switch {
		case votes == 0:
			cand, votes = h, 1
		case h == cand:
			votes++
		default:
			votes--
		}
	}
	if cand == 0 {
		return 0, false
	}
	count := 0
	for _, h := range hs {
		if h == cand {
			count++
		}
	}
	return cand, count >= need
}

// skeletonHash folds text into buf and returns the hash (FNV-1a, never
// 0) of its skeleton, its words but the query's (in), stop words and
// numbers, 0 for an empty skeleton; and which of words (the first 32) it
// holds, bit j for words[j].
func skeletonHash(buf []byte, in wordSet, words [][]byte, text string) (hash, held uint64) {
	b, held := foldHeld(buf, words, text)
	const offset, prime = 14695981039346656037, 1099511628211
	hash = offset
	empty := true
	for {
		var w []byte
		if w, b = nextWord(b); w == nil {
			break
		}
		if isStopWord(w) || allDigits(w) || in.has(w) {
			continue
		}
		empty = false
		for _, c := range w {
			hash = (hash ^ uint64(c)) * prime
		}
		hash = (hash ^ ' ') * prime
	}
	if empty {
		return 0, held
	}
	return max(hash, 1), held
}

// foldHeld folds text into buf and says which of words (the first 32) it
// holds, bit j for words[j].
func foldHeld(buf []byte, words [][]byte, text string) (folded []byte, held uint64) {
	folded = appendFold(buf, text)
	for j, w := range words[:min(len(words), 32)] {
		if bytes.Contains(folded, w) {
			held |= 1 << j
		}
	}
	return folded, held
}
