package pool

import (
	"errors"
	"fmt"
	"time"
)

// ErrNoneAvailable is returned by Checkout when it hands out no lease: every
// candidate is open, full, disabled, skipped, or the pool is empty.
var ErrNoneAvailable = errors.New("pool: no instance available")

// ErrUnknownValue is wrapped by the text parsers of Circuit, Tier, Strategy
// and Kind when they meet a name they do not know.
var ErrUnknownValue = errors.New("pool: unknown value")

// Circuit is the state of one instance's circuit breaker.
type Circuit uint8

const (
	// Closed: searches may go to the instance.
	Closed Circuit = iota
	// Open: the instance refused or failed; nothing goes to it until its
	// cooldown ends.
	Open
	// HalfOpen: the cooldown ended; one trial lease at a time decides.
	HalfOpen
)

var circuitNames = [...]string{Closed: "closed", Open: "open", HalfOpen: "half_open"}

func (c Circuit) String() string { return enumName(circuitNames[:], c, "circuit") }

// MarshalText writes the circuit's name ("closed", "open", "half_open").
func (c Circuit) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText reads a name written by MarshalText.
func (c *Circuit) UnmarshalText(b []byte) error {
	return parseEnum(circuitNames[:], string(b), "circuit", c)
}

// Tier says where an instance came from.
type Tier uint8

const (
	// Public instances come from the directory (searx.space); Seed adds and
	// removes them.
	Public Tier = iota
	// Own instances were added by the operator; Seed and Sweep never touch
	// them, and the PrimaryBackup strategy tries them first.
	Own
)

var tierNames = [...]string{Public: "public", Own: "own"}

func (t Tier) String() string { return enumName(tierNames[:], t, "tier") }

// MarshalText writes the tier's name ("public", "own").
func (t Tier) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText reads a name written by MarshalText.
func (t *Tier) UnmarshalText(b []byte) error { return parseEnum(tierNames[:], string(b), "tier", t) }

// Strategy chooses how Checkout orders the candidates.
type Strategy uint8

const (
	// EWMA ranks every instance by its score, lowest first.
	EWMA Strategy = iota
	// PrimaryBackup hands out the operator's own instances first, in the
	// order they were added, and spills over to the public ones (ranked as
	// by EWMA) only when the own ones are open, full, disabled or skipped.
	PrimaryBackup
)

var strategyNames = [...]string{EWMA: "ewma", PrimaryBackup: "primary_backup"}

func (s Strategy) String() string { return enumName(strategyNames[:], s, "strategy") }

