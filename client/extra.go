package client

import (
	"math"
	"time"
)

// AdmitExtra is the limiter as proxy.Config.AdmitExtra: what a search
// sends upstream beyond its first attempt (a retry after an instance's
// failure, a hedge) is charged to the same bucket as the client's
// searches, and may borrow ahead of it up to share of a minute's rate:
// so one client's upstream searches in any minute stay within its rate
// and burst plus share × rate, and the searches it makes after borrowing
// wait until the debt is paid. nil when the limit is off.
func (l *Limiter) AdmitExtra(share float64) func(key string, now time.Time) bool {
	if l == nil {
		return nil
	}
	return func(key string, now time.Time) bool {
		return l.borrowAt(key, now, share)
	}
}

// borrowAt takes a token for key at now, letting its bucket fall as low
// as -share × a minute's refill (at least -1).
func (l *Limiter) borrowAt(key string, now time.Time, share float64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, perSec := l.refilled(key, now)
	floor := -math.Max(1, share*perSec*60)
	if b.tokens-1 < floor {
		return false
	}
	b.tokens--
	return true
}
