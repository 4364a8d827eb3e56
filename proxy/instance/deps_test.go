package instance

import (
	"testing"

	"github.com/searxgate/searxgate/internal/deptest"
)

// TestImports keeps the instance records below the search path: the pool
// (each instance's learned state), the verdicts (a /config read, a
// refusal), the upstream client (its hosts live in the records) and the
// politeness arithmetic (its rings do). Never proxy: the search path asks
// the records, never the other way.
func TestImports(t *testing.T) {
	deptest.Check(t, ".", "github.com/searxgate/searxgate/pool", "github.com/searxgate/searxgate/detect",
		"github.com/searxgate/searxgate/proxy/upstream", "github.com/searxgate/searxgate/proxy/polite")
}
