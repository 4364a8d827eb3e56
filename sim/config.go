package sim

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"
)

// Sentinel errors; the errors this package returns wrap them.
var (
	// ErrConfig: the fleet's configuration is not usable.
	ErrConfig = errors.New("sim: bad configuration")
	// ErrUnknownBehaviour: a behaviour name that is not one of Behaviours().
	ErrUnknownBehaviour = errors.New("sim: unknown behaviour")
	// ErrUnknownMix: a fleet name that is not one of MixNames().
	ErrUnknownMix = errors.New("sim: unknown mix")
	// ErrClosed: the fleet is closed.
	ErrClosed = errors.New("sim: fleet closed")
	// ErrNotFleet: Dial was asked for an address that is not one of the
	// fleet's instances.
	ErrNotFleet = errors.New("sim: address is not one of the fleet's")
	// ErrUsage: RunCLI was given flags it cannot use.
	ErrUsage = errors.New("sim: usage")
)

// InstanceConfig describes one simulated instance. Zero durations and
// counts take the defaults documented on each field.
type InstanceConfig struct {
	// ID names the instance, e.g. "sim-07"; it is in every result (the
	// result URL's path and its content) so a test can tell who served
	// it. Empty: "sim-NN" from its position.
	ID string
	// Behaviour is how the instance treats its clients; empty means Fast.
	Behaviour Behaviour
	// Latency is how long a search waits before it is answered. Zero:
	// the behaviour's default (Fast 40ms, Medium 250ms, Slow 1.5s, others
	// 100ms). Negative: answer at once.
	Latency time.Duration
	// Jitter spreads Latency uniformly by ± Jitter (seeded).
	Jitter time.Duration
	// JSON enables the JSON format; false answers format=json with 403
	// Forbidden, like a SearXNG whose settings leave JSON out.
	JSON bool
	// Autocomplete is the autocomplete backend /config names ("" = none,
	// as SearXNG's default; /autocompleter answers either way).
	Autocomplete string

	// RetryAfter is how long a RateLimit* refusal or a 503 lasts (and what
	// Retry-After announces). Default 60s.
	RetryAfter time.Duration
	// RateBurst is how many searches a client gets per RateWindow from a
	// RateLimit* instance before it is refused. Default 5.
	RateBurst int
	// RateWindow is the RateLimit* counting window. Default 1 minute.
	RateWindow time.Duration
	// FlapPeriod is how long a Flapping instance stays up, then down.
	// Default 30s.
	FlapPeriod time.Duration
	// DegradeStep is how much slower each search of a Degrading instance
	// is than the one before. Default 50ms; capped at 30s in all.
	DegradeStep time.Duration
	// HangFor bounds how long Hang and StallBody hold a connection.
	// Default 10 minutes.
	HangFor time.Duration
	// SlowLorisEvery is the pause between two bytes of SlowLoris. Default 1s.
	SlowLorisEvery time.Duration
	// BodySize is the size of HugeBody's answer (default 16 MiB) and of
	// GzipBomb's inflated body (default 64 MiB).
	BodySize int
	// Results is the number of results a page holds. Default 10; 4 for
	// Thin.
	Results int
	// Categories are the categories the instance has engines for (as its
	// /config lists them); a search asking only for others gets 200 and
	// nothing, as SearXNG answers when no engine of its categories is
	// enabled. Empty: general and images.
	Categories []string
	// Pages is how many pages of results a query has; later pages are
	// empty. Default 10.
	Pages int
	// LimiterHTML20s overrides the limiter's 15 searches per 20 s.
	LimiterHTML20s int
	// LimiterHTML10m overrides the limiter's 150 searches per 10 min.
	LimiterHTML10m int
	// LimiterAPIPerHour overrides the limiter's 4 non-HTML searches an hour.
	LimiterAPIPerHour int
	// SecFetch makes the limiter also redirect (302 to "/") searches whose
	// User-Agent claims a browser (Mozilla/5.0 with a Chrome, Firefox,
	// Safari or Edge token) without Sec-Fetch-Mode, as SearXNG releases
	// after 2024.10.5 do. Off by default, like 2024.10.5.
	SecFetch bool
}

