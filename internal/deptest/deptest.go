package deptest

import (
	"go/build"
	"strings"
	"testing"
)

// Check fails t when the non-test Go files of the package in dir import
// anything but the standard library, github.com/searxgate/searxgate/internal/clock (std only:
// how every package tells the time) and the import paths (or path prefixes
// ending in "/") listed in allowed.
func Check(t testing.TB, dir string, allowed ...string) {
	t.Helper()
	pkg, err := build.ImportDir(dir, 0)
	if err != nil {
		t.Fatalf("deptest: reading %s: %v", dir, err)
	}
	for _, imp := range pkg.Imports {
		if isStd(imp) || imp == Clock || permitted(imp, allowed) {
			continue
		}
		t.Errorf("package %s imports %q, which the design's package table forbids (allowed: std %s)",
			pkg.ImportPath, imp, strings.Join(allowed, ", "))
	}
}

// Clock is the one package of this module every package may import.
const Clock = "github.com/searxgate/searxgate/internal/clock"

// isStd reports whether path belongs to the standard library: its first
// element has no dot and it is not in this module.
func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

func permitted(path string, allowed []string) bool {
	for _, a := range allowed {
		if path == a || (strings.HasSuffix(a, "/") && strings.HasPrefix(path, a)) {
			return true
		}
	}
	return false
}
