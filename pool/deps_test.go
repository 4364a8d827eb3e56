package pool

import (
	"testing"

	"github.com/searxgate/searxgate/internal/deptest"
)

// The design allows pool/ the standard library only.
func TestDependencies(t *testing.T) {
	deptest.Check(t, ".")
}
