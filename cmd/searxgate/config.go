package main

import (
	"crypto/x509"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http/httpproxy"

	"github.com/searxgate/searxgate/client"
	"github.com/searxgate/searxgate/directory"
	"github.com/searxgate/searxgate/egress"
	"github.com/searxgate/searxgate/internal/clock"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/redis"
	"github.com/searxgate/searxgate/results"
)

// DefaultDirectory is where the public instance list comes from.
const DefaultDirectory = "https://searx.space/data/instances.json"

// Config is every setting of `searxgate serve`. Each has a flag and an
// environment variable SEARXGATE_<NAME>; a flag wins over its variable.
type Config struct {
	Listen       string
	Data         string
	Directory    string
	Instances    []string
	AllowPrivate bool
	// ReaderAllowPrivate and ImageAllowPrivate are the page reader's and
	// the image proxy's own switches: --allow-private lets instances be
	// private, nothing more.
	ReaderAllowPrivate bool
	ImageAllowPrivate  bool
	// ReaderQueueMiB bounds the memory held by the PDFs being read (their
	// bodies, downloading, waiting for a worker or in one), all clients
	// together; one client may hold a quarter of it, at least one page.
	ReaderQueueMiB int
	// CAFile is a PEM file of CA certificates trusted besides the
	// system's (own instances, pages or a TLS-inspecting proxy under a
	// private CA).
	CAFile      string
	Contact     string
	Deadline    time.Duration
	CacheTTL    time.Duration
	Budget20s   int
	Budget10m   int
	MaxInFlight int
	// OwnBudget20s and OwnBudget10m bound the searches one of the
	// operator's own instances gets (0: no limit, the default).
	OwnBudget20s int
	OwnBudget10m int
	// OwnPassIP: the operator's own instances pass searxgate's address
	// (botdetection.ip_lists.pass_ip), so their limiter never counts it.
	OwnPassIP      bool
	OwnMaxInFlight int
	Queue          int           // searches that may wait for a free slot
	Fanout         int           // instances asked at once and merged, by default
	MaxFanout      int           // the most a request's fanout may ask
	FanoutGrace    time.Duration // how long a fan-out waits for more answers after its first
	MaxAttempts    int
	Strategy       string
	Refresh        time.Duration
	AdminToken     string
	MCPToken       string // bearer token /mcp requires; needed when searxgate is reachable beyond loopback
	PublicURL      string
	LogFormat      string
	LogLevel       string
	// JSONShape is the shape of format=json answers: "classic" (what the
	// SearXNG clients read, docs/parity.md) or "current" (SearXNG's since
	// 2026-05).
	JSONShape   string
	AccessLog   bool
	LinkToken   bool
	Shutdown    time.Duration
	Flush       time.Duration
	ClientRate  int
	ClientBurst int
	MaxConns    int
	TrustProxy  []string

	// APIKeys and APIKeyFile are the keys the search APIs (package api)
	// take; the file is read again on SIGHUP.
	APIKeys    []string
	APIKeyFile string

	// resolver replaces the system's resolver in every guarded dialer (the
	// instances, the reader, the image proxy); tests set it so that no name
	// is ever looked up on the network.
	resolver ipResolver
	// instanceAuth is the Authorization header of each own instance given
	// with user:password@ (keyed by its URL without them).
	instanceAuth map[string]string
	// The outbound proxy, from HTTPS_PROXY, HTTP_PROXY and NO_PROXY (or
	// their lower-case forms), as Go reads them: for the upstream client,
	// the directory fetch and the reader.
	httpsProxy, httpProxy, noProxy string
	// clock is what every part tells the time and times its loops with;
	// nil is the real clock. Tests set it.
	clock clock.Clock

	// Limits on client connections and on the instance API.
	MaxConnsPerIP   int
	ReadTimeout     time.Duration
	IdleTimeout     time.Duration
	MaxOwnInstances int

	// Several replicas sharing their manners (see shared.go).
	Redis        string        // redis://, rediss:// or unix:// URL; "" = one process, nothing shared
	Egress       string        // the replicas that leave through one address share one budget
	RedisTimeout time.Duration // the longest a search waits on Redis
	// The operator's secret, the same on every replica (--redis needs
	// one): given, or read from a file at start.
	Secret     string
	SecretFile string

	// redisHeartbeat replaces the shared state's heartbeat (2 s); tests
	// set it so that outages and recoveries take fractions of a second.
	redisHeartbeat time.Duration
}

