package upstream

import (
	"testing"

	"github.com/searxgate/searxgate/internal/deptest"
)

// TestImports keeps the upstream client to talking to instances: fasthttp,
// the verdicts' header and reason types, and klauspost/compress
// (fasthttp's own compression library, imported for its fast inflate
// from a *bytes.Reader; see decodeBody). Never the proxy, the politeness
// package or the pool: it is told whom to ask, it does not choose.
func TestImports(t *testing.T) {
	deptest.Check(t, ".", "github.com/searxgate/searxgate/detect", "github.com/valyala/fasthttp",
		"github.com/klauspost/compress/gzip")
}
