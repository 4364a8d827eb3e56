package detect

import (
	"slices"
	"testing"
)

// TestKnownBangs: the list is sorted (it is searched so), holds the bangs
// everyone uses, and not the words SearXNG reads as plain.
func TestKnownBangs(t *testing.T) {
	names := bangNames()
	if !slices.IsSorted(names) || len(names) < 10000 {
		t.Fatalf("%d names, sorted %v", len(names), slices.IsSorted(names))
	}
	for _, n := range []string{"g", "w", "ddg", "wiki", "yt", "G", "DDG"} {
		if !knownBang(n) {
			t.Errorf("%q is not known", n)
		}
	}
	for _, n := range []string{"important", "", "!", "zzzzqx", "g ", "aud2eur"} {
		if knownBang(n) {
			t.Errorf("%q is known", n)
		}
	}
}
