package instance

import "testing"

// TestWhyLabels: every Why has its own label, and reads back from it.
func TestWhyLabels(t *testing.T) {
	seen := map[string]bool{}
	for _, w := range append([]Why{Ready}, Whys...) {
		b, _ := w.MarshalText()
		var back Why
		if err := back.UnmarshalText(b); err != nil || back != w || seen[string(b)] || (w != Ready && len(b) == 0) {
			t.Errorf("%d: label %q reads back as %d (%v)", w, b, back, err)
		}
		seen[string(b)] = true
	}
}