// option is one setting: its flag, its env var and its help.
type option struct {
	name  string // flag name; the env var is SEARXGATE_ + upper(name with - as _)
	usage string
	ptr   any // *string, *int, *bool, *time.Duration or *[]string (a list)
}

func envName(flagName string) string {
	return "SEARXGATE_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// defaultDataDir is the user's state folder: $XDG_STATE_HOME/searxgate, or
// ~/.local/state/searxgate.
func defaultDataDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "searxgate")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "state", "searxgate")
	}
	return "searxgate-data"
}

func defaultConfig() Config {
	return Config{
		Listen:         "127.0.0.1:8888",
		Data:           defaultDataDir(),
		Directory:      DefaultDirectory,
		Deadline:       proxy.DefaultDeadline,
		CacheTTL:       proxy.DefaultCacheTTL,
		Budget20s:      proxy.DefaultBudget20s,
		Budget10m:      proxy.DefaultBudget10m,
		MaxInFlight:    pool.DefaultMaxInFlight,
		OwnMaxInFlight: pool.DefaultOwnMaxInFlight,
		Queue:          proxy.DefaultMaxQueue,
		Fanout:         1,
		MaxFanout:      proxy.DefaultMaxFanout,
		FanoutGrace:    proxy.DefaultFanoutGrace,
		MaxAttempts:    proxy.DefaultMaxAttempts,
		Strategy:       "auto",
		Refresh:        directory.DefaultRefresh,
		LogFormat:      "text",
		JSONShape:      "classic",
		LogLevel:       "info",
		Shutdown:       10 * time.Second,
		Flush:          5 * time.Second,
		ClientRate:     120,
		ClientBurst:    60,
		MaxConns:       10_000,
		ReaderQueueMiB: 32,

		MaxConnsPerIP:   64,
		ReadTimeout:     5 * time.Second,
		IdleTimeout:     15 * time.Second,
		MaxOwnInstances: 100,

		Egress:       "default",
		RedisTimeout: redis.DefaultOpTimeout,
	}
}

// listValue is a repeatable flag; from the environment it is a
// comma-separated list. The first flag replaces a list the environment
// gave (fromEnv), the next ones add to it.
type listValue struct {
	p       *[]string
	fromEnv *bool
}

func (l listValue) String() string {
	if l.p == nil {
		return ""
	}
	return strings.Join(*l.p, ",")
}
func (l listValue) Set(v string) error {
	if *l.fromEnv {
		*l.p, *l.fromEnv = nil, false
	}
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l.p = append(*l.p, s)
		}
	}
	return nil
}

