package detect

import (
	"testing"
	"time"
)

func TestTimeoutLimit(t *testing.T) {
	cases := map[string]time.Duration{
		"plain words":         0,
		"<6 slowbackend":      6 * time.Second,
		"slowbackend <3":      3 * time.Second,
		"<850 fast":           850 * time.Millisecond,
		"<99 x":               99 * time.Second,
		"<100 x":              100 * time.Millisecond,
		"<6 <2 last wins":     2 * time.Second,
		"< 6 not syntax":      0,
		"<6s not syntax":      0,
		"<-6 not syntax":      0,
		"a<6 not at the word": 0,
		"<":                   0,
	}
	for q, want := range cases {
		if got := TimeoutLimit(q); got != want {
			t.Errorf("TimeoutLimit(%q) = %v, want %v", q, got, want)
		}
	}
}
