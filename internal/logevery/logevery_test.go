package logevery

import (
	"testing"
	"time"
)

// TestGate: the first line passes, those within the interval are held
// back and counted, the next one after it passes with that count.
func TestGate(t *testing.T) {
	var g Gate
	t0 := time.Unix(1_800_000_000, 0)
	steps := []struct {
		at   time.Duration
		held int
		ok   bool
	}{
		{0, 0, true}, {100 * time.Millisecond, 0, false}, {999 * time.Millisecond, 0, false},
		{time.Second, 2, true}, {1500 * time.Millisecond, 0, false}, {3 * time.Second, 1, true},
	}
	for _, s := range steps {
		if held, ok := g.Pass(t0.Add(s.at), time.Second); held != s.held || ok != s.ok {
			t.Fatalf("at %v: %d, %v; want %d, %v", s.at, held, ok, s.held, s.ok)
		}
	}
}
