package directory

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/searxgate/searxgate/egress"
)

// Sentinel errors of the package; callers test them with errors.Is.
var (
	// ErrMalformed: the directory file is not JSON, or has no "instances"
	// object.
	ErrMalformed = errors.New("directory: malformed instance list")
	// ErrNoInstances: the file parsed but no instance passed the filter.
	ErrNoInstances = errors.New("directory: no usable instance")
	// ErrScheme: a URL whose scheme is not http or https.
	ErrScheme = errors.New("directory: scheme is not http or https")
	// ErrBadURL: a URL that cannot name an instance (no host, user info,
	// unparsable).
	ErrBadURL = errors.New("directory: not an instance URL")
)

// Default thresholds of the filter, in percent.
const (
	// DefaultMinSuccess is the least timing.search.success_percentage an
	// instance needs: searx.space probes a search several times a day, and
	// an instance failing one in five of them costs more retries than it is
	// worth.
	DefaultMinSuccess = 80.0
	// DefaultMinUptimeDay is the least uptime.uptimeDay, when searx.space
	// reports one.
	DefaultMinUptimeDay = 90.0
)

// MaxPrior caps a prior, so that a wild timing cannot overflow a duration
// or push an instance out of reach for good: the pool learns the real
// latency from the first searches anyway.
const MaxPrior = 60 * time.Second

// minPriorSuccess is the success percentage below which the prior stops
// growing (a tenfold raise at most).
const minPriorSuccess = 10.0

// Entry is one usable instance.
type Entry struct {
	// URL is normalised: lower-case scheme and host, default port dropped,
	// exactly one trailing slash.
	URL string
	// Prior is the expected latency of a search before the pool has measured
	// one: timing.search.all.median (else .value), in seconds in the file,
	// divided by the search success rate (see priorOf). 0 means no
	// measurement: the pool uses its default prior.
	Prior time.Duration
	// Version is the SearXNG version searx.space saw ("" when unknown).
	Version string
	// SuccessPct is timing.search.success_percentage, -1 when unknown.
	SuccessPct float64
	// UptimeDay is uptime.uptimeDay, -1 when unknown.
	UptimeDay float64
	// Failing are the engines whose test search by searx.space never
	// succeeded there: "google" when timing.search_go.success_percentage
	// is 0, "wikipedia" when timing.search_wp's is (the only engine-level
	// figures instances.json holds). The pool takes them as a prior of
	// engines that do not answer there (pool.Prior.Failing).
	Failing []string
	// Alternatives are the entry's other http(s) URLs on the normal network
	// (alternativeUrls), normalised and sorted. Kept instances linked by
	// alternativeUrls are one instance: they collapse into one entry (a
	// "main" one first, then the first by URL) whose Alternatives hold the
	// others' URLs and alternatives.
	Alternatives []string
}

// Filter says which instances Parse keeps. Thresholds are used as given (0
// means no threshold); DefaultFilter has the documented defaults.
type Filter struct {
	// MinSuccess is the least timing.search.success_percentage (default 80,
	// DefaultMinSuccess). A measured instance without one is dropped when
	// MinSuccess > 0.
	MinSuccess float64
	// MinUptimeDay is the least uptime.uptimeDay (default 90,
	// DefaultMinUptimeDay); an instance without an uptime passes.
	MinUptimeDay float64
	// Allow, if non-empty, keeps only entries matching one of its patterns
	// (see MatchAny).
	Allow []string
	// Deny drops entries matching one of its patterns (see MatchAny).
	Deny []string
}

// DefaultFilter returns the filter with the documented thresholds and no
// allow or deny list.
func DefaultFilter() Filter {
	return Filter{MinSuccess: DefaultMinSuccess, MinUptimeDay: DefaultMinUptimeDay}
}

// Reasons an instance is dropped, as counted by parse.
const (
	reasonURL        = "url"
	reasonNetwork    = "network"
	reasonError      = "error"
	reasonHTTPStatus = "http_status"
	reasonNoVersion  = "no_version"
	reasonLowSuccess = "low_success"
	reasonLowUptime  = "low_uptime"
	reasonDenied     = "denied"
	reasonNotAllowed = "not_allowed"
	reasonDuplicate  = "duplicate"
	reasonCollapsed  = "collapsed"
	reasonNotObject  = "not_an_object"
)

