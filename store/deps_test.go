package store

import (
	"testing"

	"github.com/searxgate/searxgate/internal/deptest"
)

// The design's package table: store may import std and bbolt, and is the
// only package that imports bbolt.
func TestDependencies(t *testing.T) {
	deptest.Check(t, ".", "go.etcd.io/bbolt", "go.etcd.io/bbolt/errors")
}
