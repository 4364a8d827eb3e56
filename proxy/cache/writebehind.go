package cache

import (
	"log/slog"
	"slices"
	"sync"
	"time"
)

// SealedFile is the file a WriteBehind keeps answers in: sealed, each
// under its id (a cache key's first half) with who gave it and when.
// *store.Store is one.
type SealedFile interface {
	// CacheRecord returns what is kept under id, expired or not; ok is
	// false when there is nothing.
	CacheRecord(id string) (source string, storedAt, expires time.Time, sealed []byte, ok bool, err error)
	// CacheDropSource drops every answer source gave, alone or with
	// others (a fan-out's "a, b").
	CacheDropSource(source string) (int, error)
	// CachePurge drops every answer, leaving none of it in the file.
	CachePurge() (int, error)
	// CachePrune drops the answers that expired more than maxStale
	// before now.
	CachePrune(now time.Time, maxStale time.Duration) (int, error)
	// CacheStats returns how many answers the file holds, and their size.
	CacheStats() (entries int, size int64)
}

// Sealed is one answer as it leaves memory for a SealedFile: its id
// (never the search), who gave it, when, and its JSON sealed with the
// key's other half (SealAnswer), which is never written anywhere.
type Sealed struct {
	ID       string
	Source   string
	StoredAt time.Time
	Expires  time.Time
	Value    []byte
}

// WriteBehindConfig is what a WriteBehind needs; zero values take
// defaults.
type WriteBehindConfig struct {
	// Secret keys the cache (Keyer): the file's per-install secret, or
	// one every replica shares.
	Secret []byte
	// NoCache is Config.NoCache: nothing is read from the file or
	// queued for it, and the answers an earlier run left in it are
	// dropped at NewWriteBehind.
	NoCache bool
	// MaxPending bounds the answers waiting for a flush (default 4096);
	// past it the oldest are dropped (they are still in the memory cache).
	MaxPending int
	Logger     *slog.Logger
}

// WriteBehind is a Store over a SealedFile: reads go to the file,
// writes wait in memory for the next Flush.
//
// What reaches the file: the entry's id (the first half of the keyed
// hash, never the search), who answered, when, and the answer sealed
// (AES-256-GCM) with the key's second half, which is never stored. So the
// file holds no query text, not even in the free pages an evicted answer
// leaves: an answer can be read back only by a process asked the same
// search again. With NoCache nothing is written at all.
type WriteBehind struct {
	file  SealedFile
	keyer *Keyer
	off   bool
	max   int
	log   *slog.Logger

	// flushing is held by a Flush from taking the answers until they are
	// written or put back, and by a drop or a purge: neither can land
	// between a flush taking answers and writing them, which would bring
	// them back.
	flushing sync.Mutex

	mu sync.Mutex // guards pending
	// pending are the answers waiting for a flush, sealed only when a
	// flush takes them: under load most are pushed out by newer ones
	// first (MaxPending), and sealing those would be work for nothing.
	pending []pendingAnswer
}

// pendingAnswer is one answer waiting for a flush: its record, whose
// Value is nil until sealed, and what sealing it needs (its cache key,
// its JSON).
type pendingAnswer struct {
	sealed Sealed
	key    string
	json   []byte
}

// NewWriteBehind returns the write-behind cache of f. With NoCache it
// also drops what an earlier run with a cache left in f.
func NewWriteBehind(f SealedFile, cfg WriteBehindConfig) *WriteBehind {
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = 4096
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	w := &WriteBehind{file: f, keyer: NewKeyer(cfg.Secret), off: cfg.NoCache, max: cfg.MaxPending, log: cfg.Logger}
	if n, _ := f.CacheStats(); w.off && n > 0 {
		if _, err := f.CachePurge(); err != nil {
			w.log.Error("no cache is kept, but the answers an earlier run cached could not be dropped", "err", err)
		} else {
			w.log.Info("no cache is kept: the answers an earlier run cached were dropped", "entries", n)
		}
	}
	return w
}

// CacheKey keys the cache with the configured secret (KeyMaker).
func (w *WriteBehind) CacheKey(plain string) string { return w.keyer.CacheKey(plain) }