// Config describes a fleet.
type Config struct {
	Instances []InstanceConfig
	// Host is the address every instance listens on; default "127.0.0.1".
	// Only loopback addresses are accepted: the fleet never listens
	// elsewhere.
	Host string
	// BasePort: 0 takes any free port per instance; else instance i
	// listens on BasePort+i (a Dead one leaves its port unused).
	BasePort int
	// InMemory serves every instance on a fasthttputil in-memory listener
	// instead of TCP; clients then connect through Fleet.Dial. Instance
	// URLs still read http://Host:port/, with ports from BasePort (or
	// 20000 when it is 0) that nothing listens on.
	InMemory bool
	// Seed drives all randomness: jitter, the mix, the directory's lies.
	Seed int64
	// Now is the clock of the limiter windows, Retry-After windows and
	// flapping; nil means time.Now. Latencies are waited in real time.
	Now func() time.Time
	// LocalLinks makes every result link to a page its instance serves
	// itself (/sim/page/...: an article about the query, for a page
	// reader), instead of a host under the reserved example domains: a
	// fleet whose every link stays on loopback, for the demo.
	LocalLinks bool
	// LatencyScale multiplies every Latency, Jitter and DegradeStep
	// (after defaults), so a benchmark can run a realistic mix fast.
	// 0 means 1.
	LatencyScale float64
	// Log receives the fleet's own messages (listener errors); nil
	// discards them.
	Log *slog.Logger
	// SlowQuery is how much longer every instance takes for a query that
	// starts with SlowQueryPrefix (SearXNG waits for its slowest
	// engine); default 2.5 s, scaled by LatencyScale.
	SlowQuery time.Duration
}

// Defaults of InstanceConfig.
const (
	defaultRetryAfter     = 60 * time.Second
	defaultSlowQuery      = 2500 * time.Millisecond
	defaultRateBurst      = 5
	defaultRateWindow     = time.Minute
	defaultFlapPeriod     = 30 * time.Second
	defaultDegradeStep    = 50 * time.Millisecond
	maxDegrade            = 30 * time.Second
	defaultHangFor        = 10 * time.Minute
	defaultSlowLorisEvery = time.Second
	defaultHugeBody       = 16 << 20
	defaultBombSize       = 64 << 20
	defaultResults        = 10
	thinResults           = 4
	defaultPages          = 10
	limiterBurstMax       = 15
	limiterLongMax        = 150
	limiterAPIMax         = 4
	inMemoryBasePort      = 20000
)

// withDefaults returns c with every zero field given its default and the
// latency scale applied.
func (c InstanceConfig) withDefaults(scale float64) InstanceConfig {
	if c.Behaviour == "" {
		c.Behaviour = Fast
	}
	if c.Latency == 0 {
		switch c.Behaviour {
		case Fast, Thin, Partial:
			c.Latency = 40 * time.Millisecond
		case Medium, JSONDisabled:
			c.Latency = 250 * time.Millisecond
		case Slow:
			c.Latency = 1500 * time.Millisecond
		default:
			c.Latency = 100 * time.Millisecond
		}
	}
	if c.Latency < 0 {
		c.Latency = 0
	}
	if c.Behaviour == JSONDisabled {
		c.JSON = false
	}
	if c.RetryAfter == 0 {
		c.RetryAfter = defaultRetryAfter
	}
	if c.RateBurst == 0 {
		c.RateBurst = defaultRateBurst
	}
	if c.RateWindow == 0 {
		c.RateWindow = defaultRateWindow
	}
	if c.FlapPeriod == 0 {
		c.FlapPeriod = defaultFlapPeriod
	}
	if c.DegradeStep == 0 {
		c.DegradeStep = defaultDegradeStep
	}
	if c.HangFor == 0 {
		c.HangFor = defaultHangFor
	}
	if c.SlowLorisEvery == 0 {
		c.SlowLorisEvery = defaultSlowLorisEvery
	}
	if c.BodySize == 0 {
		c.BodySize = defaultHugeBody
		if c.Behaviour == GzipBomb {
			c.BodySize = defaultBombSize
		}
	}
	if c.Results == 0 {
		c.Results = defaultResults
		if c.Behaviour == Thin {
			c.Results = thinResults
		}
	}
	if c.Pages == 0 {
		c.Pages = defaultPages
	}
	if c.LimiterHTML20s == 0 {
		c.LimiterHTML20s = limiterBurstMax
	}
	if c.LimiterHTML10m == 0 {
		c.LimiterHTML10m = limiterLongMax
	}
	if c.LimiterAPIPerHour == 0 {
		c.LimiterAPIPerHour = limiterAPIMax
	}
	if scale > 0 && scale != 1 {
		c.Latency = time.Duration(float64(c.Latency) * scale)
		c.Jitter = time.Duration(float64(c.Jitter) * scale)
		c.DegradeStep = time.Duration(float64(c.DegradeStep) * scale)
	}
	return c
}

