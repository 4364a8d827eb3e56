package mcp

import (
	"testing"

	"searxgate/internal/deptest"
)

// TestImports keeps mcp to what the design allows it: the proxy (search),
// the reader (pages) and the MCP Go SDK.
func TestImports(t *testing.T) {
	deptest.Check(t, ".", "searxgate/proxy", "searxgate/reader", "github.com/modelcontextprotocol/go-sdk/")
}
