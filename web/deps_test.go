package web

import (
	"testing"

	"github.com/searxgate/searxgate/internal/deptest"
)

// TestDependencies: web imports only the standard library, proxy, pool,
// detect and fasthttp (the design's package table), and directory for its
// address guard: /image_proxy fetches what instances name, and must refuse
// the same private addresses instance fetches refuse (as reader/ does);
// and VictoriaMetrics' metrics for /metrics (process metrics, exposition).
func TestDependencies(t *testing.T) {
	deptest.Check(t, ".", "github.com/searxgate/searxgate/proxy", "github.com/searxgate/searxgate/pool", "github.com/searxgate/searxgate/detect", "github.com/searxgate/searxgate/directory", "github.com/valyala/fasthttp", "github.com/VictoriaMetrics/metrics")
}
