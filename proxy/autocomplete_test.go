package proxy

import "testing"

func TestParseSuggestions(t *testing.T) {
	cases := map[string][]string{
		`["hel", ["hello", "help", " "]]`: {"hello", "help"},
		`["hello", "help"]`:               {"hello", "help"},
		`[]`:                              {},
		`["only"]`:                        {"only"},
	}
	for in, want := range cases {
		got, err := parseSuggestions([]byte(in))
		if err != nil || len(got) != len(want) {
			t.Fatalf("%s: %q, %v; want %q", in, got, err, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: %q, want %q", in, got, want)
			}
		}
	}
	for _, bad := range []string{`{}`, `[1, 2, 3]`, `not json`} {
		if _, err := parseSuggestions([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
