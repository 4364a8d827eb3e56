package sim

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// MixNames lists the named fleets Mix knows.
func MixNames() []string { return []string{"healthy", "hostile", "mixed"} }

// The misbehaving members of the named fleets, most telling first: a small
// fleet takes a prefix.
var (
	mixedSpecial = []Behaviour{
		RateLimitSeconds, JSONDisabled, Dead, Limiter, OffTopic, CloudflareChallenge403,
		EmptyEnginesDown, Slow, RateLimitBare, LinkToken, AnubisChallenge, Flapping,
		Unavailable503, Degrading, RateLimitDate, Hang, CloudflareChallenge200,
		JSONDisabled, Limiter, Slow,
	}
	hostileSpecial = []Behaviour{
		Hostile, ResetMidBody, BrokenJSON, HugeBody, GzipBomb, InvalidUTF8, StallBody,
		SlowLoris, RedirectLoop, RedirectOtherHost, DDoSGuard, CloudflareChallenge200,
		AnubisChallenge, Hang, OffTopic, EmptyEnginesDown, RateLimitBare, Unavailable503,
		Dead, Flapping, CloudflareChallenge403, LinkToken, Limiter, Degrading,
	}
)

// autocompleters are the backends a fleet's instances that offer
// suggestions name in /config.
var autocompleters = []string{"duckduckgo", "google", "brave"}

// Mix returns the instances of a named fleet of n, deterministic from
// seed:
//   - "healthy": every instance answers, JSON enabled, latencies from fast
//     to slow;
//   - "mixed": realistic, about 60% good (fast or medium, JSON enabled on
//     most; from 10 instances on one of them thin, from 20 on one more
//     partial) and the rest slow, rate limited, limited by SearXNG's limiter,
//     JSON disabled, challenged, dead, off-topic, empty, flapping, ...;
//   - "hostile": about 80% misbehaving, every kind of bad answer.
//
// IDs are "sim-01".. in order; the behaviours are shuffled by seed. Every
// third instance (sim-01, sim-04, ...) offers suggestions: its /config
// names an autocomplete backend.
func Mix(name string, n int, seed int64) ([]InstanceConfig, error) {
	if n < 1 {
		return nil, fmt.Errorf("%w: a fleet needs at least one instance, not %d", ErrConfig, n)
	}
	rnd := rand.New(rand.NewPCG(uint64(seed), 0x313c))
	good := func() Behaviour {
		switch r := rnd.IntN(10); {
		case r < 6:
			return Fast
		case r < 9:
			return Medium
		default:
			return Slow
		}
	}
	bs := make([]Behaviour, 0, n)
	switch strings.ToLower(name) {
	case "healthy":
		for range n {
			bs = append(bs, good())
		}
	case "mixed":
		special := n * 2 / 5
		if n >= 3 && special == 0 {
			special = 1
		}
		for i := range special {
			bs = append(bs, mixedSpecial[i%len(mixedSpecial)])
		}
		for len(bs) < n {
			bs = append(bs, []Behaviour{Fast, Fast, Medium}[rnd.IntN(3)])
		}
		// Public instances often lose their big engines: of the good
		// ones, one answers thin from 10 instances on, one more partial
		// from 20 on.
		if n >= 10 && len(bs) > special {
			bs[n-1] = Thin
		}
		if n >= 20 && len(bs) > special+1 {
			bs[n-2] = Partial
		}
	case "hostile":
		goodN := max(1, n/5)
		for i := range n - goodN {
			bs = append(bs, hostileSpecial[i%len(hostileSpecial)])
		}
		for len(bs) < n {
			bs = append(bs, good())
		}
	default:
		return nil, fmt.Errorf("%w: %q (known: %s)", ErrUnknownMix, name, strings.Join(MixNames(), ", "))
	}
	rnd.Shuffle(len(bs), func(i, j int) { bs[i], bs[j] = bs[j], bs[i] })

	width := max(2, len(strconv.Itoa(n)))
	out := make([]InstanceConfig, n)
	for i, b := range bs {
		ms := func(lo, hi int) time.Duration { return time.Duration(lo+rnd.IntN(hi-lo+1)) * time.Millisecond }
		var lat time.Duration
		switch b {
		case Fast, Thin, Partial:
			lat = ms(30, 120)
		case Medium, JSONDisabled:
			lat = ms(150, 450)
		case Slow:
			lat = ms(800, 2500)
		default:
			lat = ms(60, 300)
		}
		json := true
		if strings.EqualFold(name, "mixed") && (b == Fast || b == Medium || b == Thin || b == Partial) && rnd.IntN(10) < 3 {
			json = false // many public instances leave JSON out
		}
		out[i] = InstanceConfig{
			ID:        fmt.Sprintf("sim-%0*d", width, i+1),
			Behaviour: b,
			Latency:   lat,
			Jitter:    lat / 5,
			JSON:      json && b != JSONDisabled,
		}
		if i%3 == 0 {
			// Some offer suggestions, as real instances do: /config names
			// the backend (SearXNG's default is none).
			out[i].Autocomplete = autocompleters[i/3%len(autocompleters)]
		}
	}
	return out, nil
}