func (c *Config) options() []option {
	return []option{
		{"listen", "address to serve on (host:port; port 0 picks one)", &c.Listen},
		{"data", "folder for searxgate.db (what the pool learned, the operator's changes, the cache)", &c.Data},
		{"directory", "instances.json to seed the pool from: an http(s) URL, a file path, or none (your own instances only)", &c.Directory},
		{"instance", "an instance of your own, used first (repeatable; env: comma-separated)", &c.Instances},
		{"allow-private", "allow instances on loopback and private addresses (home networks, tests); the page reader and the image proxy have their own switches", &c.AllowPrivate},
		{"reader-allow-private", "let MCP's page reader (web_url_read) fetch loopback and private addresses", &c.ReaderAllowPrivate},
		{"reader-queue-mib", "MiB the PDFs being read by web_url_read may hold at once, all clients together (one client a quarter, at least 5); past it a PDF is refused at once, with a time to retry", &c.ReaderQueueMiB},
		{"image-proxy-allow-private", "let the image proxy fetch thumbnails on loopback and private addresses", &c.ImageAllowPrivate},
		{"ca-file", "PEM file of CA certificates to trust besides the system's (own instances, pages, images, or a proxy under a private CA)", &c.CAFile},
		{"contact", "how an instance's operator can reach you, put in the User-Agent (a URL or an e-mail address)", &c.Contact},
		{"deadline", "time one search may take, all attempts included", &c.Deadline},
		{"cache-ttl", "how long an answer is served from the cache (0: no cache of any kind; no answer, suggestion or read page is kept, in memory or on disk)", &c.CacheTTL},
		{"budget-20s", "searches one public instance may get in any 20 s (0: no limit; never for instances you do not run)", &c.Budget20s},
		{"budget-10m", "searches one public instance may get in any 10 min (0: no limit; never for instances you do not run)", &c.Budget10m},
		{"max-in-flight", "searches in flight to one public instance at once", &c.MaxInFlight},
		{"own-budget-20s", "searches one of your own instances (--instance) may get in any 20 s (0: no limit)", &c.OwnBudget20s},
		{"own-budget-10m", "searches one of your own instances (--instance) may get in any 10 min (0: no limit)", &c.OwnBudget10m},
		{"own-max-in-flight", "searches in flight to one of your own instances at once", &c.OwnMaxInFlight},
		{"own-pass-ip", "your own instances list searxgate's address in botdetection.ip_lists.pass_ip (limiter.toml): do not pace them below SearXNG's limiter", &c.OwnPassIP},
		{"queue", "searches that may wait for a free instance at once; past it a search is refused at once (503)", &c.Queue},
		{"fanout", "instances a search asks at once, merging their answers (1: one answers; a request may say fanout=N)", &c.Fanout},
		{"max-fanout", "the most instances one search may ask at once (fanout=N is capped to it)", &c.MaxFanout},
		{"fanout-grace", "how long a fan-out search waits for more answers after its first: a slower instance's answer is left out", &c.FanoutGrace},
		{"max-attempts", "upstream searches one client search may make", &c.MaxAttempts},
		{"strategy", "instance choice: ewma (fastest and cleanest first), primary_backup (your own instances first), auto (primary_backup when --instance is given)", &c.Strategy},
		{"refresh", "how often the directory is read again", &c.Refresh},
		{"admin-token", "bearer token that allows the instance API's writes (none: writes are refused)", &c.AdminToken},
		{"mcp-token", "bearer token that /mcp (MCP for agents) requires; without it /mcp is off unless searxgate is reached only on loopback", &c.MCPToken},
		{"api-key", "a key the search APIs (Tavily, Brave, Open WebUI at /tavily, /res/v1, /openwebui) take, one client each (repeatable; env: comma-separated); without keys they are off unless searxgate is reached only on loopback", &c.APIKeys},
		{"api-key-file", "a file of keys for the search APIs, one a line (# comments), read again on SIGHUP", &c.APIKeyFile},
		{"public-url", "the address people reach searxgate at, for OpenSearch links (default: the address each request used)", &c.PublicURL},
		{"json-shape", "the shape of JSON answers: classic (number_of_results, answers as strings with their link appended: what SearXNG's clients read) or current (as SearXNG since 2026-05: no number_of_results, answers as objects, typed ones whole)", &c.JSONShape},
		{"log-format", "text or json", &c.LogFormat},
		{"log-level", "debug, info, warn or error", &c.LogLevel},
		{"access-log", "log every request (without the query text)", &c.AccessLog},
		{"allow-link-token", "also search instances whose link-token bot check is on (they will soon block searxgate)", &c.LinkToken},
		{"shutdown-grace", "on SIGTERM, how long in-flight searches may finish", &c.Shutdown},
		{"flush", "how often learned state is written to the store", &c.Flush},
		{"client-rate", "searches that reach a public instance one client (an IPv4 address, an IPv6 /64) may make per minute, each instance of a fan-out counted (0: no limit); past it, 429", &c.ClientRate},
		{"client-burst", "searches one client address may make at once before --client-rate applies", &c.ClientBurst},
		{"max-conns", "client connections served at once", &c.MaxConns},
		{"trust-proxy", "a reverse proxy in front of searxgate (IP or CIDR, repeatable; env: comma-separated): its X-Forwarded-For (every line, from the right) names the client for --client-rate", &c.TrustProxy},

		{"max-conns-per-ip", "client connections one address may hold open at once (0: no limit); behind a reverse proxy this counts the proxy, so raise it above the proxy's connection pool or set 0", &c.MaxConnsPerIP},
		{"read-timeout", "time a client has to send a whole request (header and body) once it connects or, on a kept-alive connection, once its first byte arrives", &c.ReadTimeout},
		{"idle-timeout", "how long a kept-alive client connection may wait for its next request", &c.IdleTimeout},
		{"max-own-instances", "instances the instance API may add (those given with --instance do not count)", &c.MaxOwnInstances},

		{"redis", "Redis or Valkey shared by several searxgates (redis://host:6379/0, rediss://…, unix:///path.sock): one budget per instance, refusals, answers (none: nothing shared)", &c.Redis},
		{"egress", "the group of replicas that leave through one address: they share one budget per instance (with --redis)", &c.Egress},
		{"redis-timeout", "the longest a search waits on Redis before this replica decides alone (with --redis)", &c.RedisTimeout},
		{"secret", "the secret every replica sharing one Redis is given, at least 16 characters (required with --redis, or --secret-file): it keys the shared cache, signs image links and authenticates what the replicas tell each other; never stored in Redis", &c.Secret},
		{"secret-file", "a file holding --secret (its first line), for secrets kept out of the environment and the command line", &c.SecretFile},
	}
}

