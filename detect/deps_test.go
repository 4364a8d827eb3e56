package detect

import (
	"testing"

	"github.com/searxgate/searxgate/internal/deptest"
)

// TestDependencies: detect imports only the standard library, results
// (the model it reads answers into), goquery and gjson (the design's
// package table).
func TestDependencies(t *testing.T) {
	deptest.Check(t, ".", "github.com/searxgate/searxgate/results", "github.com/PuerkitoBio/goquery", "github.com/tidwall/gjson")
}
