package web

import (
	"testing"

	"searxgate/internal/deptest"
)

// TestDependencies: web imports only the standard library, proxy, pool,
// detect and fasthttp (the design's package table).
func TestDependencies(t *testing.T) {
	deptest.Check(t, ".", "searxgate/proxy", "searxgate/pool", "searxgate/detect", "github.com/valyala/fasthttp")
}
