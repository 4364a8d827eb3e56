package store

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/searxgate/searxgate/internal/clock"
)

// Sentinel errors. Errors returned by the store wrap one of these, or an
// error of the file system.
var (
	// ErrLocked: another process (another searxgate) holds the file.
	ErrLocked = errors.New("store: database file is locked")
	// ErrDamaged: the file is not a readable searxgate store. Open moves
	// such a file aside and starts a fresh one; it returns ErrDamaged only
	// when the file cannot be moved aside.
	ErrDamaged = errors.New("store: database file is damaged")
	// ErrCorrupt: a record inside an otherwise sound file cannot be decoded.
	ErrCorrupt = errors.New("store: corrupt record")
	// ErrInvalid: the caller passed something the store cannot keep (an
	// empty or oversized key, an oversized value).
	ErrInvalid = errors.New("store: invalid argument")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("store: closed")
)

// SchemaVersion is the layout of the buckets this build reads and writes.
// A file with a higher version is treated as damaged (moved aside, never
// overwritten). Version 1 kept cache keys as given (plain text, before they
// were keyed hashes): Open drops a version 1 file's result cache and
// compacts the file, so that none of it stays on disk.
const SchemaVersion = 2

// FileName is the name of the store's file in the data folder.
const FileName = "searxgate.db"

// Bucket names and fixed keys.
var (
	bucketMeta       = []byte("meta")
	bucketPool       = []byte("pool")
	bucketCaps       = []byte("caps")
	bucketOperators  = []byte("operators")
	bucketDirectory  = []byte("directory")
	bucketCache      = []byte("cache")
	bucketCacheOrder = []byte("cache_order")

	keySchema       = []byte("schema_version")
	keySecret       = []byte("cache_secret")
	keyDirRaw       = []byte("raw")
	keyDirMeta      = []byte("meta")
	allBuckets      = [][]byte{bucketMeta, bucketPool, bucketCaps, bucketOperators, bucketDirectory, bucketCache, bucketCacheOrder}
	defaultMaxBytes = int64(64 << 20)
)

// Options tune Open. The zero value gives the defaults.
type Options struct {
	// LockTimeout bounds how long Open waits for the file's lock before it
	// fails with ErrLocked. 0 means the default, 1s; a negative value means
	// a single attempt.
	LockTimeout time.Duration
	// CacheMaxEntries bounds the result cache by count (default 10000).
	CacheMaxEntries int
	// CacheMaxBytes bounds the result cache by len(Key)+len(Value) summed
	// over its entries (default 64 MiB).
	CacheMaxBytes int64
	// Logger receives what the store has to say (a damaged file moved
	// aside, a cache index rebuilt). nil discards.
	Logger *slog.Logger
	// Clock is read for the damaged file's timestamp, for a cache entry
	// written without StoredAt and to time a compaction. nil is the real
	// clock. Waits for the file lock are always on the real clock: they
	// wait for another process.
	Clock clock.Clock
}

// lockClock times the waits for the file lock, held by another process.
var lockClock clock.Clock = clock.Real{}

