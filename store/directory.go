package store

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Directory is the last instance list fetched, as fetched.
type Directory struct {
	Raw          []byte
	ETag         string
	LastModified string
	FetchedAt    time.Time
}

type directoryRecord struct {
	ETag         string    `json:"etag,omitempty"`
	LastModified string    `json:"last_modified,omitempty"`
	FetchedAt    time.Time `json:"fetched_at"`
}

// SaveDirectory replaces the last directory, in its own synced transaction.
func (s *Store) SaveDirectory(d Directory) error {
	if err := checkValue("directory", "raw", d.Raw, 0); err != nil {
		return err
	}
	rec, err := json.Marshal(directoryRecord{ETag: d.ETag, LastModified: d.LastModified, FetchedAt: d.FetchedAt.UTC().Round(0)})
	if err != nil {
		return fmt.Errorf("store: encoding the directory: %w", err)
	}
	raw := d.Raw
	if raw == nil {
		raw = []byte{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	err = s.update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketDirectory)
		if err := bk.Put(keyDirRaw, raw); err != nil {
			return err
		}
		return bk.Put(keyDirMeta, rec)
	})
	if err != nil {
		return fmt.Errorf("store: writing the directory: %w", err)
	}
	return nil
}

// LoadDirectory returns the last directory saved; ok is false when none was.
func (s *Store) LoadDirectory() (d Directory, ok bool, err error) {
	err = s.view(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketDirectory)
		meta := bk.Get(keyDirMeta)
		if meta == nil {
			return nil
		}
		var rec directoryRecord
		if err := json.Unmarshal(meta, &rec); err != nil {
			return fmt.Errorf("%w: directory: %v", ErrCorrupt, err)
		}
		d = Directory{Raw: clone(bk.Get(keyDirRaw)), ETag: rec.ETag, LastModified: rec.LastModified, FetchedAt: rec.FetchedAt}
		if d.Raw == nil {
			d.Raw = []byte{}
		}
		ok = true
		return nil
	})
	if err != nil {
		return Directory{}, false, fmt.Errorf("store: reading the directory: %w", err)
	}
	return d, ok, nil
}
