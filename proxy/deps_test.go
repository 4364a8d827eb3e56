package proxy

import (
	"testing"

	"github.com/searxgate/searxgate/internal/deptest"
)

// TestImports keeps proxy to what the design allows it: the pool, the
// verdicts, fasthttp (the arguments of an upstream search), and its own
// upstream client; persistence only through its small interfaces.
// VictoriaMetrics' metrics keeps the search path's counters and
// histograms (see Metrics).
func TestImports(t *testing.T) {
	deptest.Check(t, ".", "github.com/searxgate/searxgate/pool", "github.com/searxgate/searxgate/detect", "github.com/valyala/fasthttp",
		"github.com/VictoriaMetrics/metrics", "github.com/searxgate/searxgate/proxy/upstream")
}
