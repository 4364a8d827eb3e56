// Package logevery lets a kind of log line through at most once an
// interval, and says how many it held back since the last one, so that a
// flood (refused searches, bad requests) cannot fill the log.
package logevery

import (
	"sync"
	"time"
)

// Gate is one kind of line's gate; the zero Gate lets the first line
// through. It is safe for concurrent use.
type Gate struct {
	mu   sync.Mutex // guards last and held
	last time.Time  // when the last line was let through
	held int        // held back since then
}

// Pass reports whether a line may be written at now, every at the most
// after the last one let through, and how many were held back since that
// one.
func (g *Gate) Pass(now time.Time, every time.Duration) (held int, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.last.IsZero() && now.Sub(g.last) < every {
		g.held++
		return 0, false
	}
	held = g.held
	g.last, g.held = now, 0
	return held, true
}
