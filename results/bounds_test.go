package results

import (
	"fmt"
	"testing"
)

// TestBoundsMerge: answers merged keep MaxResults between them.
func TestBoundsMerge(t *testing.T) {
	var answers []*Page
	for a := range 3 {
		r := &Page{Query: "q"}
		for i := range MaxResults {
			u := fmt.Sprintf("https://example.org/%d/%d", a, i)
			r.Results = append(r.Results, Result{URL: u, Title: "t", Positions: []int{i + 1}})
		}
		answers = append(answers, r)
	}
	m := Merge(answers...)
	if len(m.Results) != MaxResults || m.Dropped != 2*MaxResults {
		t.Fatalf("merged: %d results, %d dropped", len(m.Results), m.Dropped)
	}
}

func TestClip(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 3, "abc"}, {"abc", 2, "ab"}, {"aé", 2, "a"}, {"aé", 3, "aé"}, {"€", 2, ""}, {"", 0, ""},
	} {
		if got := clip(c.s, c.n); got != c.want {
			t.Errorf("clip(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}
