package deptest

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// module is the import path every searxgate package starts with.
const module = "github.com/searxgate/searxgate/"

// TestLayoutMatchesImports holds the code layout table of
// docs/how-it-works.md to the code: a row for every package, and in its
// last column exactly the searxgate packages it imports (internal/clock
// left out: every package may use it). A new package, a new import or
// one dropped fails here until the table says it.
func TestLayoutMatchesImports(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "how-it-works.md"))
	if err != nil {
		t.Fatal(err)
	}
	table := layoutTable(string(doc))
	if len(table) < 10 {
		t.Fatalf("docs/how-it-works.md: %d rows read from the code layout table", len(table))
	}
	code := moduleImports(t, root)
	for pkg, imports := range code {
		row, ok := table[pkg]
		if !ok {
			t.Errorf("package %s has no row in the code layout table", pkg)
			continue
		}
		if !slices.Equal(row, imports) {
			t.Errorf("package %s: the table says it imports %v, the code %v", pkg, row, imports)
		}
	}
	for pkg := range table {
		if _, ok := code[pkg]; !ok {
			t.Errorf("the code layout table has a row for %s, which is no package", pkg)
		}
	}
}

var (
	rowRE  = regexp.MustCompile("^\\| `([^`]+)` \\|.*\\|([^|]*)\\|$")
	nameRE = regexp.MustCompile("`([^`]+)`")
)

// layoutTable reads the rows of the "Code layout" section's table: each
// package and the sorted packages its last column names.
func layoutTable(doc string) map[string][]string {
	_, section, _ := strings.Cut(doc, "## Code layout")
	section, _, _ = strings.Cut(section, "\n## ")
	out := map[string][]string{}
	for line := range strings.SplitSeq(section, "\n") {
		m := rowRE.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		names := []string{}
		for _, n := range nameRE.FindAllStringSubmatch(m[2], -1) {
			names = append(names, n[1])
		}
		slices.Sort(names)
		out[m[1]] = names
	}
	return out
}

// moduleImports is every package of the module under root (testdata and
// hidden folders left out) and the sorted searxgate packages its non-test
// files import, internal/clock left out.
func moduleImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "out" || name == "node_modules") {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		if err != nil {
			return nil // no Go files here (or only tests)
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		names := []string{}
		for _, imp := range pkg.Imports {
			if p, ok := strings.CutPrefix(imp, module); ok && imp != Clock {
				names = append(names, p)
			}
		}
		slices.Sort(names)
		out[filepath.ToSlash(rel)] = names
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
