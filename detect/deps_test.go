package detect

import (
	"testing"

	"github.com/searxgate/searxgate/internal/deptest"
)

// TestDependencies: detect imports only the standard library, goquery and
// gjson (the design's package table).
func TestDependencies(t *testing.T) {
	deptest.Check(t, ".", "github.com/PuerkitoBio/goquery", "github.com/tidwall/gjson")
}
