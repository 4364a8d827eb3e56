package redis

import (
	"crypto/hmac"
	"crypto/sha256"
)

// Trust. Whoever can write to Redis but does not know the operator's
// secret can:
//   - make the replicas search less: fill the windows (a replica is held at
//     most one window's span per refusal), hold trial and lock keys (a
//     trial claim counts no longer than the replica's own would, a lock
//     for three quarters of a search's deadline), delete or flush the
//     answers, fill Redis's memory, or FLUSHALL again and again (each time
//     the replicas fall back to their shares and rebuild);
//   - make them search more, up to each replica's own local budget (N
//     times the budget with N replicas), by deleting window keys but not
//     the epoch key: no replica can tell that from windows that emptied;
//   - read which instances were searched and how often, the replicas'
//     names, and when answers were stored and by whom (clear headers).
//
// It cannot open a circuit, make a replica serve a forged answer or an old
// one as fresh, learn the queries (keyed hashes, sealed bodies), or sign
// image links. Who holds the secret can do all of that; a circuit it opens
// on the others lasts at most MaxHeard.
//
// The means are here: every value a replica believes of another (a
// refusal on the channel, an opening kept under "open:", the clear header
// of a kept answer) carries an HMAC-SHA256 under a key derived from the
// operator's secret (Options.Secret), which never reaches Redis. The MAC
// covers what the value says and where it belongs (the group, the key's
// name), so that a value cannot be moved to another group, key or
// instance; refusals also carry who sent them and when, so that an old
// one is not believed again: a message older than 30 s or heard before,
// and a kept value past its own end, are dropped (see refusals.go).

// macLen is the length of a MAC: HMAC-SHA256, whole.
const macLen = sha256.Size

// macKey derives the key of the MACs from the operator's secret. The
// label keeps it apart from the other keys cmd derives from the same
// secret (the cache's keyed hash, the image links').
func macKey(secret []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("searxgate redis mac v1"))
	return m.Sum(nil)
}

// sign returns the MAC of the parts, each length-prefixed so that no two
// lists of parts sign alike.
func (s *Shared) sign(parts ...[]byte) []byte {
	m := hmac.New(sha256.New, s.mac)
	var n [4]byte
	for _, p := range parts {
		l := len(p)
		n[0], n[1], n[2], n[3] = byte(l>>24), byte(l>>16), byte(l>>8), byte(l)
		m.Write(n[:])
		m.Write(p)
	}
	return m.Sum(nil)
}

// verify reports whether mac is the MAC of the parts.
func (s *Shared) verify(mac []byte, parts ...[]byte) bool {
	return len(mac) == macLen && hmac.Equal(mac, s.sign(parts...))
}
