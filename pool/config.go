package pool

import (
	crand "crypto/rand"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"time"

	"github.com/searxgate/searxgate/internal/clock"
)

// Defaults of Config; a zero field means its default.
const (
	DefaultPrior          = 2500 * time.Millisecond
	DefaultFailurePenalty = 3.0
	DefaultCooldown       = 60 * time.Second
	DefaultMaxCooldown    = 30 * time.Minute
	DefaultSoftStrikes    = 3
	DefaultFailStrikes    = 3
	DefaultForgetAfter    = 6 * time.Hour
	DefaultSweepEvery     = 10 * time.Minute
	DefaultMaxInFlight    = 2
	DefaultOwnMaxInFlight = 8
)

// Config tunes a Pool. The zero value is the default of every field.
type Config struct {
	// Prior is the expected response time of an instance nobody measured
	// and the directory gave no median for. Default 2500ms.
	Prior time.Duration
	// FailurePenalty weighs the failure EWMA in the score
	// latency * (1 + FailurePenalty*failure). Default 3.0; negative means 0
	// (no penalty).
	FailurePenalty float64
	// ThinCost is what a thin answer costs a search in the score: the
	// score adds ThinCost * min(1, (1 - fullness)/HalfPage) (doc.go,
	// "Ranking"). A thin instance ranks after a full one unless the full
	// one is slower by more than that, and after one not measured yet
	// at the default prior. Default 3s; negative means 0 (quality is not
	// ranked).
	ThinCost time.Duration
	// QualityHalfLife is how fast what thin answers taught fades, so an
	// instance whose engines came back is tried again. Default 30min.
	QualityHalfLife time.Duration
	// Jitter, 0 to 1, multiplies each score by a random factor in
	// 1 ± Jitter at every ranking, so the fastest few share the load.
	// Default 0 (off). Values outside [0, 1] are clamped.
	Jitter float64
	// MinInterval ranks an instance checked out less than MinInterval ago
	// after every rested one, least recently used first. Default 0 (off).
	MinInterval time.Duration
	// Cooldown is the first cooldown of a circuit opened without a
	// server-given retry-after; it doubles per consecutive opening.
	// Default 60s.
	Cooldown time.Duration
	// MaxCooldown caps every cooldown, server-given ones included.
	// Default 30min.
	MaxCooldown time.Duration
	// SoftStrikes soft answers in a row open the circuit. Default 3;
	// negative means never.
	SoftStrikes int
	// FailStrikes Failed outcomes in a row (timeouts, transport and
	// server errors, unreadable answers) open the circuit. A refusal
	// opens it at once, and so does any failure of a half-open trial.
	// Default 3: one timeout or reset is as often the network's or the
	// query's as the instance's, three in a row on different searches
	// are the instance's. 1 opens on every failure.
	FailStrikes int
	// ForgetAfter: Sweep forgets what was learned about a public instance
	// idle that long. Default 6h; negative means never.
	ForgetAfter time.Duration
	// SweepEvery is how often Run sweeps. Default 10min.
	// The pool does not start a ticker itself.
	SweepEvery time.Duration
	// MaxInFlight bounds the leases out on one instance at once. Default 2;
	// negative means unlimited.
	MaxInFlight int
	// OwnMaxInFlight bounds the leases out on one of the operator's own
	// instances (tier Own) at once. Default 8; negative means unlimited.
	OwnMaxInFlight int
	// Strategy orders the candidates. Default EWMA.
	Strategy Strategy
	// Clock tells the time and ticks Run; nil means the real clock. The
	// pool reads it once per public call.
	Clock clock.Clock
	// Rand draws the jitter; nil means a source seeded from crypto/rand.
	// The pool guards it with its own mutex: do not share it with anything
	// else.
	Rand *rand.Rand
	// OnEvent, when set, is called once for every state change (see Event),
	// on the goroutine that caused it, after the pool released its locks:
	// it may call the pool. Events of different goroutines may arrive out
	// of order; Event.At orders them. It must not block for long: the
	// search that caused the change waits for it.
	OnEvent func(Event)
}

// withDefaults returns c with every zero field set to its default and
// out-of-range values brought into range.
func (c Config) withDefaults() Config {
	if c.Prior <= 0 {
		c.Prior = DefaultPrior
	}
	switch {
	case c.FailurePenalty == 0 || math.IsNaN(c.FailurePenalty):
		c.FailurePenalty = DefaultFailurePenalty
	case c.FailurePenalty < 0:
		c.FailurePenalty = 0
	case math.IsInf(c.FailurePenalty, 1):
		c.FailurePenalty = math.MaxFloat32
	}
	switch {
	case !(c.Jitter > 0): // includes NaN
		c.Jitter = 0
	case c.Jitter > 1:
		c.Jitter = 1
	}
	switch {
	case c.ThinCost == 0:
		c.ThinCost = DefaultThinCost
	case c.ThinCost < 0:
		c.ThinCost = 0
	}
	if c.QualityHalfLife <= 0 {
		c.QualityHalfLife = DefaultQualityHalfLife
	}
	if c.MinInterval < 0 {
		c.MinInterval = 0
	}
	if c.Cooldown <= 0 {
		c.Cooldown = DefaultCooldown
	}
	if c.MaxCooldown <= 0 {
		c.MaxCooldown = DefaultMaxCooldown
	}
	if c.SoftStrikes == 0 {
		c.SoftStrikes = DefaultSoftStrikes
	}
	if c.FailStrikes <= 0 {
		c.FailStrikes = DefaultFailStrikes
	}
	if c.ForgetAfter == 0 {
		c.ForgetAfter = DefaultForgetAfter
	}
	if c.SweepEvery <= 0 {
		c.SweepEvery = DefaultSweepEvery
	}
	switch {
	case c.MaxInFlight == 0:
		c.MaxInFlight = DefaultMaxInFlight
	case c.MaxInFlight > math.MaxInt32:
		c.MaxInFlight = math.MaxInt32
	}
	switch {
	case c.OwnMaxInFlight == 0:
		c.OwnMaxInFlight = DefaultOwnMaxInFlight
	case c.OwnMaxInFlight > math.MaxInt32:
		c.OwnMaxInFlight = math.MaxInt32
	}
	if c.Strategy > PrimaryBackup {
		c.Strategy = EWMA
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.Rand == nil {
		var seed [32]byte
		_, _ = crand.Read(seed[:]) // never fails (crypto/rand panics instead)
		c.Rand = rand.New(rand.NewPCG(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:16])))
	}
	return c
}
