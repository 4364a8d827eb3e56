package directory

import (
	_ "embed"
	"slices"
	"time"

	"github.com/tidwall/gjson"
)

// snapshot is the instance list compiled into the binary: the public
// searx-instances list in searx.space's shape, without measurements (so
// every entry gets the default prior). It is rebuilt by
//
//	go test ./directory -run TestSnapshot -update [-yml path/to/searx-instances.yml]
//
// and the committed file is the source of truth at build time. Its
// metadata.built is the day it was built (SnapshotDate).
//
//go:embed snapshot.json
var snapshot []byte

// Embedded returns a copy of the compiled-in snapshot: a searx.space-shaped
// file that Parse reads like a fetched one.
func Embedded() []byte {
	return slices.Clone(snapshot)
}

// SnapshotDate is the day the compiled-in snapshot was built (its
// metadata.built), zero when it does not say.
func SnapshotDate() time.Time {
	t, err := time.Parse(time.DateOnly, gjson.GetBytes(snapshot, "metadata.built").String())
	if err != nil {
		return time.Time{}
	}
	return t
}