// register defines o on fs with the standard flag types (a list with
// listValue, which the flag package has none of); the current value of
// o's field is the flag's default.
func (o option) register(fs *flag.FlagSet, fromEnv *bool) {
	switch p := o.ptr.(type) {
	case *string:
		fs.StringVar(p, o.name, *p, o.usage)
	case *int:
		fs.IntVar(p, o.name, *p, o.usage)
	case *bool:
		fs.BoolVar(p, o.name, *p, o.usage)
	case *time.Duration:
		fs.DurationVar(p, o.name, *p, o.usage)
	case *[]string:
		fs.Var(listValue{p, fromEnv}, o.name, o.usage)
	default:
		panic("searxgate: option " + o.name + " has no flag type")
	}
}

// want says what a value of o's kind looks like, for an error.
func (o option) want() string {
	switch o.ptr.(type) {
	case *int:
		return "want a whole number"
	case *bool:
		return "want true or false"
	case *time.Duration:
		return "want a duration, e.g. 4s, 500ms or 1h"
	}
	return "not a valid value"
}

// parseConfig reads the environment (through getenv), then args. Errors
// name the flag or the variable at fault. Asked for help (-h, --help), it
// writes the help (printHelp) to help and returns flag.ErrHelp.
func parseConfig(args []string, getenv func(string) string, help io.Writer) (Config, error) {
	c := defaultConfig()
	fs := flag.NewFlagSet("searxgate serve", flag.ContinueOnError)
	// The flag package's own messages are replaced: errors are returned
	// (and printed once, by the caller), help is printHelp.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	opts := c.options()
	listFromEnv := map[string]*bool{}
	for _, o := range opts {
		listFromEnv[o.name] = new(bool)
		o.register(fs, listFromEnv[o.name])
	}
	// One pass over the environment; flags parsed after it win.
	for _, o := range opts {
		if v := getenv(envName(o.name)); v != "" {
			if err := fs.Set(o.name, v); err != nil {
				return c, fmt.Errorf("%s=%q (--%s): %s", envName(o.name), v, o.name, o.want())
			}
			*listFromEnv[o.name] = true // a list flag then replaces the list instead of adding to it
		}
	}
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		printHelp(help)
		return c, err
	} else if err != nil {
		return c, flagError(err, opts)
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q (flags start with --)", fs.Arg(0))
	}
	c.splitCredentials()
	c.httpsProxy = envEither(getenv, "HTTPS_PROXY", "https_proxy")
	c.httpProxy = envEither(getenv, "HTTP_PROXY", "http_proxy")
	c.noProxy = envEither(getenv, "NO_PROXY", "no_proxy")
	return c, c.Validate()
}