// MarshalText writes the strategy's name ("ewma", "primary_backup").
func (s Strategy) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a name written by MarshalText.
func (s *Strategy) UnmarshalText(b []byte) error {
	v, err := ParseStrategy(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// ParseStrategy reads "ewma" or "primary_backup".
func ParseStrategy(name string) (Strategy, error) {
	var st Strategy
	if err := parseEnum(strategyNames[:], name, "strategy", &st); err != nil {
		return 0, fmt.Errorf("%w (want ewma or primary_backup)", err)
	}
	return st, nil
}

// Kind is what became of one upstream search.
type Kind uint8

const (
	// OK: a useful answer. Closes the circuit.
	OK Kind = iota
	// Soft: reachable but useless (empty, off-topic, every engine down).
	Soft
	// Refused: rate limited, redirected by the limiter, forbidden,
	// challenged. Opens the circuit.
	Refused
	// Failed: timeout, transport error, server error, unreadable or too
	// large body. Opens the circuit.
	Failed
	// Cancelled: the search no longer needed this answer (a hedge that
	// lost). Returns the lease and changes nothing else.
	Cancelled
)

var kindNames = [...]string{OK: "ok", Soft: "soft", Refused: "refused", Failed: "failed", Cancelled: "cancelled"}

func (k Kind) String() string { return enumName(kindNames[:], k, "kind") }

// MarshalText writes the kind's name.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a name written by MarshalText.
func (k *Kind) UnmarshalText(b []byte) error { return parseEnum(kindNames[:], string(b), "kind", k) }

// enumName is the name of v in names, or "what(v)" for a value with none.
func enumName[T ~uint8](names []string, v T, what string) string {
	if int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", what, uint8(v))
}

// parseEnum sets *v to the value whose name is name.
func parseEnum[T ~uint8](names []string, name, what string, v *T) error {
	for i, n := range names {
		if name == n {
			*v = T(i)
			return nil
		}
	}
	return fmt.Errorf("%w: %s %q", ErrUnknownValue, what, name)
}

// Owner says whose doing an outcome is. Only the instance's own outcomes
// move its circuit, streaks, failure average and cooldown; the others give
// the lease back and are counted as excused (see doc.go, "Whose outcome").
type Owner uint8

const (
	// OwnerInstance: the instance's own answer or failure (the zero
	// value: an Outcome that says nothing else is the instance's).
	OwnerInstance Owner = iota
	// OwnerQuery: the query's doing, as a second instance showed (a bang,
	// engines that fail on that query everywhere, a query slow everywhere).
	OwnerQuery
	// OwnerClient: the client's doing (its own limit, a request it
	// cancelled, a search the instance would not accept).
	OwnerClient
	// OwnerGateway: searxgate's own doing (its deadline ran out while the
	// search queued, a hedge it cut, its connection cap, the network of
	// the machine it runs on, shutting down).
	OwnerGateway
)

var ownerNames = [...]string{OwnerInstance: "instance", OwnerQuery: "query", OwnerClient: "client", OwnerGateway: "searxgate"}

func (o Owner) String() string { return enumName(ownerNames[:], o, "owner") }

// MarshalText writes the owner's name ("instance", "query", "client",
// "searxgate").
func (o Owner) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText reads a name written by MarshalText.
func (o *Owner) UnmarshalText(b []byte) error {
	return parseEnum(ownerNames[:], string(b), "owner", o)
}

// Outcome is what one lease's search came to, as Record learns it.
type Outcome struct {
	Kind Kind
	// Owner is whose doing it is; only OwnerInstance (the zero value)
	// teaches the pool anything about the instance.
	Owner Owner
	// Reason names the cause in detect's words ("rate_limited", "empty",
	// "timeout", ...); "" for OK.
	Reason Reason
	// Hits is the number of results of an OK answer.
	Hits int
	// RetryAfter is the wait the server asked for (Retry-After,
	// RateLimit-Reset); 0 when it gave none.
	RetryAfter time.Duration
}

// Event reports one change of an instance's state. Circuit transitions have
// From != To; the operator's and the directory's changes (Reason "added",
// "removed", "enabled", "disabled", "seeded", "unlisted") may have From ==
// To.
type Event struct {
	Instance string
	// Owner is whose outcome caused a transition: always OwnerInstance for
	// the circuit changes a search causes (no other owner moves one).
	Owner    Owner
	From, To Circuit
	// Cooldown is the cooldown just set when To is Open, else 0.
	Cooldown time.Duration
	At       time.Time
	// Reason is the outcome's reason for transitions caused by a search
	// ("rate_limited", "timeout", "empty", ...), "cooldown_ended" for
	// Open -> HalfOpen, or the name of the operation that caused it.
	Reason Reason
	// Source is where what caused the change was learned: here, or from
	// another searxgate sharing this one's egress (OpenUntil).
	Source Source
}

// Source is where what caused an event was learned.
type Source uint8

const (
	// SourceLocal is a change this searxgate's own searches, operator or
	// directory caused.
	SourceLocal Source = iota
	// SourceShared is a circuit opened by OpenUntil: heard from another
	// searxgate of the same egress, not to be passed on again.
	SourceShared
)

// Gone reports whether e takes its instance out of the pool (the
// operator removed it, or it left the directory): whatever is kept for
// it elsewhere (connections, counters, shared state) can go.
func (e Event) Gone() bool { return e.Reason == ReasonRemoved || e.Reason == ReasonUnlisted }

// Reason names the cause of an outcome or an event: the words of the
// package that decided it (detect's verdicts, proxy's own, the pool's
// operations below), typed so that no cause crosses a package as a bare
// string.
type Reason string

// Event reasons the pool itself names.
const (
	ReasonCooldownEnded Reason = "cooldown_ended"
	ReasonAdded         Reason = "added"
	ReasonRemoved       Reason = "removed"
	ReasonEnabled       Reason = "enabled"
	ReasonDisabled      Reason = "disabled"
	ReasonSeeded        Reason = "seeded"
	ReasonUnlisted      Reason = "unlisted"
	ReasonReset         Reason = "reset"
	ReasonForgotten     Reason = "forgotten"
)

// Prior is one candidate from the directory with its expected response
// time (the searx.space median); 0 means none known.
type Prior struct {
	URL   string
	Prior time.Duration
}

// Stats is what the pool knows about one instance, for people, metrics and
// the admin API.
type Stats struct {
	URL      string  `json:"url"`
	Tier     Tier    `json:"tier"`
	Disabled bool    `json:"disabled"`
	Circuit  Circuit `json:"circuit"`
	// Health is a 0-100 score for people: 40 % speed (full at 500 ms,
	// none at 5 s) and 60 % clean answers. It is halved while half-open,
	// and 0 while open or disabled.
	Health int `json:"health"`
	// LatencyMS is the latency EWMA, or the prior while not Measured.
	LatencyMS   float64 `json:"latency_ms"`
	FailureRate float64 `json:"failure_rate"`

	// Monotone counters (Reset zeroes them; nothing else lowers them).
	Successes uint64 `json:"successes"`
	Failures  uint64 `json:"failures"`
	Refusals  uint64 `json:"refusals"`
	Softs     uint64 `json:"softs"`
	Cancelled uint64 `json:"cancelled"`
	// Excused counts outcomes that were not the instance's own: the
	// query's, the client's or searxgate's (see Owner).
	Excused uint64 `json:"excused"`

	ConsecutiveFailures int       `json:"consecutive_failures"`
	ConsecutiveSoft     int       `json:"consecutive_soft"`
	CooldownUntil       time.Time `json:"cooldown_until,omitzero"`
	InFlight            int       `json:"in_flight"`
	MaxInFlight         int       `json:"max_in_flight"` // its cap: the public one or the own one; 0 = none
	// TrialOut: the circuit is half-open and its one trial search is out.
	TrialOut    bool      `json:"trial_out"`
	LastOutcome string    `json:"last_outcome"`
	LastReason  Reason    `json:"last_reason"`
	LastUsedAt  time.Time `json:"last_used_at,omitzero"`
	PriorMS     float64   `json:"prior_ms"`
	SeededAt    time.Time `json:"seeded_at,omitzero"`
	// Measured is false while only the prior is known.
	Measured bool `json:"measured"`
	// Quality is what its answers taught: fullness (1 until measured),
	// per category, the engines answering and those suspended now.
	Quality QualityState `json:"quality"`
	// Thin: its answers are expected thin (fullness under ThinBelow).
	Thin bool `json:"thin"`
	// PoolWhy is why the pool would not hand it out now (WhyNone: it
	// would). It is only the pool's part: instance.Registry.Usable says the whole.
	PoolWhy Why `json:"-"`
}

// InstanceState is everything the pool learned about one instance, with
// wall-clock times, for store/ to persist as JSON and give back to Import.
// A state with Removed set is the operator's removal of URL, kept so that
// the directory does not bring it back.
type InstanceState struct {
	URL      string `json:"url"`
	Tier     Tier   `json:"tier"`
	Disabled bool   `json:"disabled,omitempty"`
	Removed  bool   `json:"removed,omitempty"`

	Circuit       Circuit   `json:"circuit"`
	CooldownUntil time.Time `json:"cooldown_until,omitzero"`
	// CooldownMS is the length of the last cooldown set.
	CooldownMS int64 `json:"cooldown_ms,omitempty"`
	// Trips counts circuit openings since the last OK answer; the next
	// cooldown doubles per trip.
	Trips int `json:"trips,omitempty"`

	Measured    bool    `json:"measured"`
	LatencyMS   float64 `json:"latency_ms"`
	FailureRate float64 `json:"failure_rate"`
	PriorMS     float64 `json:"prior_ms"`

	Successes uint64 `json:"successes"`
	Failures  uint64 `json:"failures"`
	Refusals  uint64 `json:"refusals"`
	Softs     uint64 `json:"softs"`
	Cancelled uint64 `json:"cancelled"`
	Excused   uint64 `json:"excused,omitempty"`

	ConsecutiveFailures int `json:"consecutive_failures"`
	ConsecutiveSoft     int `json:"consecutive_soft"`

	LastOutcome string    `json:"last_outcome,omitempty"`
	LastReason  Reason    `json:"last_reason,omitempty"`
	LastUsedAt  time.Time `json:"last_used_at,omitzero"`
	SeededAt    time.Time `json:"seeded_at,omitzero"`

	// Quality is what its answers taught (nil: nothing yet).
	Quality *QualityState `json:"quality,omitempty"`
}
