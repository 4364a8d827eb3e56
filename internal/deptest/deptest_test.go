package deptest

import "testing"

func TestIsStd(t *testing.T) {
	for path, want := range map[string]bool{
		"fmt":                                 true,
		"net/http":                            true,
		"github.com/searxgate/searxgate/pool": false,
		"github.com/tidwall/gjson":            false,
		"go.etcd.io/bbolt":                    false,
		"golang.org/x/net/html":               false,
	} {
		if got := isStd(path); got != want {
			t.Errorf("isStd(%q) = %v, want %v", path, got, want)
		}
	}
}

func TestPermitted(t *testing.T) {
	allowed := []string{"github.com/tidwall/gjson", "github.com/PuerkitoBio/goquery/"}
	cases := map[string]bool{
		"github.com/tidwall/gjson":             true,
		"github.com/tidwall/gjsonx":            false,
		"github.com/PuerkitoBio/goquery/x":     true,
		"github.com/searxgate/searxgate/store": false,
	}
	for path, want := range cases {
		if got := permitted(path, allowed); got != want {
			t.Errorf("permitted(%q) = %v, want %v", path, got, want)
		}
	}
}

// recorder is a testing.TB that keeps the errors Check reports.
type recorder struct {
	testing.TB
	errors int
}

func (r *recorder) Helper()                           {}
func (r *recorder) Errorf(format string, args ...any) { r.errors++ }

func TestCheck(t *testing.T) {
	// This package imports only std: nothing to report.
	Check(t, ".")

	// testdata/bad imports github.com/searxgate/searxgate/store: one forbidden import.
	r := &recorder{TB: t}
	Check(r, "testdata/bad")
	if r.errors != 1 {
		t.Fatalf("Check on testdata/bad reported %d errors, want 1", r.errors)
	}
	r = &recorder{TB: t}
	Check(r, "testdata/bad", "github.com/searxgate/searxgate/store")
	if r.errors != 0 {
		t.Fatalf("Check with github.com/searxgate/searxgate/store allowed reported %d errors, want 0", r.errors)
	}
}
