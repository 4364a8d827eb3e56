package store

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Operator is what the operator said about one instance. Each change is
// written at once, in its own synced transaction, and never dropped by a
// reset of learned state.
type Operator struct {
	URL       string
	Added     bool   // added by hand
	Removed   bool   // removed by hand (stays removed across directory refreshes)
	Disabled  bool   // kept but not used
	Tier      string // e.g. "own" for the operator's own instances
	UpdatedAt time.Time
}

// operatorRecord is Operator as stored, keyed by URL.
type operatorRecord struct {
	Added     bool      `json:"added,omitempty"`
	Removed   bool      `json:"removed,omitempty"`
	Disabled  bool      `json:"disabled,omitempty"`
	Tier      string    `json:"tier,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

// PutOperator writes o, replacing what was said about o.URL before.
func (s *Store) PutOperator(o Operator) error {
	if err := checkKey("operator", []byte(o.URL), 0); err != nil {
		return err
	}
	rec, err := json.Marshal(operatorRecord{
		Added: o.Added, Removed: o.Removed, Disabled: o.Disabled, Tier: o.Tier,
		UpdatedAt: o.UpdatedAt.UTC().Round(0),
	})
	if err != nil {
		return fmt.Errorf("store: encoding operator change for %q: %w", o.URL, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	err = s.update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketOperators).Put([]byte(o.URL), rec)
	})
	if err != nil {
		return fmt.Errorf("store: writing operator change for %q: %w", o.URL, err)
	}
	return nil
}

// DeleteOperator forgets what the operator said about url (deleting a URL
// that is not there is not an error).
func (s *Store) DeleteOperator(url string) error {
	if err := checkKey("operator", []byte(url), 0); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketOperators).Delete([]byte(url))
	})
	if err != nil {
		return fmt.Errorf("store: deleting operator change for %q: %w", url, err)
	}
	return nil
}

// Operators returns every operator change, sorted by URL.
func (s *Store) Operators() ([]Operator, error) {
	var out []Operator
	err := s.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketOperators).ForEach(func(k, v []byte) error {
			var rec operatorRecord
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("%w: operator change for %q: %v", ErrCorrupt, k, err)
			}
			out = append(out, Operator{
				URL: string(k), Added: rec.Added, Removed: rec.Removed, Disabled: rec.Disabled,
				Tier: rec.Tier, UpdatedAt: rec.UpdatedAt,
			})
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("store: reading operator changes: %w", err)
	}
	return out, nil // bbolt iterates keys in byte order: sorted by URL
}