// report says what parse did with each key of the file.
type report struct {
	total   int
	kept    int
	dropped map[string]int    // reason → count
	why     map[string]string // raw key → reason, for the keys dropped
}

func (r *report) drop(key, reason string) {
	r.dropped[reason]++
	r.why[key] = reason
}

// String summarises the report for a log line.
func (r *report) String() string {
	reasons := make([]string, 0, len(r.dropped))
	for k := range r.dropped {
		reasons = append(reasons, k)
	}
	slices.Sort(reasons)
	var b strings.Builder
	fmt.Fprintf(&b, "kept %d of %d", r.kept, r.total)
	for _, k := range reasons {
		fmt.Fprintf(&b, ", %s %d", k, r.dropped[k])
	}
	return b.String()
}

// Parse reads a searx.space instances file and returns the instances f
// keeps, sorted by URL. An instance is kept when its network_type is
// "normal" (and its host is not .onion or .i2p), it has no "error",
// uptime.uptimeDay (when present) is ≥ f.MinUptimeDay, and, if searx.space
// probed it (an "http" or "timing" object): http.status_code is 200,
// version is set and timing.search.success_percentage ≥ f.MinSuccess;
// then f.Allow and f.Deny apply. A
// timing.search.error alone does not drop an instance: it holds the last
// error even when most probes succeeded.
//
// Errors: ErrMalformed when data is not a searx.space file, ErrNoInstances
// when nothing is kept.
func Parse(data []byte, f Filter) ([]Entry, error) {
	entries, _, err := parse(data, f)
	return entries, err
}

// candidate is an instance that passed the filter, before collapsing.
type candidate struct {
	entry Entry
	raw   string // the key in the file
	main  bool
	alts  []string // normalised alternatives on the normal network
}

func parse(data []byte, f Filter) ([]Entry, *report, error) {
	rep := &report{dropped: map[string]int{}, why: map[string]string{}}
	if !gjson.ValidBytes(data) {
		return nil, rep, fmt.Errorf("%w: not valid JSON", ErrMalformed)
	}
	instances := gjson.GetBytes(data, "instances")
	if !instances.IsObject() {
		return nil, rep, fmt.Errorf("%w: no \"instances\" object", ErrMalformed)
	}
	entries := filterEntries(collapse(readAll(instances, f, rep), rep), f, rep)
	rep.kept = len(entries)
	if len(entries) == 0 {
		return nil, rep, fmt.Errorf("%w: %s", ErrNoInstances, rep)
	}
	return entries, rep, nil
}

// readAll reads every instance the filter keeps, one candidate per URL
// (of two keys for one URL, the better, whatever their order).
func readAll(instances gjson.Result, f Filter, rep *report) []*candidate {
	byURL := map[string]*candidate{}
	var order []*candidate
	instances.ForEach(func(key, value gjson.Result) bool {
		rep.total++
		raw := key.String()
		c, reason := readInstance(raw, value, f)
		if reason != "" {
			rep.drop(raw, reason)
			return true
		}
		if prev, dup := byURL[c.entry.URL]; dup {
			if better(c, prev) {
				rep.drop(prev.raw, reasonDuplicate)
				*prev = *c
			} else {
				rep.drop(raw, reasonDuplicate)
			}
			return true
		}
		byURL[c.entry.URL] = c
		order = append(order, c)
		return true
	})
	return order
}

// collapse makes one entry of the candidates linked by alternativeUrls
// (either way, and through each other): the first of them with main
// entries first, then by URL; the other URLs become its alternatives.
func collapse(order []*candidate, rep *report) []Entry {
	slices.SortFunc(order, func(a, b *candidate) int {
		if a.main != b.main {
			if a.main {
				return -1
			}
			return 1
		}
		return strings.Compare(a.entry.URL, b.entry.URL)
	})
	find := linkAlternatives(order)
	alts := map[int][]string{}
	for i, c := range order {
		root := find(i)
		alts[root] = append(alts[root], c.alts...)
		if root != i {
			alts[root] = append(alts[root], c.entry.URL)
			rep.drop(c.raw, reasonCollapsed)
		}
	}
	entries := make([]Entry, 0, len(order))
	for i, c := range order {
		if find(i) != i {
			continue
		}
		a := slices.DeleteFunc(alts[i], func(u string) bool { return u == c.entry.URL })
		slices.Sort(a)
		if a = slices.Compact(a); len(a) > 0 {
			c.entry.Alternatives = slices.Clip(a)
		}
		entries = append(entries, c.entry)
	}
	return entries
}

