package main

import (
	"go/build"
	"slices"
	"testing"
)

// TestOnlyStoreImportsBbolt: the wiring reaches bbolt only through store,
// which hides it (the other packages' own fences forbid it already).
func TestOnlyStoreImportsBbolt(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(pkg.Imports, "go.etcd.io/bbolt") {
		t.Fatal("cmd/searxgate imports bbolt; go through store")
	}
	if !slices.Contains(pkg.Imports, "github.com/searxgate/searxgate/store") {
		t.Fatal("cmd/searxgate does not import store: this test checks nothing")
	}
}
