package proxy

import (
	"testing"

	"github.com/searxgate/searxgate/internal/deptest"
)

// TestImports keeps proxy to what the design allows it: the pool, the
// verdicts, the results model, fasthttp (the arguments of an upstream
// search), its own upstream client, politeness arithmetic, instance
// records and cache; persistence only through its small interfaces.
// Those four never import proxy (their own fences say so): the search
// path uses them, never the other way. VictoriaMetrics' metrics keeps the
// search path's counters and histograms (see Metrics).
func TestImports(t *testing.T) {
	deptest.Check(t, ".", "github.com/searxgate/searxgate/pool", "github.com/searxgate/searxgate/detect",
		"github.com/searxgate/searxgate/results", "github.com/valyala/fasthttp",
		"github.com/VictoriaMetrics/metrics", "github.com/searxgate/searxgate/proxy/upstream", "github.com/searxgate/searxgate/proxy/polite",
		"github.com/searxgate/searxgate/proxy/instance", "github.com/searxgate/searxgate/proxy/cache")
}