func (o Options) withDefaults() Options {
	if o.LockTimeout == 0 {
		o.LockTimeout = time.Second
	}
	if o.CacheMaxEntries <= 0 {
		o.CacheMaxEntries = 10000
	}
	if o.CacheMaxBytes <= 0 {
		o.CacheMaxBytes = defaultMaxBytes
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	o.Clock = clock.Or(o.Clock)
	return o
}

// Store is searxgate's bbolt file. Its methods are safe for concurrent use.
type Store struct {
	path      string
	recovered string
	opts      Options
	log       *slog.Logger
	secret    []byte // the per-install cache secret, read at Open
	pageSize  int

	// dbMu guards db: read transactions hold it shared, a compaction
	// swaps the file under it. Writers hold mu, which a compaction holds
	// too, so they read db under mu alone.
	dbMu sync.RWMutex
	db   *bolt.DB

	// mu guards cacheEntries, cacheBytes, closed, base, compactions and
	// migrated; it is held across every write transaction (and every
	// compaction) so that the totals always match the file.
	mu           sync.Mutex
	cacheEntries int
	cacheBytes   int64
	cacheIDs     cacheIDs // the keys of the result cache, by hash
	closed       bool
	// base is what the file holds besides the result cache, measured at
	// the last compaction (0 before the first): the file is compacted when
	// it grows past base + CacheMaxBytes + compactSlack().
	base        int64
	compactions int
	migrated    bool  // a version 1 file: its cache was dropped, it must be compacted
	compactMin  int64 // see compactSlack
	maxBatch    int64 // the most cache bytes one WriteBatch put, since Open
}

// Open opens (creating it and its folder if needed) the store at path.
//
// It fails with ErrLocked when another process holds the file for longer
// than opts.LockTimeout. A damaged file (not a bbolt file, truncated,
// inconsistent, or written by a newer searxgate) is renamed to
// "<path>.damaged-<UTC timestamp>", logged with both paths, and a fresh file
// is started: Open then succeeds and Recovered says where the old file went.
func Open(path string, opts Options) (*Store, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: empty path", ErrInvalid)
	}
	opts = opts.withDefaults()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("store: creating the data folder: %w", err)
	}
	s := &Store{path: path, opts: opts, log: opts.Logger}

	db, err := s.openChecked()
	if errors.Is(err, ErrDamaged) {
		moved, merr := s.moveAside()
		if merr != nil {
			return nil, fmt.Errorf("%w: %s cannot be moved aside (%v); it was unreadable: %v", ErrDamaged, path, merr, err)
		}
		s.log.Warn("store: damaged database file moved aside, starting a fresh one",
			"path", path, "moved_to", moved, "reason", err.Error())
		s.recovered = moved
		db, err = s.openChecked()
	}
	if err != nil {
		return nil, err
	}
	s.db = db
	s.pageSize = db.Info().PageSize
	s.compactMin = defaultCompactMin
	// A compaction that a crash interrupted left its copy: it may hold
	// what the cache held, so it goes (the lock on path is ours now).
	_ = os.Remove(s.compactPath())
	if err := s.readSecret(); err != nil {
		_ = db.Close()
		return nil, err
	}
	if err := s.initCache(); err != nil {
		_ = s.db.Close()
		return nil, err
	}
	return s, nil
}

// boltOptions are the options every bbolt file of the store is opened with.
// The freelist is not written to the file (NoFreelistSync): bbolt rebuilds
// it at open by walking the trees, so a file never carries a list of pages
// that once held evicted answers, and commits write less.
//
// The mapping starts as large as the file grows before it is compacted
// (mmapSize), not at bbolt's 32 KiB: each time bbolt grows it, a commit
// waits for every read (each cache miss reads the store) and copies its
// dirty nodes off the old mapping. It is address space, not memory.
func (s *Store) boltOptions(timeout time.Duration, deadline time.Time) *bolt.Options {
	return &bolt.Options{
		Timeout:         timeout,
		FreelistType:    bolt.FreelistMapType,
		NoFreelistSync:  true,
		InitialMmapSize: s.mmapSize(),
		OpenFile: func(name string, flag int, mode os.FileMode) (*os.File, error) {
			return openLocked(name, flag, mode, deadline)
		},
	}
}

// allocSize is how much bbolt grows the file by at a time past its first
// 16 MiB (bbolt's default, 16 MiB, would leave that much unused at the end
// of the file).
const allocSize = 1 << 20

// readSecret reads the per-install cache secret that initBuckets made.
func (s *Store) readSecret() error {
	return s.view(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketMeta).Get(keySecret)
		if len(v) != secretSize {
			return fmt.Errorf("%w: cache secret of %d bytes", ErrCorrupt, len(v))
		}
		s.secret = clone(v)
		return nil
	})
}

// secretSize is the length of the cache secret.
const secretSize = 32

// CacheSecret returns the per-install secret that searxgate keys its cache
// with (HMAC-SHA256): 32 random bytes made when the file was created (or
// first opened by a build that keys its cache) and kept in the meta bucket.
// A fresh file (one that replaced a damaged file) has a new secret.
func (s *Store) CacheSecret() []byte { return clone(s.secret) }

