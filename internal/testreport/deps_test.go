package main

import (
	"testing"

	"github.com/searxgate/searxgate/internal/deptest"
)

// TestImports: the standard library only.
func TestImports(t *testing.T) { deptest.Check(t, ".") }
