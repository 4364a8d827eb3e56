package web

import (
	"testing"

	"github.com/searxgate/searxgate/internal/deptest"
)

// TestDependencies: web imports only the standard library, proxy, pool,
// detect, results, client (who a client is, and its limit) and fasthttp
// (the design's package table), and egress
// for its guarded fetcher: /image_proxy fetches what instances name, and must
// refuse the same private addresses instance fetches refuse (as reader/
// does);
// VictoriaMetrics' metrics for /metrics (process metrics, exposition); and
// internal/logevery, which keeps its refusal lines to one a second.
func TestDependencies(t *testing.T) {
	deptest.Check(t, ".", "github.com/searxgate/searxgate/proxy", "github.com/searxgate/searxgate/client", "github.com/searxgate/searxgate/pool", "github.com/searxgate/searxgate/detect", "github.com/searxgate/searxgate/results", "github.com/searxgate/searxgate/egress", "github.com/valyala/fasthttp", "github.com/VictoriaMetrics/metrics", "github.com/searxgate/searxgate/internal/logevery")
}
