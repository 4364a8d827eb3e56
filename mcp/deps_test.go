package mcp

import (
	"testing"

	"github.com/searxgate/searxgate/internal/deptest"
)

// TestImports keeps mcp to what the design allows it: the proxy (search),
// the results model its answers come in, the reader (pages), client (who
// a client is) and the MCP Go SDK.
func TestImports(t *testing.T) {
	deptest.Check(t, ".", "github.com/searxgate/searxgate/proxy", "github.com/searxgate/searxgate/client", "github.com/searxgate/searxgate/results", "github.com/searxgate/searxgate/reader", "github.com/modelcontextprotocol/go-sdk/")
}
