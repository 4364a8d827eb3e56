package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/directory"
	"github.com/searxgate/searxgate/egress"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy"
)

// ownTermsTimeout bounds the /config reads of the operator's own instances
// before serving; publicTermsTimeout those of the list's at start.
const (
	ownTermsTimeout    = 3 * time.Second
	publicTermsTimeout = 2 * time.Minute
)

// readOwnTerms reads the /config of the operator's own instances before
// searxgate serves, within ownTermsTimeout; a failure is logged at WARN and
// searching them goes on.
func (a *App) readOwnTerms(ctx context.Context) {
	own := a.instances(pool.Own)
	if len(own) == 0 {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, ownTermsTimeout)
	a.proxy.Instances().ReadTermsNow(rctx, own)
	cancel()
	for _, u := range own {
		if err := a.proxy.Instances().Caps(u).ConfigError(); err != nil {
			why := ""
			if !errors.Is(err, proxy.ErrTermsUnread) {
				why = err.Error()
			}
			if why == "" {
				why = "no answer within " + ownTermsTimeout.String()
			}
			a.log.Warn("cannot read your instance's /config: searching it anyway, its terms unknown", "instance", u, "err", why)
		}
	}
}

// instances lists the enabled instances of one tier in the pool.
func (a *App) instances(tier pool.Tier) []string {
	var out []string
	for _, st := range a.pool.Snapshot() {
		if st.Tier == tier && !st.Disabled {
			out = append(out, st.URL)
		}
	}
	return out
}

// servingWhat says, for the start-up line, which instances searxgate
// searches: its own first, then how many of the list's and from where.
func (a *App) servingWhat() string {
	var parts []string
	if own := a.instances(pool.Own); len(own) > 0 {
		parts = append(parts, fmt.Sprintf("%d of your own first (%s)", len(own), strings.Join(own, ", ")))
	}
	src := strings.TrimSpace(a.cfg.Directory)
	switch public := len(a.instances(pool.Public)); {
	case strings.EqualFold(src, directory.None):
		parts = append(parts, "no public ones (--directory none)")
	default:
		parts = append(parts, fmt.Sprintf("%d public from %s", public, src))
	}
	return strings.Join(parts, ", then ")
}

// contactMissing is the start-up warning when public instances are in
// the pool and no --contact says how their operators can reach whoever
// runs this searxgate; "" when a contact is set or no public instance is.
func (a *App) contactMissing() string {
	if strings.TrimSpace(a.cfg.Contact) != "" {
		return ""
	}
	n := len(a.instances(pool.Public))
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("no --contact (SEARXGATE_CONTACT) is set: the operators of the %d public instances in the pool cannot reach you when searxgate troubles them; set a URL or an e-mail address", n)
}

// startupCheck reads the terms of the list's instances (as they are about
// to be searched anyway) and then judges whether any instance can be
// searched at all; when none can, it says why in one ERROR line and keeps
// the text for the status page (Problem). It closes a.checked when done.
func (a *App) startupCheck(ctx context.Context) {
	defer close(a.checked)
	if public := a.instances(pool.Public); len(public) > 0 {
		rctx, cancel := context.WithTimeout(ctx, publicTermsTimeout)
		a.proxy.Instances().ReadTermsNow(rctx, public)
		cancel()
	}
	if ctx.Err() != nil {
		return
	}
	if why := a.judge(); why != "" {
		a.problem.Store(&why)
		a.log.Error("no instance can be searched: " + why)
	}
}

// Problem is why no instance can be searched, as the start-up check found
// it; "" once any instance is usable (an own instance added, a list
// instance that answered its /config).
func (a *App) Problem() string {
	p := a.problem.Load()
	if p == nil {
		return ""
	}
	if a.usable(a.clock.Now()) {
		a.problem.CompareAndSwap(p, nil)
		return ""
	}
	return *p
}

// usable reports whether some instance is searchable now.
func (a *App) usable(now time.Time) bool {
	for _, st := range a.pool.Snapshot() {
		if a.searchable(st, now) {
			return true
		}
	}
	return false
}

// searchable reports whether a search could go now to the instance st
// describes, by the search path's own rule (instance.Registry.Usable, which /status
// and /metrics show), and, for a list instance, whether its /config was
// read: the start-up check's doubt is whether the list's instances can be
// reached at all.
func (a *App) searchable(st pool.Stats, now time.Time) bool {
	if ok, _ := a.proxy.Instances().Usable(st, now); !ok {
		return false
	}
	return st.Tier == pool.Own || a.proxy.Instances().Caps(st.URL).ConfigOK
}

// Why an instance cannot be searched, as the start-up check counts it.
const (
	causeNone      = ""
	causePrivate   = "private"
	causeDNS       = "dns"
	causeRefused   = "refused"
	causeTimeout   = "timeout"
	causeTLS       = "tls"
	causeReset     = "reset"
	causeStatus    = "status"
	causeTransport = "transport"
	causeLinkToken = "link_token"
	causeDisabled  = "disabled"
	causeUnchecked = "unchecked"
)

