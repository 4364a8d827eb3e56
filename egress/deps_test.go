package egress

import (
	"testing"

	"github.com/searxgate/searxgate/internal/deptest"
)

// TestDependencies keeps egress on the standard library: every door that
// leaves searxgate for the web imports it, and it imports none of them.
func TestDependencies(t *testing.T) {
	deptest.Check(t, ".")
}
