package pdf

import (
	"fmt"
	"strings"
	"unicode"
)

// wordStats compares the words of a text read by searxgate with those of
// a reference (pdftotext's): how many of the reference's words it has
// (counted with repeats), and its run-together words, words of its own
// that are two of the reference's words joined.
type wordStats struct {
	Ref, Present int
	RunTogether  []string
}

func (s wordStats) String() string {
	return fmt.Sprintf("%d of %d reference words (%.1f%%), %d run together %v", s.Present, s.Ref,
		100*float64(s.Present)/float64(max(s.Ref, 1)), len(s.RunTogether), s.RunTogether[:min(len(s.RunTogether), 8)])
}

// words splits s into words: runs of letters and digits, lower-cased.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func compareWords(ref, got string) wordStats {
	refWords := words(ref)
	have := map[string]int{}
	for _, w := range words(got) {
		have[w]++
	}
	known := map[string]bool{}
	for _, w := range refWords {
		known[w] = true
	}
	st := wordStats{Ref: len(refWords)}
	left := map[string]int{}
	for k, v := range have {
		left[k] = v
	}
	for _, w := range refWords {
		if left[w] > 0 {
			left[w]--
			st.Present++
		}
	}
	for w := range have {
		if known[w] || len(w) < 4 {
			continue
		}
		for i := 2; i <= len(w)-2; i++ {
			if known[w[:i]] && known[w[i:]] {
				st.RunTogether = append(st.RunTogether, w)
				break
			}
		}
	}
	return st
}