func envEither(getenv func(string) string, names ...string) string {
	for _, n := range names {
		if v := getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// proxyFunc is the guarded dialers' egress.ProxyFunc from the proxy
// variables; nil when none is set. A target on port 80 goes through
// HTTP_PROXY, any other through HTTPS_PROXY (the dialer knows the port,
// not the scheme); both are tunnels (CONNECT) to the address the guard
// checked.
func (c *Config) proxyFunc() egress.ProxyFunc {
	if c.httpsProxy == "" && c.httpProxy == "" {
		return nil
	}
	pf := (&httpproxy.Config{HTTPSProxy: c.httpsProxy, HTTPProxy: c.httpProxy, NoProxy: c.noProxy}).ProxyFunc()
	return func(host, port string) (*url.URL, error) {
		scheme := "https"
		if port == "80" {
			scheme = "http"
		}
		return pf(&url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port)})
	}
}

// rootCAs is the system's roots plus --ca-file's certificates; nil when
// --ca-file is not set.
func (c *Config) rootCAs() (*x509.CertPool, error) {
	pool, err := egress.Roots(c.CAFile)
	if err != nil {
		return nil, fmt.Errorf("--ca-file (SEARXGATE_CA_FILE): %w", err)
	}
	return pool, nil
}

// withoutUser is a proxy setting without its credentials, for the log.
func withoutUser(raw string) string {
	if raw == "" {
		return ""
	}
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "(unreadable)"
	}
	u.User = nil
	return u.String()
}

// validateProxy checks the proxy variables: an http:// proxy (a bare
// host:port is one), never echoing its credentials.
func (c *Config) validateProxy(fail func(error)) {
	bad := func(name, format string, args ...any) { fail(fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...))) }
	for _, v := range []struct{ name, val string }{{"HTTPS_PROXY", c.httpsProxy}, {"HTTP_PROXY", c.httpProxy}} {
		if v.val == "" {
			continue
		}
		raw := v.val
		if !strings.Contains(raw, "://") {
			raw = "http://" + raw
		}
		u, err := url.Parse(raw)
		switch {
		case err != nil:
			bad(v.name, "does not parse as a URL")
		case u.Scheme != "http":
			bad(v.name, "%s:// proxies are not supported; give an http:// proxy (searxgate tunnels TLS through it with CONNECT)", u.Scheme)
		case u.Hostname() == "":
			bad(v.name, "has no host")
		}
	}
}

// splitCredentials takes the user:password@ of --instance URLs out of
// them: the instance is known by its URL without them everywhere (pool,
// store, Redis, headers, /status, metrics, logs), and only the upstream
// client sends them, as basic auth, to that instance alone.
func (c *Config) splitCredentials() {
	for i, raw := range c.Instances {
		u, err := url.Parse(strings.TrimSpace(raw))
		if err != nil || u.User == nil {
			continue
		}
		user := u.User.Username()
		pw, _ := u.User.Password()
		u.User = nil
		c.Instances[i] = u.String()
		key, err := directory.Normalize(u.String())
		if err != nil || user == "" {
			continue // Validate or the operator says what is wrong, without the password
		}
		if c.instanceAuth == nil {
			c.instanceAuth = map[string]string{}
		}
		c.instanceAuth[key] = "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pw))
	}
}

// badFlagValue matches the flag package's message for a value its flag
// cannot take: `invalid value "4" for flag -deadline: parse error` (and
// `invalid boolean value ... for -name`).
var badFlagValue = regexp.MustCompile(`^invalid (?:boolean )?value (".*") for (?:flag )?-([a-z0-9-]+): `)

// flagError rewrites a flag parse error to name the flag with two dashes,
// its variable and what a value of its kind looks like.
func flagError(err error, opts []option) error {
	if m := badFlagValue.FindStringSubmatch(err.Error()); m != nil {
		for _, o := range opts {
			if o.name == m[2] {
				return fmt.Errorf("--%s (%s) %s: %s", o.name, envName(o.name), m[1], o.want())
			}
		}
	}
	msg := strings.Replace(err.Error(), " -", " --", 1) // "flag provided but not defined: --nope"
	return fmt.Errorf("%s (searxgate --help lists the flags)", msg)
}

