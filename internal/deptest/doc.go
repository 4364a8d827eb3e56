// Package deptest fences the imports of searxgate's packages. Each package
// has a test that calls Check. An import the design's package table forbids
// then fails that test instead of slipping in.
//
// Check reads only the package's direct imports, from its non-test files.
// What those packages import is their own fence's business.
//
// Its own tests also keep every doc.go in the module short: at most 22
// words a sentence on average, and a few hundred words in all.
package deptest