// mmapSize is the initial size of the file's mapping: twice the cache's
// bound plus 64 MiB for the rest, up to 1 GiB (0, bbolt's default, where
// an int has 32 bits).
func (s *Store) mmapSize() int {
	if strconv.IntSize < 64 {
		return 0
	}
	return int(min(2*s.opts.CacheMaxBytes+64<<20, 1<<30))
}

// openChecked opens path with bbolt after the structural check, then runs
// bbolt's consistency check and the schema check, and creates what is
// missing. Any sign of damage comes back wrapped in ErrDamaged.
func (s *Store) openChecked() (*bolt.DB, error) {
	timeout := s.opts.LockTimeout
	if timeout < 0 {
		timeout = time.Nanosecond // one attempt
	}
	deadline := lockClock.Now().Add(timeout)
	db, err := openBolt(s.path, s.boltOptions(timeout, deadline))
	if err != nil {
		return nil, err
	}
	if err := verify(db, freelistSynced(s.path)); err != nil {
		_ = db.Close()
		return nil, err
	}
	db.AllocSize = allocSize
	migrated, err := initBuckets(db)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	s.migrated = migrated
	return db, nil
}

func lockedError(path string) error {
	return fmt.Errorf("%w: another searxgate process holds %s (stop it, or give this one another data folder)", ErrLocked, path)
}

// openBolt opens path, with bbolt's errors turned into the store's.
func openBolt(path string, o *bolt.Options) (*bolt.DB, error) {
	db, err := guardedOpen(path, o)
	if err != nil {
		switch {
		case errors.Is(err, bolterrors.ErrTimeout):
			return nil, lockedError(path)
		case errors.Is(err, bolterrors.ErrInvalid), errors.Is(err, bolterrors.ErrVersionMismatch), errors.Is(err, bolterrors.ErrChecksum):
			return nil, fmt.Errorf("%w: %v", ErrDamaged, err)
		}
		return nil, err
	}
	return db, nil
}

// guardedOpen runs bolt.Open with memory faults turned into panics, and
// panics (bbolt panics on pages it cannot make sense of) into ErrDamaged.
func guardedOpen(path string, o *bolt.Options) (db *bolt.DB, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, fmt.Errorf("%w: bbolt failed reading it: %v", ErrDamaged, r)
		}
	}()
	return bolt.Open(path, 0o600, o)
}

// verify runs bbolt's consistency check (when check is set) and reads the
// schema version. The check is needed only when bbolt read a freelist from
// the file: otherwise it walked every tree at open, with the same checks.
func verify(db *bolt.DB, check bool) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: reading it failed: %v", ErrDamaged, r)
		}
	}()
	return db.View(func(tx *bolt.Tx) error {
		// Drain the whole channel: the check's goroutine reads the
		// transaction until it closes the channel.
		if !check {
			return checkSchema(tx)
		}
		var first error
		n := 0
		for cerr := range tx.Check() {
			if first == nil {
				first = cerr
			}
			n++
		}
		if first != nil {
			return fmt.Errorf("%w: consistency check failed (%d problems; first: %v)", ErrDamaged, n, first)
		}
		return checkSchema(tx)
	})
}

func checkSchema(tx *bolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		// Acceptable only for a file without any bucket (just created).
		foreign := false
		_ = tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
			foreign = true
			return errors.New("stop")
		})
		if foreign {
			return fmt.Errorf("%w: not a searxgate store (no schema version)", ErrDamaged)
		}
		return nil
	}
	v := meta.Get(keySchema)
	if v == nil {
		return fmt.Errorf("%w: no schema version", ErrDamaged)
	}
	n, err := strconv.Atoi(string(v))
	if err != nil || n < 1 {
		return fmt.Errorf("%w: unreadable schema version %q", ErrDamaged, v)
	}
	if n > SchemaVersion {
		return fmt.Errorf("%w: schema version %d is newer than the %d this searxgate reads", ErrDamaged, n, SchemaVersion)
	}
	return nil
}

