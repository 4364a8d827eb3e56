package cachetest

import (
	"testing"

	"github.com/searxgate/searxgate/internal/deptest"
)

// TestImports keeps the test helpers to the cache they stand in for.
func TestImports(t *testing.T) {
	deptest.Check(t, ".", "github.com/searxgate/searxgate/proxy/cache")
}