// Validate checks every setting; its errors name the flag and the variable.
func (c *Config) Validate() error {
	var errs []error
	bad := func(flagName, format string, args ...any) {
		errs = append(errs, fmt.Errorf("--%s (%s): %s", flagName, envName(flagName), fmt.Sprintf(format, args...)))
	}
	c.validatePlaces(bad)
	c.validateBudgets(bad)
	c.validateSearch(bad)
	c.validateServing(bad)
	c.validateConnLimits(bad)
	c.validateShared(bad)
	c.validateProxy(func(err error) { errs = append(errs, err) })
	c.validateAPIKeys(bad)
	if c.Flush < 100*time.Millisecond {
		bad("flush", "%v is shorter than 100ms", c.Flush)
	}
	return errors.Join(errs...)
}

// validatePlaces checks where searxgate listens, keeps its data and finds
// its instances.
func (c *Config) validatePlaces(bad func(flagName, format string, args ...any)) {
	if _, port, err := net.SplitHostPort(c.Listen); err != nil {
		bad("listen", "%q is not host:port, e.g. 127.0.0.1:8888", c.Listen)
	} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		bad("listen", "%q has the port %q: want 0 (any free one) to 65535", c.Listen, port)
	}
	if c.Data == "" {
		bad("data", "must not be empty")
	}
	if c.Directory == "" {
		bad("directory", "must not be empty")
	}
	// A list on a private address would be refused at start, and searxgate
	// would fall back to the public instances of its snapshot: say so now.
	if lower := strings.ToLower(c.Directory); strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") {
		if err := (egress.Guard{AllowPrivate: c.AllowPrivate}).CheckLiteral(c.Directory); errors.Is(err, egress.ErrPrivateAddress) {
			bad("directory", "%q is not on a public address: add --allow-private (SEARXGATE_ALLOW_PRIVATE=true) to read a list on this machine or a private network", c.Directory)
		}
	}
	for _, in := range c.Instances {
		if !strings.HasPrefix(in, "http://") && !strings.HasPrefix(in, "https://") {
			bad("instance", "%q is not an http(s) URL", in)
		}
	}
}

// noCache reports whether --cache-ttl 0 asked for no cache of any kind:
// no answer, autocompletion or read page kept, in memory or on disk.
func (c *Config) noCache() bool { return c.CacheTTL == 0 }

// validateBudgets checks the search deadline, the cache's lifetime and the
// politeness budgets and in-flight limits.
func (c *Config) validateBudgets(bad func(flagName, format string, args ...any)) {
	if c.Deadline < 200*time.Millisecond || c.Deadline > 60*time.Second {
		bad("deadline", "%v is outside 200ms to 60s", c.Deadline)
	}
	if c.CacheTTL < 0 {
		bad("cache-ttl", "must not be negative")
	}
	// 0 lifts a window (for load tests on one's own instances); the upper
	// bound is what the budget can count.
	if c.Budget20s < 0 || c.Budget20s > proxy.MaxWindow {
		bad("budget-20s", "%d is outside 0 (no limit) to %d", c.Budget20s, proxy.MaxWindow)
	}
	if c.Budget10m < 0 || c.Budget10m > proxy.MaxWindow {
		bad("budget-10m", "%d is outside 0 (no limit) to %d", c.Budget10m, proxy.MaxWindow)
	}
	if c.MaxInFlight < 1 {
		bad("max-in-flight", "must be at least 1")
	}
	if c.OwnBudget20s < 0 || c.OwnBudget20s > proxy.MaxWindow {
		bad("own-budget-20s", "%d is outside 0 (no limit) to %d", c.OwnBudget20s, proxy.MaxWindow)
	}
	if c.OwnBudget10m < 0 || c.OwnBudget10m > proxy.MaxWindow {
		bad("own-budget-10m", "%d is outside 0 (no limit) to %d", c.OwnBudget10m, proxy.MaxWindow)
	}
	if c.OwnMaxInFlight < 1 || c.OwnMaxInFlight > 10_000 {
		bad("own-max-in-flight", "%d is outside 1 to 10000", c.OwnMaxInFlight)
	}
}

