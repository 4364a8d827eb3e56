package detect

import (
	"net/netip"
	"net/url"
	"strings"
)

// SearXNG answers two kinds of search with a redirect that is the query's
// own answer, whoever asks and in every format: an external bang
// ("!!g foo" sends the client to https://www.google.com/search?q=foo)
// and, for its HTML page, feeling lucky ("!! foo" sends the client to the
// first result). Every other redirect on a search is the instance's own:
// its limiter sends a client it suspects to its front page.
//
// A redirect is taken for the query's answer only when both hold: the
// query has bang syntax (a word starting with "!!"), and the Location is
// an absolute http or https URL off the instance (under any of its names:
// another case, port, trailing dot or subdomain; an address instance by
// its address in any spelling and port, see self.go). Anything else, a
// redirect to the instance itself or off it for a query without a bang,
// is the instance's: a limiter redirect, never followed and never passed
// on, so a hostile instance cannot make searxgate an open redirect.

// classifyRedirect judges a 3xx answer to a search.
func classifyRedirect(a Answer) Verdict {
	refused := Verdict{Kind: Refused, Reason: LimiterRedirect}
	reason, ok := a.Query.Bang()
	if !ok {
		return refused
	}
	loc := string(peek(a.Header, "Location"))
	u, err := url.Parse(strings.TrimSpace(loc))
	if err != nil || !u.IsAbs() || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return refused
	}
	if inst, err := url.Parse(a.Instance); err == nil && inst.Host != "" && (strings.EqualFold(inst.Host, u.Host) ||
		sameSite(inst.Hostname(), u.Hostname()) || toInstanceAddr(inst, u)) {
		return refused // back to the instance itself, under any of its names: its limiter
	}
	return Verdict{Kind: Redirect, Reason: reason, Location: u.String()}
}

// sameSite reports whether two host names (not addresses: an address's
// other ports may be other sites) are one site: equal, or one a subdomain
// of the other (searx.example and www.searx.example), case and a trailing
// dot aside; the port does not count.
func sameSite(a, b string) bool {
	if _, err := netip.ParseAddr(a); err == nil {
		return false
	}
	a, b = strings.TrimSuffix(strings.ToLower(a), "."), strings.TrimSuffix(strings.ToLower(b), ".")
	return a == b || strings.HasSuffix(a, "."+b) || strings.HasSuffix(b, "."+a)
}

// peek reads a header when there is one.
func peek(h Header, key string) []byte {
	if h == nil {
		return nil
	}
	return h.Peek(key)
}
