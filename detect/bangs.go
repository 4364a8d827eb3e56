package detect

import (
	_ "embed"
	"sort"
	"strings"
	"sync"
)

// bangsTxt is the names of SearXNG's external bangs, one a line, sorted
// by byte: searx/data/external_bangs.json as of SearXNG 9fea41204
// (2026-08-22), every name its lookup finds (searx/external_bang.py
// get_node) after it lowercases the word, so none with capitals. A bang
// added to SearXNG since is read as a plain word: its redirect is then
// judged as any redirect on a search without a bang.
//
//go:embed bangs.txt
var bangsTxt string

// bangNames splits bangsTxt once, on first use.
var bangNames = sync.OnceValue(func() []string {
	return strings.Split(strings.TrimSuffix(bangsTxt, "\n"), "\n")
})

// knownBang reports whether name ("g" of "!!g") is an external bang
// SearXNG knows; case does not count, as SearXNG lowercases it.
func knownBang(name string) bool {
	if hasUpper(name) {
		name = strings.ToLower(name)
	}
	names := bangNames()
	i := sort.SearchStrings(names, name)
	return i < len(names) && names[i] == name
}

// hasUpper reports whether s has a byte ToLower may change.
func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || ('A' <= c && c <= 'Z') {
			return true
		}
	}
	return false
}
