package operator

import (
	"testing"

	"searxgate/internal/deptest"
)

// TestImports keeps operator to the pool, the directory's guard and the
// store's record type; the search path only through its small interface.
func TestImports(t *testing.T) {
	deptest.Check(t, ".", "searxgate/pool", "searxgate/directory", "searxgate/store")
}
