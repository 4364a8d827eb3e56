package cache

import (
	"testing"

	"github.com/searxgate/searxgate/internal/deptest"
)

// TestImports keeps the cache below the search path: the standard
// library and the clock only. It never imports proxy: the search path
// uses it, never the other way.
func TestImports(t *testing.T) {
	deptest.Check(t, ".")
}