// CacheGet reads key's answer from the file and opens it. A read that
// fails is a miss.
func (w *WriteBehind) CacheGet(key string) (Entry, bool) {
	id, _, ok := SplitKey(key)
	if !ok || w.off {
		return Entry{}, false
	}
	src, stored, expires, sealed, ok, err := w.file.CacheRecord(id)
	if err != nil {
		w.log.Debug("reading a stored answer failed: taken as a miss", "err", err)
	}
	if err != nil || !ok {
		return Entry{}, false
	}
	js, ok := OpenAnswer(key, sealed)
	if !ok {
		return Entry{}, false
	}
	return Entry{JSON: js, Instance: src, StoredAt: stored, Expires: expires}, true
}

// CachePut queues c for the next flush; it never blocks on the file.
func (w *WriteBehind) CachePut(key string, c Entry) {
	id, _, ok := SplitKey(key)
	if !ok || w.off {
		return
	}
	w.mu.Lock()
	if len(w.pending) >= w.max {
		w.pending = w.pending[1:]
	}
	w.pending = append(w.pending, pendingAnswer{
		sealed: Sealed{ID: id, Source: c.Instance, StoredAt: c.StoredAt, Expires: c.Expires},
		key:    key, json: c.JSON, // never modified once cached
	})
	w.mu.Unlock()
}

// CacheDropInstance drops inst's answers, waiting or stored
// (Dropper); a flush under way ends first.
func (w *WriteBehind) CacheDropInstance(inst string) (int, error) {
	w.flushing.Lock()
	defer w.flushing.Unlock()
	w.mu.Lock()
	before := len(w.pending)
	w.pending = slices.DeleteFunc(w.pending, func(a pendingAnswer) bool { return AnsweredBy(a.sealed.Source, inst) })
	n := before - len(w.pending)
	w.mu.Unlock()
	m, err := w.file.CacheDropSource(inst)
	return n + m, err
}

// CachePurge drops every answer, waiting or stored, leaving none in the
// file (Dropper); a flush under way ends first.
func (w *WriteBehind) CachePurge() (int, error) {
	w.flushing.Lock()
	defer w.flushing.Unlock()
	w.mu.Lock()
	n := len(w.pending)
	w.pending = nil
	w.mu.Unlock()
	m, err := w.file.CachePurge()
	return n + m, err
}

// CachePrune drops the stored answers that expired more than maxStale
// before now (Pruner).
func (w *WriteBehind) CachePrune(now time.Time, maxStale time.Duration) (int, error) {
	return w.file.CachePrune(now, maxStale)
}

// Flush takes the answers waiting, seals them, and calls write once with
// them (maybe none): the caller writes them to the file, with whatever
// else its transaction holds. When write fails, the answers wait again,
// ahead of newer ones, for the next Flush: nothing is lost. No drop or
// purge runs while write does.
func (w *WriteBehind) Flush(write func([]Sealed) error) error {
	w.flushing.Lock()
	defer w.flushing.Unlock()
	taken := w.take()
	if err := write(taken); err != nil {
		w.requeue(taken)
		return err
	}
	return nil
}

// Pending returns how many answers wait for a flush.
func (w *WriteBehind) Pending() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pending)
}

// take returns the answers waiting for a flush, sealing them; the caller
// holds flushing until they are written or put back.
func (w *WriteBehind) take() []Sealed {
	w.mu.Lock()
	p := w.pending
	w.pending = nil
	w.mu.Unlock()
	out := make([]Sealed, 0, len(p))
	for _, a := range p {
		if a.sealed.Value == nil {
			_, v, err := SealAnswer(a.key, a.json)
			if err != nil {
				w.log.Error("sealing a cached answer failed; it is not stored", "err", err)
				continue
			}
			a.sealed.Value = v
		}
		out = append(out, a.sealed)
	}
	return out
}

// requeue puts back answers a failed flush took, sealed already, ahead of
// newer ones, within the bound.
func (w *WriteBehind) requeue(taken []Sealed) {
	if len(taken) == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	all := make([]pendingAnswer, 0, len(taken)+len(w.pending))
	for _, s := range taken {
		all = append(all, pendingAnswer{sealed: s})
	}
	all = append(all, w.pending...)
	if len(all) > w.max {
		all = all[len(all)-w.max:]
	}
	w.pending = all
}