// validateSearch checks how a search is spread over the instances and how
// the list is refreshed.
func (c *Config) validateSearch(bad func(flagName, format string, args ...any)) {
	if c.MaxFanout < 1 || c.MaxFanout > 10 {
		bad("max-fanout", "%d is outside 1 to 10", c.MaxFanout)
	}
	if c.FanoutGrace <= 0 || c.FanoutGrace > time.Minute {
		bad("fanout-grace", "%s is outside 1ms to 1m", c.FanoutGrace)
	}
	if c.Fanout < 1 || c.Fanout > c.MaxFanout {
		bad("fanout", "%d is outside 1 to --max-fanout (%d)", c.Fanout, c.MaxFanout)
	}
	if c.Queue < 1 || c.Queue > 1_000_000 {
		bad("queue", "%d is outside 1 to 1000000", c.Queue)
	}
	if c.MaxAttempts < 1 || c.MaxAttempts > 10 {
		bad("max-attempts", "%d is outside 1 to 10", c.MaxAttempts)
	}
	switch c.Strategy {
	case "auto", "ewma", "primary_backup":
	default:
		bad("strategy", "%q is not auto, ewma or primary_backup", c.Strategy)
	}
	if c.Refresh < time.Minute {
		bad("refresh", "%v is shorter than 1m", c.Refresh)
	}
}

// validateServing checks the public face: its URL, the log, shutdown and
// the per-client limits.
func (c *Config) validateServing(bad func(flagName, format string, args ...any)) {
	if c.PublicURL != "" && !strings.HasPrefix(c.PublicURL, "http://") && !strings.HasPrefix(c.PublicURL, "https://") {
		bad("public-url", "%q is not an http(s) URL", c.PublicURL)
	}
	switch c.LogFormat {
	case "text", "json":
	default:
		bad("log-format", "%q is not text or json", c.LogFormat)
	}
	if _, ok := results.ParseShape(c.JSONShape); !ok {
		bad("json-shape", "%q is not %s", c.JSONShape, strings.Join(results.ShapeNames, " or "))
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		bad("log-level", "%q is not debug, info, warn or error", c.LogLevel)
	}
	if c.Shutdown < 0 {
		bad("shutdown-grace", "must not be negative")
	}
	if c.ClientRate < 0 {
		bad("client-rate", "must not be negative")
	}
	if c.ClientBurst < 1 {
		bad("client-burst", "must be at least 1")
	}
	if c.MaxConns < 1 {
		bad("max-conns", "must be at least 1")
	}
	// One PDF of the largest size read must fit; past 256 MiB the queue
	// alone nears the shipped unit's MemoryMax.
	if c.ReaderQueueMiB < 5 || c.ReaderQueueMiB > 256 {
		bad("reader-queue-mib", "%d is outside 5 (one PDF of the largest size read) to 256", c.ReaderQueueMiB)
	}
	if _, err := client.ParsePrefixes(c.TrustProxy); err != nil {
		bad("trust-proxy", "%v", err)
	}
}

// validateConnLimits checks the limits on client connections and on the
// instance API.
func (c *Config) validateConnLimits(bad func(flagName, format string, args ...any)) {
	if c.MaxConnsPerIP < 0 {
		bad("max-conns-per-ip", "must not be negative (0: no limit)")
	}
	// Long enough for a slow phone to send a 64 KiB form, short enough that
	// a client dribbling its header cannot hold a connection for minutes.
	if c.ReadTimeout < time.Second || c.ReadTimeout > 2*time.Minute {
		bad("read-timeout", "%v is outside 1s to 2m", c.ReadTimeout)
	}
	if c.IdleTimeout < time.Second || c.IdleTimeout > 10*time.Minute {
		bad("idle-timeout", "%v is outside 1s to 10m", c.IdleTimeout)
	}
	if c.MaxOwnInstances < 1 || c.MaxOwnInstances > 100_000 {
		bad("max-own-instances", "%d is outside 1 to 100000", c.MaxOwnInstances)
	}
}