// linkAlternatives unites candidates that name each other as alternatives
// (union-find) and returns the function that gives a candidate's root:
// the smallest index of its group.
func linkAlternatives(order []*candidate) func(int) int {
	index := make(map[string]int, len(order))
	for i, c := range order {
		index[c.entry.URL] = i
	}
	parent := make([]int, len(order))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for i, c := range order {
		for _, alt := range c.alts {
			if j, ok := index[alt]; ok {
				if ri, rj := find(i), find(j); ri != rj {
					parent[max(ri, rj)] = min(ri, rj)
				}
			}
		}
	}
	return find
}

// filterEntries applies allow and deny to the collapsed entries, on any of
// their URLs, and sorts what is kept by URL.
func filterEntries(entries []Entry, f Filter, rep *report) []Entry {
	kept := entries[:0]
	for _, e := range entries {
		switch {
		case len(f.Deny) > 0 && entryMatches(f.Deny, e):
			rep.drop(e.URL, reasonDenied)
		case len(f.Allow) > 0 && !entryMatches(f.Allow, e):
			rep.drop(e.URL, reasonNotAllowed)
		default:
			kept = append(kept, e)
		}
	}
	slices.SortFunc(kept, func(a, b Entry) int { return strings.Compare(a.URL, b.URL) })
	return kept
}

// better orders two candidates for the same URL: main first, then the
// higher success rate, then a measured prior over none and the lower prior,
// then the smaller key, so that the choice does not depend on key order.
func better(a, b *candidate) bool {
	if a.main != b.main {
		return a.main
	}
	if a.entry.SuccessPct != b.entry.SuccessPct {
		return a.entry.SuccessPct > b.entry.SuccessPct
	}
	if a.entry.Prior != b.entry.Prior {
		if a.entry.Prior == 0 || b.entry.Prior == 0 {
			return a.entry.Prior != 0
		}
		return a.entry.Prior < b.entry.Prior
	}
	return a.raw < b.raw
}

func entryMatches(patterns []string, e Entry) bool {
	if MatchAny(patterns, e.URL) {
		return true
	}
	for _, alt := range e.Alternatives {
		if MatchAny(patterns, alt) {
			return true
		}
	}
	return false
}

// readInstance checks one instance of the file; it returns the candidate,
// or the reason it is dropped.
func readInstance(rawKey string, v gjson.Result, f Filter) (*candidate, string) {
	if !v.IsObject() {
		return nil, reasonNotObject
	}
	u, err := Normalize(rawKey)
	if err != nil {
		return nil, reasonURL
	}
	fs := readFields(v)
	if fs.network.String() != "normal" || !normalHost(u) {
		return nil, reasonNetwork
	}
	if present(fs.err) {
		return nil, reasonError
	}
	c := &candidate{
		entry: Entry{URL: u, SuccessPct: -1, UptimeDay: -1},
		raw:   rawKey,
		// searx.space marks alternative URLs listed as instances with
		// main=false; an entry without the field counts as main.
		main: fs.main.Type != gjson.False,
	}
	if fs.version.Type == gjson.String {
		c.entry.Version = strings.Clone(fs.version.Str)
	}
	search := fs.timing.Get("search")
	c.entry.SuccessPct = percent(search.Get("success_percentage"))
	c.entry.UptimeDay = percent(fs.uptime.Get("uptimeDay"))
	if fs.http.Exists() || fs.timing.Exists() { // measured by searx.space
		if reason := judgeMeasured(c, fs.http, f); reason != "" {
			return nil, reason
		}
		c.entry.Prior = priorOf(search, c.entry.SuccessPct)
		c.entry.Failing = failingEngines(fs.timing)
	}
	if c.entry.UptimeDay >= 0 && c.entry.UptimeDay < f.MinUptimeDay {
		return nil, reasonLowUptime
	}
	c.alts = alternativesOf(fs.alternatives, u)
	return c, ""
}

// instanceFields are the fields of one searx.space entry that parse reads.
type instanceFields struct {
	network, http, version, err, timing, uptime, alternatives, main gjson.Result
}

