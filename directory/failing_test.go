package directory

import (
	"slices"
	"testing"
)

// TestFailingEngines: searx.space's test searches of one engine
// (timing.search_go: google, timing.search_wp: wikipedia, as its
// instances.json holds them) that never succeeded name the engine
// failing there; a check that succeeded at times, or none, names none.
func TestFailingEngines(t *testing.T) {
	const head = `{"instances": {"https://a.example/": {"network_type": "normal", "http": {"status_code": 200}, "version": "1",
		"timing": {"search": {"success_percentage": 100, "all": {"median": 0.5}}`
	tests := []struct {
		name, checks string
		want         []string
	}{
		{"google failing", `, "search_go": {"success_percentage": 0.0, "error": "No result"}, "search_wp": {"success_percentage": 100.0}`, []string{"google"}},
		{"both failing", `, "search_wp": {"success_percentage": 0.0, "error": "No result"}, "search_go": {"success_percentage": 0.0, "error": "No result"}`, []string{"google", "wikipedia"}},
		{"at times", `, "search_go": {"success_percentage": 50.0, "error": "No result"}`, nil},
		{"no checks", ``, nil},
		{"not a number", `, "search_go": {"success_percentage": "none"}`, nil},
	}
	for _, tt := range tests {
		entries, err := Parse([]byte(head+tt.checks+`}}}}`), Filter{})
		if err != nil || len(entries) != 1 {
			t.Fatalf("%s: %d entries, %v", tt.name, len(entries), err)
		}
		if got := entries[0].Failing; !slices.Equal(got, tt.want) {
			t.Errorf("%s: Failing = %v, want %v", tt.name, got, tt.want)
		}
	}
}
