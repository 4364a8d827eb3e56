package api

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
)

// Keys are the operator-issued API keys, replaced at once by Set (a key
// file read again on SIGHUP). Keys are kept only as SHA-256 digests and
// compared in constant time; what leaves this type is a fingerprint.
type Keys struct {
	set atomic.Pointer[keySet]
}

type keySet struct {
	digests [][sha256.Size]byte
}

// ErrKeyFile is wrapped by ReadKeyFile's errors.
var ErrKeyFile = errors.New("API key file")

// minKeyLen is the shortest key accepted: a key is a secret, not a name.
const minKeyLen = 16

// Set replaces the keys; an empty list turns keys off. A key shorter than
// 16 characters or holding white space is an error, and nothing changes.
func (k *Keys) Set(keys []string) error {
	s := &keySet{}
	seen := map[[sha256.Size]byte]bool{}
	for i, key := range keys {
		if len(key) < minKeyLen || strings.ContainsAny(key, " \t\r\n") {
			return fmt.Errorf("API key %d of %d: want at least %d characters and no white space", i+1, len(keys), minKeyLen)
		}
		d := sha256.Sum256([]byte(key))
		if !seen[d] {
			seen[d] = true
			s.digests = append(s.digests, d)
		}
	}
	k.set.Store(s)
	return nil
}

// Len is the number of keys.
func (k *Keys) Len() int {
	if k == nil {
		return 0
	}
	s := k.set.Load()
	if s == nil {
		return 0
	}
	return len(s.digests)
}

// Check reports whether presented is one of the keys, and its
// fingerprint when it is. Every key is compared, in constant time.
func (k *Keys) Check(presented string) (fp string, ok bool) {
	if k == nil || presented == "" {
		return "", false
	}
	s := k.set.Load()
	if s == nil {
		return "", false
	}
	d := sha256.Sum256([]byte(presented))
	match := 0
	for i := range s.digests {
		match |= subtle.ConstantTimeCompare(d[:], s.digests[i][:])
	}
	if match != 1 {
		return "", false
	}
	return Fingerprint(presented), true
}

// Fingerprint is a key's short name: 16 hex digits of a hash kept apart
// from the digests Check compares. It is the client key's (client.FromAPIKey)
// and says nothing a guess of a long random key could use.
func Fingerprint(key string) string {
	d := sha256.Sum256([]byte("searxgate API key fingerprint\x00" + key))
	return hex.EncodeToString(d[:8])
}

// ReadKeyFile reads one key a line; blank lines and lines starting with #
// are skipped.
func ReadKeyFile(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKeyFile, err)
	}
	defer f.Close()
	var keys []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		keys = append(keys, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrKeyFile, path, err)
	}
	return keys, nil
}
