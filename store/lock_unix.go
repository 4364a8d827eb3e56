//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package store

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// openLocked opens the file bbolt asked for, takes its exclusive flock
// (waiting until deadline), and only then checks the file's structure.
// bbolt takes the same lock again on the same descriptor, which succeeds
// at once, so the file is never read or judged without the lock.
func openLocked(name string, flag int, mode os.FileMode, deadline time.Time) (*os.File, error) {
	f, err := os.OpenFile(name, flag, mode)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			_ = f.Close()
			return nil, fmt.Errorf("store: locking %s: %w", name, err)
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			_ = f.Close()
			return nil, lockedError(name)
		}
		time.Sleep(min(wait, 10*time.Millisecond))
	}
	if err := checkOpenFile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}