// causeOf says why the instance st describes cannot be searched, for
// good: what instance.Registry.Usable says lasts (disabled, barred by its terms), or,
// for a list instance, what its last /config read said (the dialer's
// notes name what a bare transport error hides). What passes (a circuit
// cooling down, a budget spent, searches in flight) is no cause.
func (a *App) causeOf(st pool.Stats, now time.Time) string {
	if _, why := a.proxy.Instances().Usable(st, now); whyCause[why] != causeNone {
		return whyCause[why]
	}
	err := a.proxy.Instances().Caps(st.URL).ConfigError()
	if st.Tier == pool.Own || err == nil {
		return causeNone
	}
	if errors.Is(err, proxy.ErrTermsUnread) {
		return causeUnchecked
	}
	host := ""
	if u, err := url.Parse(st.URL); err == nil {
		host = u.Hostname()
	}
	switch why := a.notes.why(host); why {
	case egress.DialPrivate, egress.DialDNS, egress.DialRefused:
		return why
	}
	var ce *proxy.ConfigReadError
	switch {
	case !errors.As(err, &ce):
		return causeTransport
	case ce.Status != 0:
		return causeStatus
	case reasonCause[ce.Reason] != "":
		return reasonCause[ce.Reason]
	default:
		return causeTransport
	}
}

// reasonCause is the cause a /config read that failed for a transport
// reason is to the start-up check; a reason not here is causeTransport.
var reasonCause = map[detect.Reason]string{
	detect.DNS:         causeDNS,
	detect.ConnRefused: causeRefused,
	detect.Timeout:     causeTimeout,
	detect.TLS:         causeTLS,
	detect.Reset:       causeReset,
}

// whyCause is the cause each proxy.Why is to the start-up check: the
// lasting ones are, what passes is none. A test holds it to proxy.Whys.
var whyCause = map[proxy.Why]string{
	proxy.WhyDisabled:    causeDisabled,
	proxy.WhyLinkToken:   causeLinkToken,
	proxy.WhyCircuitOpen: causeNone,
	proxy.WhyTrialOut:    causeNone,
	proxy.WhyInFlight:    causeNone,
	proxy.WhyBudget:      causeNone,
}

// causeText says each cause to the operator, in the order they are listed.
var causeText = []struct{ cause, text string }{
	{causePrivate, "%d refused as private addresses: add --allow-private"},
	{causeDNS, "%d unreachable: DNS lookups fail, no network?"},
	{causeRefused, "%d refused the connection"},
	{causeTimeout, "%d did not answer in time"},
	{causeTLS, "%d failed the TLS handshake"},
	{causeReset, "%d reset the connection"},
	{causeStatus, "%d answered /config with an HTTP error"},
	{causeTransport, "%d unreachable"},
	{causeLinkToken, "%d have the link-token bot check on, so searxgate does not search them (--allow-link-token)"},
	{causeDisabled, "%d disabled by you"},
}

// judge returns "" when some instance can be searched, else why none can,
// counted by cause. Instances whose terms were not read yet may still be
// fine: while any is left, judge says nothing.
func (a *App) judge() string {
	now := a.clock.Now()
	counts := map[string]int{causePrivate: int(a.refusedAtSeed.Load())}
	stats := a.pool.Snapshot()
	for _, st := range stats {
		cause := a.causeOf(st, now)
		if cause == causeNone || cause == causeUnchecked {
			return ""
		}
		counts[cause]++
	}
	if len(stats) == 0 && counts[causePrivate] == 0 {
		return a.emptyListText()
	}
	var parts []string
	for _, ct := range causeText {
		if n := counts[ct.cause]; n > 0 {
			parts = append(parts, fmt.Sprintf(ct.text, n))
		}
	}
	return strings.Join(parts, "; ")
}

// emptyListText says why the pool has no instance at all.
func (a *App) emptyListText() string {
	switch src := strings.TrimSpace(a.cfg.Directory); {
	case strings.EqualFold(src, directory.None):
		return "there is no instance: --directory is none and no --instance is given"
	case strings.Contains(src, "://") && !strings.HasPrefix(strings.ToLower(src), "file://"):
		return fmt.Sprintf("there is no instance: the list from %s has none and no --instance is given", src)
	default:
		return fmt.Sprintf("there is no instance: the list file %s has none and no --instance is given", src)
	}
}

// listenError is the start-up error of a listener that could not be
// bound on listen: one in use names the fix.
func listenError(listen string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("--listen (SEARXGATE_LISTEN): %s is in use by another program (another searxgate, or SearXNG on its default port?): stop it, or give searxgate another address with --listen, e.g. --listen %s: %w",
			listen, nextPort(listen), err)
	}
	return fmt.Errorf("--listen (SEARXGATE_LISTEN): %w", err)
}

// nextPort is listen with its port one higher, for an error's example.
func nextPort(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	n, err2 := strconv.Atoi(port)
	if err != nil || err2 != nil || n < 1 || n >= 65535 {
		return "127.0.0.1:0"
	}
	return net.JoinHostPort(host, strconv.Itoa(n+1))
}

// directoryError is the start-up error of an instance list that could not
// be loaded from location: a missing file names the choices.
func directoryError(location string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("--directory (SEARXGATE_DIRECTORY): the instance list file %s does not exist: give the path of an instances.json, a URL (the default is %s), or --directory none to search only your own instances (--instance): %w",
			location, DefaultDirectory, err)
	}
	return privateHint(fmt.Errorf("--directory (SEARXGATE_DIRECTORY): %w", err))
}