// validateShared checks the settings of replicas sharing through Redis.
func (c *Config) validateShared(bad func(flagName, format string, args ...any)) {
	if c.Redis != "" && !strings.HasPrefix(c.Redis, "redis://") && !strings.HasPrefix(c.Redis, "rediss://") && !strings.HasPrefix(c.Redis, "unix://") {
		bad("redis", "%q is not a redis://, rediss:// or unix:// URL", redactURL(c.Redis))
	}
	if c.Egress == "" || len(c.Egress) > 64 || strings.ContainsFunc(c.Egress, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) {
		bad("egress", "%q is not 1 to 64 letters, digits, '-', '_' or '.'", c.Egress)
	}
	if c.RedisTimeout < time.Millisecond || c.RedisTimeout > time.Second {
		bad("redis-timeout", "%v is outside 1ms to 1s", c.RedisTimeout)
	}
	switch {
	case c.Secret != "" && c.SecretFile != "":
		bad("secret", "give either --secret or --secret-file (SEARXGATE_SECRET_FILE), not both")
	case c.Redis != "" && c.Secret == "" && c.SecretFile == "":
		bad("secret", "is required with --redis: give every replica the same secret (or --secret-file); `openssl rand -hex 32` makes one")
	case c.Secret != "" && len(c.Secret) < minSecret:
		bad("secret", "is %d characters, want at least %d", len(c.Secret), minSecret)
	}
}

// minSecret is the shortest --secret taken.
const minSecret = 16

// readSecret returns the operator's secret: --secret, or the first line
// of --secret-file; nil when neither is given. Errors name the flag,
// never the secret.
func (c *Config) readSecret() ([]byte, error) {
	if c.SecretFile == "" {
		if c.Secret == "" {
			return nil, nil
		}
		return []byte(c.Secret), nil
	}
	b, err := os.ReadFile(c.SecretFile)
	if err != nil {
		return nil, fmt.Errorf("--secret-file (SEARXGATE_SECRET_FILE): %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	line = strings.TrimSpace(line)
	if len(line) < minSecret {
		return nil, fmt.Errorf("--secret-file (SEARXGATE_SECRET_FILE): the secret in %s is %d characters, want at least %d", c.SecretFile, len(line), minSecret)
	}
	return []byte(line), nil
}

// redactURL hides a URL's password, for error messages.
func redactURL(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		if len(u) > 16 {
			return u[:16] + "…"
		}
		return u
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		rest = "…@" + rest[at+1:]
	}
	return scheme + "://" + rest
}

// otherVars are the SEARXGATE_* variables searxgate reads besides serve's
// settings (SEARXGATE_GATEWAY: the mcp command's).
var otherVars = []string{"SEARXGATE_GATEWAY"}

// unknownVars returns a warning for each SEARXGATE_* variable of environ
// (NAME=value lines) that getenv also sees set and that no setting reads,
// naming the nearest known variable: a mistyped name is otherwise
// silently ignored.
func unknownVars(environ []string, getenv func(string) string) []string {
	known := otherVars
	for _, o := range (&Config{}).options() {
		known = append(known, envName(o.name))
	}
	var warnings []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "SEARXGATE_") || getenv(name) == "" || slices.Contains(known, name) {
			continue
		}
		best, dist := "", -1
		for _, k := range known {
			if d := editDistance(name, k); dist < 0 || d < dist {
				best, dist = k, d
			}
		}
		if dist <= max(2, (len(name)-len("SEARXGATE_"))/3) {
			warnings = append(warnings, fmt.Sprintf("%s is no setting of searxgate and is ignored: did you mean %s?", name, best))
		} else {
			warnings = append(warnings, fmt.Sprintf("%s is no setting of searxgate and is ignored (searxgate --help lists them)", name))
		}
	}
	slices.Sort(warnings)
	return warnings
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
