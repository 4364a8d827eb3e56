package persist

import (
	"testing"

	"github.com/searxgate/searxgate/internal/deptest"
)

// TestImports keeps persist a mapping between the store's records and
// what pool, proxy (its cache's sealed answers: proxy/cache) and
// directory learned: nothing of the search path's
// own dependencies, no bbolt (store hides it).
func TestImports(t *testing.T) {
	deptest.Check(t, ".",
		"github.com/searxgate/searxgate/store",
		"github.com/searxgate/searxgate/pool",
		"github.com/searxgate/searxgate/proxy",
		"github.com/searxgate/searxgate/proxy/cache",
		"github.com/searxgate/searxgate/directory")
}
