package api

import (
	"testing"

	"github.com/searxgate/searxgate/internal/deptest"
)

// TestImports keeps api to what the design allows a face of the search:
// the proxy (search), the results model its answers come in, the reader
// (pages), client (an API key's client key, and what is this machine:
// LoopbackHost, ForwardHeader, as /mcp asks it), and fasthttp.
func TestImports(t *testing.T) {
	deptest.Check(t, ".", "github.com/searxgate/searxgate/proxy", "github.com/searxgate/searxgate/client", "github.com/searxgate/searxgate/results", "github.com/searxgate/searxgate/reader", "github.com/valyala/fasthttp")
}
