package client

import (
	"testing"

	"github.com/searxgate/searxgate/internal/deptest"
)

// TestImports keeps the client's room at the bottom of the house: the
// standard library and fasthttp (a key read from a request) only. Every
// face asks it; it asks none of them.
func TestImports(t *testing.T) {
	deptest.Check(t, ".", "github.com/valyala/fasthttp")
}
