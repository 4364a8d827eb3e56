package results

import (
	"testing"

	"github.com/searxgate/searxgate/internal/deptest"
)

// TestDependencies: results imports only the standard library. detect
// reads answers into it; proxy, web and mcp use it, never the other way.
func TestDependencies(t *testing.T) {
	deptest.Check(t, ".")
}
