// Package clock is how searxgate tells the time: one small interface,
// the real clock, and a fake one for tests.
//
// Public methods read the clock once and pass now down; loops take timers
// and tickers from it; tests move a Fake by hand and never sleep. Only Real
// calls the time package's clock functions.
package clock

import "time"

// Clock tells the time and makes timers and tickers.
type Clock interface {
	// Now is the current time.
	Now() time.Time
	// NewTimer sends the time on the channel once, when d has passed (at
	// once when d ≤ 0). stop stops it and reports whether it had not fired
	// yet, as time.Timer.Stop.
	NewTimer(d time.Duration) (c <-chan time.Time, stop func() bool)
	// NewTicker sends the time on the channel every d (d > 0), dropping
	// ticks a slow reader misses, as time.Ticker; stop stops it.
	NewTicker(d time.Duration) (c <-chan time.Time, stop func())
}

// Or is c, or the real clock when c is nil: what a Clock field left nil
// means.
func Or(c Clock) Clock {
	if c == nil {
		return Real{}
	}
	return c
}

// Real is the system clock. Its zero value is ready to use.
type Real struct{}

// Now is time.Now.
func (Real) Now() time.Time { return time.Now() }

// NewTimer is time.NewTimer.
func (Real) NewTimer(d time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(d)
	return t.C, t.Stop
}

// NewTicker is time.NewTicker.
func (Real) NewTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}
