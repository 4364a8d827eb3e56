package detect

import (
	"bytes"
	"net/http"
	"strconv"
	"time"
)

// MaxRetryAfter bounds what ParseRetryAfter returns: a server asking for
// more is taken to mean "a long time", not a date years away. The pool
// applies its own, shorter cap.
const MaxRetryAfter = 7 * 24 * time.Hour

// epochThreshold separates a reset given in seconds from one given as a
// Unix time (some servers send X-RateLimit-Reset as the latter).
const epochThreshold = 1_000_000_000

// ParseRetryAfter returns how long the server asked us to wait: from
// Retry-After (delay-seconds or an HTTP date, relative to now), else from
// RateLimit-Reset or X-RateLimit-Reset (seconds; a value that can only be
// a Unix time is read as one), else from the reset of a structured
// RateLimit header ("reset=" or "t="). It returns 0 when none is given,
// none parses, or the time has passed; never more than MaxRetryAfter.
func ParseRetryAfter(h Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := bytes.TrimSpace(h.Peek("Retry-After")); len(v) > 0 {
		if d, ok := seconds(v, now); ok {
			return d
		}
		if t, err := http.ParseTime(string(v)); err == nil {
			return clampWait(t.Sub(now))
		}
	}
	for _, key := range [...]string{"RateLimit-Reset", "X-RateLimit-Reset"} {
		if v := bytes.TrimSpace(h.Peek(key)); len(v) > 0 {
			if d, ok := seconds(v, now); ok {
				return d
			}
		}
	}
	if v := h.Peek("RateLimit"); len(v) > 0 {
		if d, ok := structuredReset(v, now); ok {
			return d
		}
	}
	return 0
}

// seconds reads a non-negative decimal number of seconds (digits, with
// an optional fraction), or a Unix time when the number is that large.
func seconds(v []byte, now time.Time) (time.Duration, bool) {
	dot := false
	for i, c := range v {
		switch {
		case c >= '0' && c <= '9':
		case c == '.' && !dot && i > 0:
			dot = true
		default:
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		return 0, false
	}
	switch {
	case f >= epochThreshold && f < 1e12:
		return clampWait(time.Unix(int64(f), 0).Sub(now)), true
	case f >= MaxRetryAfter.Seconds():
		return MaxRetryAfter, true
	}
	return time.Duration(f * float64(time.Second)), true
}

// structuredReset reads the reset of a RateLimit header in either of the
// IETF drafts' shapes: "limit=10, remaining=0, reset=30" or
// `"policy";r=0;t=30`.
func structuredReset(v []byte, now time.Time) (time.Duration, bool) {
	for len(v) > 0 {
		var part []byte
		if i := bytes.IndexAny(v, ",;"); i >= 0 {
			part, v = v[:i], v[i+1:]
		} else {
			part, v = v, nil
		}
		part = bytes.TrimSpace(part)
		for _, p := range [...]string{"reset=", "t="} {
			if len(part) > len(p) && string(bytes.ToLower(part[:len(p)])) == p {
				if d, ok := seconds(part[len(p):], now); ok {
					return d, true
				}
			}
		}
	}
	return 0, false
}

func clampWait(d time.Duration) time.Duration {
	switch {
	case d <= 0:
		return 0
	case d > MaxRetryAfter:
		return MaxRetryAfter
	}
	return d
}
