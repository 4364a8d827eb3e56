//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package store

import (
	"os"
	"time"
)

// openLocked opens the file bbolt asked for and checks its structure.
// Without flock the lock is bbolt's own, taken after this returns.
func openLocked(name string, flag int, mode os.FileMode, _ time.Time) (*os.File, error) {
	f, err := os.OpenFile(name, flag, mode)
	if err != nil {
		return nil, err
	}
	if err := checkOpenFile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}
