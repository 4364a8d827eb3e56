package mcp

import (
	"strings"
	"testing"
)

// TestSearchTextSaysThin: an agent reads why an answer is thin right
// under who answered it, and nothing of the kind for a full answer.
func TestSearchTextSaysThin(t *testing.T) {
	o := SearchOutput{Query: "q", Instance: "https://a.example/", Results: []SearchResult{{Title: "t", URL: "https://x.example/"}},
		Thin: "google, bing suspended on a.example; 1 result from wikipedia"}
	text := renderSearch(o)
	first, rest, _ := strings.Cut(text, "\n")
	if !strings.HasPrefix(rest, "A thin answer: google, bing suspended on a.example; 1 result from wikipedia.\n") {
		t.Fatalf("the thin note is not under %q:\n%s", first, text)
	}
	o.Thin = ""
	if text := renderSearch(o); strings.Contains(text, "thin") {
		t.Fatalf("a full answer says thin:\n%s", text)
	}
}
