package directory

import (
	_ "embed"
	"slices"
)

// snapshot is the instance list compiled into the binary: the public
// searx-instances list in searx.space's shape, without measurements (so
// every entry gets the default prior). It is rebuilt by
//
//	go test ./directory -run TestSnapshot -update [-yml path/to/searx-instances.yml]
//
// and the committed file is the source of truth at build time.
//
//go:embed snapshot.json
var snapshot []byte

// Embedded returns a copy of the compiled-in snapshot: a searx.space-shaped
// file that Parse reads like a fetched one.
func Embedded() []byte {
	return slices.Clone(snapshot)
}
