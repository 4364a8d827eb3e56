package reader

import (
	"testing"

	"github.com/searxgate/searxgate/internal/deptest"
)

// TestImports keeps reader to what the design allows it: the guarded
// fetcher (egress), the readability and Markdown libraries (with the HTML
// parser they share) and its own PDF room (reader/pdf).
func TestImports(t *testing.T) {
	deptest.Check(t, ".", "github.com/searxgate/searxgate/egress", "codeberg.org/readeck/go-readability/v2",
		"github.com/JohannesKaufmann/html-to-markdown/v2/", "golang.org/x/net/html", "golang.org/x/net/html/",
		"github.com/searxgate/searxgate/reader/pdf", "github.com/searxgate/searxgate/reader/internal/mdtext",
		"github.com/searxgate/searxgate/reader/internal/fair")
}
