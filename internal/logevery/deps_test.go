package logevery

import (
	"testing"

	"github.com/searxgate/searxgate/internal/deptest"
)

// TestImports: the standard library only, so every package may use it.
func TestImports(t *testing.T) { deptest.Check(t, ".") }
