package pdf

import (
	"testing"

	"github.com/searxgate/searxgate/internal/deptest"
)

// TestImports keeps the PDF room to the standard library, the PDF parser
// and the reader's Markdown helpers: nothing of the reader, the network
// or the rest of searxgate reaches the worker process.
func TestImports(t *testing.T) {
	deptest.Check(t, ".", "github.com/ledongthuc/pdf", "github.com/searxgate/searxgate/reader/internal/mdtext",
		"github.com/searxgate/searxgate/reader/internal/fair")
}
