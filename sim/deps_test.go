package sim

import (
	"testing"

	"github.com/searxgate/searxgate/internal/deptest"
)

// TestDependencies keeps sim to what the design allows it: the standard
// library and fasthttp (with its in-memory listener).
func TestDependencies(t *testing.T) {
	deptest.Check(t, ".", "github.com/valyala/fasthttp", "github.com/valyala/fasthttp/fasthttputil")
}