// initBuckets creates what is missing: the buckets, the schema version and
// the cache secret. A version 1 file's result cache (plain-text keys) is
// dropped and its version raised; migrated says so, and the caller then
// compacts the file.
func initBuckets(db *bolt.DB) (migrated bool, err error) {
	complete := true
	_ = db.View(func(tx *bolt.Tx) error {
		for _, name := range allBuckets {
			complete = complete && tx.Bucket(name) != nil
		}
		if complete {
			meta := tx.Bucket(bucketMeta)
			complete = string(meta.Get(keySchema)) == strconv.Itoa(SchemaVersion) && len(meta.Get(keySecret)) == secretSize
		}
		return nil
	})
	if complete {
		return false, nil
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, name := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return fmt.Errorf("store: creating bucket %s: %w", name, err)
			}
		}
		meta := tx.Bucket(bucketMeta)
		if v := meta.Get(keySchema); v != nil && string(v) != strconv.Itoa(SchemaVersion) {
			// checkSchema let only older versions through.
			for _, name := range [][]byte{bucketCache, bucketCacheOrder} {
				if err := tx.DeleteBucket(name); err != nil {
					return err
				}
				if _, err := tx.CreateBucket(name); err != nil {
					return err
				}
			}
			migrated = true
		}
		if err := meta.Put(keySchema, []byte(strconv.Itoa(SchemaVersion))); err != nil {
			return err
		}
		if len(meta.Get(keySecret)) != secretSize {
			secret := make([]byte, secretSize)
			if _, err := rand.Read(secret); err != nil {
				return fmt.Errorf("store: making the cache secret: %w", err)
			}
			return meta.Put(keySecret, secret)
		}
		return nil
	})
	return migrated, err
}

// moveAside renames the damaged file to "<path>.damaged-<UTC timestamp>"
// (with a counter when that name is taken) and returns the new path.
func (s *Store) moveAside() (string, error) {
	base := s.path + ".damaged-" + s.opts.Clock.Now().UTC().Format("20060102T150405Z")
	dst := base
	for i := 2; ; i++ {
		if _, err := os.Lstat(dst); errors.Is(err, os.ErrNotExist) {
			break
		}
		if i > 1000 {
			return "", fmt.Errorf("too many damaged files named %s*", base)
		}
		dst = fmt.Sprintf("%s-%d", base, i)
	}
	if err := os.Rename(s.path, dst); err != nil {
		return "", err
	}
	return dst, nil
}

// Recovered returns where Open moved a damaged file, or "" if it did not.
func (s *Store) Recovered() string { return s.recovered }

// Path returns the store's file.
func (s *Store) Path() string { return s.path }

// Close closes the file and releases its lock. Later calls return nil;
// other methods return ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.cacheIDs.close()
	return s.db.Close()
}

// view runs fn in a read transaction.
func (s *Store) view(fn func(*bolt.Tx) error) error {
	s.dbMu.RLock()
	defer s.dbMu.RUnlock()
	return mapClosed(s.db.View(fn))
}

// update runs fn in a write transaction, synced before it returns. The
// caller holds s.mu.
func (s *Store) update(fn func(*bolt.Tx) error) error {
	if s.closed {
		return ErrClosed
	}
	return mapClosed(s.db.Update(fn))
}

func mapClosed(err error) error {
	if errors.Is(err, bolterrors.ErrDatabaseNotOpen) {
		return fmt.Errorf("%w: %v", ErrClosed, err)
	}
	return err
}

// clone returns a copy of b that outlives the transaction b came from.
func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	c := make([]byte, len(b))
	copy(c, b)
	return c
}

func checkKey(what string, key []byte, extra int) error {
	if len(key) == 0 {
		return fmt.Errorf("%w: empty %s key", ErrInvalid, what)
	}
	if len(key)+extra > bolt.MaxKeySize {
		return fmt.Errorf("%w: %s key of %d bytes is longer than %d", ErrInvalid, what, len(key), bolt.MaxKeySize-extra)
	}
	return nil
}

func checkValue(what, key string, v []byte, extra int) error {
	if int64(len(v))+int64(extra) > bolt.MaxValueSize {
		return fmt.Errorf("%w: %s value for %q is too large (%d bytes)", ErrInvalid, what, key, len(v))
	}
	return nil
}
