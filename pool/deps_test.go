package pool

import (
	"testing"

	"searxgate/internal/deptest"
)

// The design allows pool/ the standard library only.
func TestDependencies(t *testing.T) {
	deptest.Check(t, ".")
}