// validate reports the first thing wrong with c, naming the instance.
func (c InstanceConfig) validate(i int) error {
	name := c.ID
	if name == "" {
		name = fmt.Sprintf("#%d", i)
	}
	if c.Behaviour != "" && !c.Behaviour.Valid() {
		_, err := ParseBehaviour(string(c.Behaviour))
		return fmt.Errorf("%w: instance %s: %w", ErrConfig, name, err)
	}
	for _, d := range []struct {
		field string
		v     time.Duration
	}{
		{"Jitter", c.Jitter}, {"RetryAfter", c.RetryAfter}, {"RateWindow", c.RateWindow},
		{"FlapPeriod", c.FlapPeriod}, {"DegradeStep", c.DegradeStep}, {"HangFor", c.HangFor},
		{"SlowLorisEvery", c.SlowLorisEvery},
	} {
		if d.v < 0 {
			return fmt.Errorf("%w: instance %s: %s is negative", ErrConfig, name, d.field)
		}
	}
	for _, n := range []struct {
		field string
		v     int
	}{
		{"RateBurst", c.RateBurst}, {"BodySize", c.BodySize}, {"Results", c.Results},
		{"Pages", c.Pages}, {"LimiterHTML20s", c.LimiterHTML20s},
		{"LimiterHTML10m", c.LimiterHTML10m}, {"LimiterAPIPerHour", c.LimiterAPIPerHour},
	} {
		if n.v < 0 {
			return fmt.Errorf("%w: instance %s: %s is negative", ErrConfig, name, n.field)
		}
	}
	if c.ID != "" && strings.ContainsAny(c.ID, "/?#<>\"' \t\r\n&") {
		return fmt.Errorf("%w: instance %s: ID may hold no URL or markup characters", ErrConfig, name)
	}
	return nil
}

// validate reports the first thing wrong with the fleet's configuration.
func (c Config) validate() error {
	if len(c.Instances) == 0 {
		return fmt.Errorf("%w: no instances", ErrConfig)
	}
	if !isLoopback(c.Host) {
		return fmt.Errorf("%w: host %q is not a loopback address; the fleet listens only on loopback", ErrConfig, c.Host)
	}
	if c.BasePort < 0 || c.BasePort+len(c.Instances)-1 > 65535 {
		return fmt.Errorf("%w: ports %d..%d are out of range", ErrConfig, c.BasePort, c.BasePort+len(c.Instances)-1)
	}
	if c.LatencyScale < 0 {
		return fmt.Errorf("%w: LatencyScale is negative", ErrConfig)
	}
	seen := make(map[string]bool, len(c.Instances))
	for i, ic := range c.Instances {
		if err := ic.validate(i); err != nil {
			return err
		}
		if ic.ID != "" {
			if seen[ic.ID] {
				return fmt.Errorf("%w: instance ID %q is used twice", ErrConfig, ic.ID)
			}
			seen[ic.ID] = true
		}
	}
	return nil
}

// isLoopback reports whether host is a loopback IP address.
func isLoopback(host string) bool {
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
