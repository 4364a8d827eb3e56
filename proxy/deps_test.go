package proxy

import (
	"testing"

	"searxgate/internal/deptest"
)

// TestImports keeps proxy to what the design allows it: the pool, the
// verdicts and fasthttp; persistence only through its small interfaces.
func TestImports(t *testing.T) {
	deptest.Check(t, ".", "searxgate/pool", "searxgate/detect", "github.com/valyala/fasthttp")
}
