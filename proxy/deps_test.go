package proxy

import (
	"testing"

	"github.com/searxgate/searxgate/internal/deptest"
)

// TestImports keeps proxy to what the design allows it: the pool, the
// verdicts and fasthttp; persistence only through its small interfaces.
// klauspost/compress is fasthttp's own compression library, imported for
// its fast inflate from a *bytes.Reader (see decodeBody). VictoriaMetrics'
// metrics keeps the search path's counters and histograms (see Metrics).
func TestImports(t *testing.T) {
	deptest.Check(t, ".", "github.com/searxgate/searxgate/pool", "github.com/searxgate/searxgate/detect", "github.com/valyala/fasthttp",
		"github.com/klauspost/compress/gzip", "github.com/VictoriaMetrics/metrics")
}
