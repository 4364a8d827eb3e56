package directory

import (
	"testing"

	"github.com/searxgate/searxgate/internal/deptest"
)

// TestDependencies keeps directory on the standard library, gjson and
// egress (the guarded fetcher the list is fetched with), as the design's
// package table says.
func TestDependencies(t *testing.T) {
	deptest.Check(t, ".", "github.com/tidwall/gjson", "github.com/searxgate/searxgate/egress")
}