// readFields reads them in one pass over the entry: real entries carry
// large "html" and "tls" objects that repeated path lookups would rescan.
func readFields(v gjson.Result) instanceFields {
	var fs instanceFields
	v.ForEach(func(k, val gjson.Result) bool {
		switch k.Str {
		case "network_type":
			fs.network = val
		case "http":
			fs.http = val
		case "version":
			fs.version = val
		case "error":
			fs.err = val
		case "timing":
			fs.timing = val
		case "uptime":
			fs.uptime = val
		case "alternativeUrls":
			fs.alternatives = val
		case "main":
			fs.main = val
		}
		return true
	})
	return fs
}

// judgeMeasured says why a measured entry is left out ("" = kept): not
// answering 200, no version, or too low a success rate.
func judgeMeasured(c *candidate, httpObj gjson.Result, f Filter) string {
	if st := httpObj.Get("status_code"); st.Type != gjson.Number || st.Num != 200 {
		return reasonHTTPStatus
	}
	if c.entry.Version == "" {
		return reasonNoVersion
	}
	if c.entry.SuccessPct < 0 {
		if f.MinSuccess > 0 {
			return reasonLowSuccess
		}
	} else if c.entry.SuccessPct < f.MinSuccess {
		return reasonLowSuccess
	}
	return ""
}

// alternativesOf reads an entry's alternativeUrls: normalised, public
// network ones other than u, sorted, without duplicates.
func alternativesOf(alternatives gjson.Result, u string) []string {
	if !alternatives.IsObject() {
		return nil
	}
	var alts []string
	alternatives.ForEach(func(k, _ gjson.Result) bool {
		alt, err := Normalize(k.String())
		if err == nil && alt != u && normalHost(alt) {
			alts = append(alts, alt)
		}
		return true
	})
	slices.Sort(alts)
	return slices.Compact(alts)
}

// priorOf turns searx.space's search timing into a prior.
//
// The base is timing.search.all.median (else .value), the wall time of a
// whole search as searx.space saw it, in seconds. A probe that fails sends
// the gateway on to another instance, so with a success rate s the expected
// time spent on an instance before a good answer is about base / s (the
// mean of a geometric number of tries): 100 % keeps the base, 80 % raises it
// by a quarter, 50 % doubles it. s is floored at 10 % (at most a tenfold
// raise) and an unknown rate leaves the base as it is; the result is capped
// at MaxPrior.
func priorOf(search gjson.Result, successPct float64) time.Duration {
	all := search.Get("all")
	base := all.Get("median")
	if base.Type != gjson.Number {
		base = all.Get("value")
	}
	if base.Type != gjson.Number || !(base.Num > 0) || math.IsInf(base.Num, 0) {
		return 0
	}
	secs := base.Num
	if successPct >= 0 {
		s := min(max(successPct, minPriorSuccess), 100) / 100
		secs /= s
	}
	if secs >= MaxPrior.Seconds() {
		return MaxPrior
	}
	d := time.Duration(secs * float64(time.Second))
	if d <= 0 {
		return time.Nanosecond // measured, and faster than a duration can say
	}
	return d
}

// engineChecks are searx.space's test searches of one engine, in
// timing: the key and the engine it names.
var engineChecks = [...]struct{ key, engine string }{{"search_go", "google"}, {"search_wp", "wikipedia"}}

// failingEngines are the engines whose check in timing never succeeded.
func failingEngines(timing gjson.Result) []string {
	var out []string
	for _, c := range engineChecks {
		if percent(timing.Get(c.key).Get("success_percentage")) == 0 {
			out = append(out, c.engine)
		}
	}
	return out
}

// percent reads a percentage; anything but a number from 0 to 100 is
// unknown (-1).
func percent(r gjson.Result) float64 {
	if r.Type != gjson.Number || !(r.Num >= 0 && r.Num <= 100) {
		return -1
	}
	return r.Num
}

// present reports whether a JSON field holds something: not absent, null,
// false, or an empty string.
func present(r gjson.Result) bool {
	switch r.Type {
	case gjson.Null, gjson.False:
		return false
	case gjson.String:
		return r.Str != ""
	}
	return r.Exists()
}

// normalHost reports whether the host of a normalised URL is on the normal
// network (not a Tor or I2P name).
func normalHost(u string) bool {
	h := hostOf(u)
	return !strings.HasSuffix(h, ".onion") && !strings.HasSuffix(h, ".i2p")
}

