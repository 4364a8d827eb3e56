// Package deptest is the dependency fence of searxgate's packages: a test
// in each of them calls Check so that an import the design's package table
// forbids fails the tests instead of slipping in.
//
// Caveat: Check reads the package's direct imports (its non-test files);
// what those packages import in turn is their own fence's business.
package deptest
