package cache

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"hash"
	"sync"
)

// Cache keys are keyed hashes, never the search itself. A key is 64 bytes:
// HMAC-SHA256(secret, "id" + plain key) names the entry (in memory, in
// the coalescing table and on disk), and HMAC-SHA256(secret, "seal" +
// plain key) is a key a Store may seal the stored answer with. The
// second half is never written anywhere: only a process that is asked
// the same search again can rebuild it, so a stored answer (live, or left
// in the file's free pages after eviction) cannot be read without knowing
// the search. The secret comes from the Store when it offers one
// (KeyMaker; the store keeps it per install), else it is made at start
// and kept in memory.

// KeyLen is the length of a cache key; IDLen of its first half, the part
// that names an entry.
const (
	KeyLen = 2 * sha256.Size
	IDLen  = sha256.Size
)

// KeyMaker makes cache keys. A Store that implements it keys the cache
// with its own (persistent) secret.
type KeyMaker interface {
	CacheKey(plain string) string
}

// Keyer makes cache keys with one secret. It is safe for concurrent use.
type Keyer struct {
	pool sync.Pool // of hash.Hash: HMAC-SHA256 under the secret
}

// NewKeyer returns a Keyer for secret (which it copies).
func NewKeyer(secret []byte) *Keyer {
	s := append([]byte(nil), secret...)
	k := &Keyer{}
	k.pool.New = func() any { return hmac.New(sha256.New, s) }
	return k
}

// CacheKey returns the cache key of a search's plain key.
func (k *Keyer) CacheKey(plain string) string {
	h := k.pool.Get().(hash.Hash)
	var out [KeyLen]byte
	h.Reset()
	h.Write([]byte("id\x00"))
	h.Write([]byte(plain))
	h.Sum(out[:0])
	h.Reset()
	h.Write([]byte("seal\x00"))
	h.Write([]byte(plain))
	h.Sum(out[IDLen:IDLen])
	k.pool.Put(h)
	return string(out[:])
}

// SplitKey returns a cache key's halves: id names the entry; seal is the
// key its stored value may be sealed with, never to be stored. ok is
// false for a string that is not a cache key.
func SplitKey(key string) (id string, seal []byte, ok bool) {
	if len(key) != KeyLen {
		return "", nil, false
	}
	return key[:IDLen], []byte(key[IDLen:]), true
}

// processKeyer keys the cache of a process whose store offers no secret:
// a secret made once per process, never written anywhere.
var processKeyer = sync.OnceValue(func() *Keyer {
	secret := make([]byte, 32)
	_, _ = rand.Read(secret) // crypto/rand.Read never fails
	return NewKeyer(secret)
})

// Key is one search's plain key, by which memory knows it, and its keyed
// hash, by which the store and the shared cache do: computed once, when
// the search first needs it (two HMAC-SHA256 sums).
type Key struct {
	Plain  string
	hashed string
}
