package cache

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
)

// SealAnswer encrypts an answer's JSON for a cache kept outside this
// process's memory (the store's file, a shared cache), under key (a
// cache key): a random nonce, then the answer encrypted and authenticated
// with AES-256-GCM under the key's seal half, bound to its id half. It
// returns the id, the only part of the key such a cache may keep, and the
// sealed bytes: without the search itself, which only a client asking it
// again gives, neither the query nor the answer can be read back.
func SealAnswer(key string, js []byte) (id string, sealed []byte, err error) {
	id, seal, ok := SplitKey(key)
	if !ok {
		return "", nil, errBadKey
	}
	aead, err := answerAEAD(seal)
	if err != nil {
		return "", nil, err
	}
	out := make([]byte, aead.NonceSize(), aead.NonceSize()+len(js)+aead.Overhead())
	if _, err := rand.Read(out); err != nil {
		return "", nil, err
	}
	return id, aead.Seal(out, out, js, []byte(id)), nil
}

// OpenAnswer undoes SealAnswer; ok is false for bytes that were not sealed
// under key.
func OpenAnswer(key string, sealed []byte) (js []byte, ok bool) {
	id, seal, ok := SplitKey(key)
	if !ok {
		return nil, false
	}
	aead, err := answerAEAD(seal)
	if err != nil || len(sealed) < aead.NonceSize() {
		return nil, false
	}
	js, err = aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], []byte(id))
	return js, err == nil
}

func answerAEAD(seal []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(seal)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// errBadKey: a key that is not a cache key (a cache keyed some other way).
var errBadKey = errors.New("cache: not a cache key")
