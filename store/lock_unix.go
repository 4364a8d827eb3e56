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
//
// A compaction renames a new file over name while the old one is still
// locked: a process that was waiting for the old file's lock gets it once
// the old file is closed, but that file is no longer at name. So the lock
// counts only when name still is the file locked; otherwise name is opened
// again.
func openLocked(name string, flag int, mode os.FileMode, deadline time.Time) (*os.File, error) {
	for {
		f, err := lockFile(name, flag, mode, deadline)
		if err != nil {
			return nil, err
		}
		held, herr := f.Stat()
		now, nerr := os.Stat(name)
		if herr == nil && nerr == nil && !os.SameFile(held, now) {
			_ = f.Close()
			if !lockClock.Now().Before(deadline) {
				return nil, lockedError(name)
			}
			continue
		}
		if err := checkOpenFile(f); err != nil {
			_ = f.Close()
			return nil, err
		}
		return f, nil
	}
}

// lockFile opens name and takes its exclusive flock, waiting until deadline.
func lockFile(name string, flag int, mode os.FileMode, deadline time.Time) (*os.File, error) {
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
		wait := deadline.Sub(lockClock.Now())
		if wait <= 0 {
			_ = f.Close()
			return nil, lockedError(name)
		}
		retry, _ := lockClock.NewTimer(min(wait, 10*time.Millisecond))
		<-retry
	}
	return f, nil
}