// hostOf returns the host (without port or brackets) of a normalised URL.
func hostOf(u string) string {
	_, rest, ok := strings.Cut(u, "://")
	if !ok {
		return ""
	}
	hostport, _, _ := strings.Cut(rest, "/")
	if strings.HasPrefix(hostport, "[") {
		if i := strings.IndexByte(hostport, ']'); i > 0 {
			return hostport[1:i]
		}
	}
	h, _, _ := strings.Cut(hostport, ":")
	return h
}

// MaxURLLength is the longest instance URL accepted, as given and once
// normalised: the address guard's (egress.MaxURLLength). Real instance URLs
// are a few dozen bytes; the cap keeps a URL within what the store can use
// as a key and what a log line should carry.
const MaxURLLength = egress.MaxURLLength

// Normalize returns the canonical form of an instance URL: lower-case
// scheme and host, no trailing dot on the host, the port as a plain number
// and dropped when it is the scheme's default, no query or fragment, and
// exactly one trailing slash on the path. Only http and https are accepted
// (ErrScheme); a URL longer than MaxURLLength, without a host, with user
// info or with a port outside 1 to 65535 is refused (ErrBadURL).
func Normalize(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if len(raw) > MaxURLLength {
		return "", fmt.Errorf("%w: longer than %d bytes", ErrBadURL, MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrBadURL, err)
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", fmt.Errorf("%w: %q", ErrScheme, u.Scheme)
	}
	if u.User != nil {
		// Not echoed: it may hold a password.
		return "", fmt.Errorf("%w: user info (user:password@) is not allowed", ErrBadURL)
	}
	if u.Opaque != "" {
		return "", fmt.Errorf("%w: %q", ErrBadURL, raw)
	}
	host, err := canonicalHost(u.Hostname())
	if err != nil {
		return "", fmt.Errorf("%w: %v in %q", ErrBadURL, err, raw)
	}
	port, err := canonicalPort(u.Port())
	if err != nil {
		return "", fmt.Errorf("%w: %v in %q", ErrBadURL, err, raw)
	}
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if port != "" {
		host += ":" + port
	}
	path := strings.TrimRight(u.EscapedPath(), "/") + "/"
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	out := scheme + "://" + host + path
	if len(out) > MaxURLLength {
		return "", fmt.Errorf("%w: longer than %d bytes once normalised", ErrBadURL, MaxURLLength)
	}
	return out, nil
}

// canonicalPort checks a URL's port ("" when it has none) and returns it
// without leading zeros: a TCP port is 1 to 65535.
func canonicalPort(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		if len(p) > 8 {
			p = p[:8] + "…"
		}
		return "", fmt.Errorf("port %q is outside 1 to 65535", p)
	}
	return strconv.Itoa(n), nil
}

// canonicalHost lower-cases a host and drops one trailing dot; an IPv6
// literal takes its canonical form in brackets. Names are limited to
// letters, digits, "-", "_" and non-ASCII (IDN) letters; an IPv6 zone is
// refused.
func canonicalHost(h string) (string, error) {
	if strings.Contains(h, ":") {
		a, err := netip.ParseAddr(h)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return "", fmt.Errorf("bad IPv6 host %q", h)
		}
		return "[" + a.String() + "]", nil
	}
	if !utf8.ValidString(h) {
		return "", fmt.Errorf("host is not UTF-8")
	}
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "" || strings.HasPrefix(h, ".") || strings.HasSuffix(h, ".") || strings.Contains(h, "..") {
		return "", fmt.Errorf("bad host %q", h)
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c >= utf8.RuneSelf) {
			return "", fmt.Errorf("bad character %q in host", c)
		}
	}
	return h, nil
}

// MatchAny reports whether url matches one of patterns. A pattern with a
// scheme ("https://search.example.org/") matches that URL, both normalised;
// any other pattern is a host suffix: "example.org" matches example.org and
// sub.example.org, not badexample.org. Case and a leading or trailing dot
// do not matter. Empty patterns match nothing.
func MatchAny(patterns []string, url string) bool {
	norm, err := Normalize(url)
	if err != nil {
		return false
	}
	host := hostOf(norm)
	for _, p := range patterns {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if strings.Contains(p, "://") {
			if pn, err := Normalize(p); err == nil && pn == norm {
				return true
			}
			continue
		}
		suffix := strings.Trim(strings.ToLower(p), ".")
		if suffix == "" {
			continue
		}
		if host == suffix || strings.HasSuffix(host, "."+suffix) {
			return true
		}
	}
	return false
}
