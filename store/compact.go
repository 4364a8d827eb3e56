package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// defaultCompactMin is the least the file may outgrow its bound by before
// it is compacted, so that a small cache bound does not mean a compaction
// at every write.
const defaultCompactMin = 1 << 20

// compactTxSize is how much a compaction copies per transaction.
const compactTxSize = 4 << 20

func (s *Store) compactPath() string { return s.path + ".compact" }

// compactSlack is how far the file may grow past base + CacheMaxBytes
// before it is compacted: a quarter of the cache bound, at least
// compactMin, and at least four times the largest batch of cache writes
// (a write cannot reuse the pages it frees, nor, while a read is open, the
// pages the write before it freed: a file written in large batches needs
// that room even right after a compaction).
func (s *Store) compactSlack() int64 {
	return max(s.opts.CacheMaxBytes/4, s.compactMin, 4*s.maxBatch)
}

// fileSize returns the file's high-water mark in bytes (bbolt may have
// grown the file by up to allocSize past it).
func (s *Store) fileSize() (int64, error) {
	var size int64
	err := s.view(func(tx *bolt.Tx) error {
		size = tx.Size()
		return nil
	})
	return size, err
}

// maybeCompact compacts the file when it has grown past its bound. The
// caller holds s.mu.
func (s *Store) maybeCompact() error {
	size, err := s.fileSize()
	if err != nil {
		return err
	}
	if size <= s.base+s.opts.CacheMaxBytes+s.compactSlack() {
		return nil
	}
	return s.compactLocked()
}

// Compact rewrites the file with only what it holds now, and swaps it in:
// free pages (which may still hold evicted answers) are gone from disk.
// Reads wait for the swap only; writes wait for the whole compaction.
func (s *Store) Compact() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.compactLocked()
}

// compactLocked copies every bucket, in key order and with full pages,
// into a new file next to the store's, syncs it, renames it over the
// store's file and swaps the open database. A crash before the rename
// leaves the old file whole (and the copy, removed at the next Open); the
// rename is atomic. The new file's lock is taken before the rename, so no
// other process can open it in between. The caller holds s.mu.
func (s *Store) compactLocked() error {
	if s.closed {
		return ErrClosed
	}
	start := s.opts.Clock.Now()
	before, _ := s.fileSize()
	tmp := s.compactPath()
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("store: compacting: %w", err)
	}
	timeout := max(s.opts.LockTimeout, time.Second)
	o := s.boltOptions(timeout, lockClock.Now().Add(timeout))
	o.NoSync = true // synced once, at the end
	dst, err := bolt.Open(tmp, 0o600, o)
	if err != nil {
		return fmt.Errorf("store: compacting: %w", err)
	}
	dst.AllocSize = allocSize
	fail := func(err error) error {
		_ = dst.Close()
		_ = os.Remove(tmp)
		return fmt.Errorf("store: compacting: %w", err)
	}
	if err := copyBuckets(dst, s.db); err != nil {
		return fail(err)
	}
	dst.NoSync = false
	if err := dst.Sync(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, s.path); err != nil {
		return fail(err)
	}
	syncDir(filepath.Dir(s.path))
	s.dbMu.Lock()
	old := s.db
	s.db = dst
	s.dbMu.Unlock()
	if err := old.Close(); err != nil {
		s.log.Warn("store: closing the file a compaction replaced", "err", err)
	}
	after, err := s.fileSize()
	if err != nil {
		return err
	}
	s.base = max(after-s.cacheBytes, 0)
	s.compactions++
	s.log.Info("store: file compacted", "path", s.path, "bytes_before", before, "bytes_after", after,
		"took", s.opts.Clock.Now().Sub(start).Round(time.Millisecond))
	return nil
}

// copyBuckets copies every top-level bucket of src into dst, committing
// every compactTxSize bytes. Keys arrive in order, so dst's pages are
// filled completely.
func copyBuckets(dst, src *bolt.DB) error {
	return src.View(func(stx *bolt.Tx) error {
		dtx, err := dst.Begin(true)
		if err != nil {
			return err
		}
		defer func() { _ = dtx.Rollback() }()
		var size int64
		err = stx.ForEach(func(name []byte, sb *bolt.Bucket) error {
			db, err := dtx.CreateBucketIfNotExists(name)
			if err != nil {
				return err
			}
			db.FillPercent = 1
			c := sb.Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				if v == nil {
					if sb.Bucket(k) != nil {
						return fmt.Errorf("bucket %s holds a nested bucket %q", name, k)
					}
					v = []byte{}
				}
				if size+int64(len(k)+len(v)) > compactTxSize && size > 0 {
					if err := dtx.Commit(); err != nil {
						return err
					}
					if dtx, err = dst.Begin(true); err != nil {
						return err
					}
					if db = dtx.Bucket(name); db == nil {
						return fmt.Errorf("bucket %s vanished", name)
					}
					db.FillPercent = 1
					size = 0
				}
				if err := db.Put(k, v); err != nil {
					return err
				}
				size += int64(len(k) + len(v))
			}
			return nil
		})
		if err != nil {
			return err
		}
		return dtx.Commit()
	})
}

// syncDir makes a rename in dir durable, where the platform allows.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}
