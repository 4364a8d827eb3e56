package operator

import (
	"testing"

	"github.com/searxgate/searxgate/internal/deptest"
)

// TestImports keeps operator to the pool, the directory's URL rules, the
// address guard (egress) and the store's record type; the search path only
// through its small interface.
func TestImports(t *testing.T) {
	deptest.Check(t, ".", "github.com/searxgate/searxgate/pool", "github.com/searxgate/searxgate/directory", "github.com/searxgate/searxgate/egress", "github.com/searxgate/searxgate/store")
}
