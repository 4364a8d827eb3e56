package polite

import (
	"testing"

	"github.com/searxgate/searxgate/internal/deptest"
)

// TestImports keeps the politeness arithmetic to the standard library:
// never the proxy, the upstream client or the pool.
func TestImports(t *testing.T) {
	deptest.Check(t, ".")
}
