package detect

import (
	"net/url"
	"strings"

	"github.com/searxgate/searxgate/results"
)

// httpURL reports whether u is an absolute http or https URL with a host,
// without white space, control or bidirectional control characters: the
// only links passed on.
func httpURL(u string) bool {
	_, ok := parseLink(u)
	return ok
}

// parseLink splits u when httpURL holds for it. Most links are plain
// (plainLink) and are split without url.Parse, which allocates the URL
// and its unescaped copies; the others are parsed.
func parseLink(u string) (results.URLParts, bool) {
	var rest string
	switch {
	case len(u) > 7 && strings.EqualFold(u[:7], "http://"):
		rest = u[7:]
	case len(u) > 8 && strings.EqualFold(u[:8], "https://"):
		rest = u[8:]
	default:
		return results.URLParts{}, false
	}
	if rest == "" || rest[0] == '/' || rest[0] == '?' || rest[0] == '#' {
		return results.URLParts{}, false
	}
	for i := 0; i < len(u); i++ {
		if c := u[i]; c <= ' ' || c == 0x7f {
			return results.URLParts{}, false
		}
	}
	if hasBidi(u) {
		return results.URLParts{}, false
	}
	if p, ok := plainLink(len(u)-len(rest) == len("https://"), rest); ok {
		return p, true
	}
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return results.URLParts{}, false
	}
	return results.PartsOf(p), true
}

// plainLink splits an http(s) link (https its scheme, rest what follows
// "://", neither empty nor starting with a delimiter, free of
// white space and control characters) when it is plain: a host of
// letters, digits, dots and hyphens with an optional numeric port, and a
// path and fragment of bytes url.Parse keeps as they are (unreserved,
// sub-delimiters, ':', '@', '/', '?' in the fragment, and percent escapes
// of two hex digits). The parts are then what url.Parse would give
// (TestPlainLinkAsURLParse). ok is false when the link is not plain.
func plainLink(https bool, rest string) (p results.URLParts, ok bool) {
	p.Scheme = "http"
	if https {
		p.Scheme = "https"
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	p.Host, rest = rest[:end], rest[end:]
	if !plainHost(p.Host) {
		return results.URLParts{}, false
	}
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest, p.Fragment = rest[:i], rest[i+1:]
	}
	p.Path, p.Query, _ = strings.Cut(rest, "?")
	if !plainPart(p.Path, false) || !plainPart(p.Fragment, true) {
		return results.URLParts{}, false
	}
	return p, true
}

// plainHost: letters, digits, dots and hyphens, then at most one colon
// and digits.
func plainHost(h string) bool {
	name, port, _ := strings.Cut(h, ":")
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return false
		}
	}
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return false
		}
	}
	return true
}

// plainPart: a path (or, with fragment, a fragment) of bytes url.Parse
// keeps as they are.
func plainPart(s string, fragment bool) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("-._~!$&'()*+,;=:@/", c) >= 0:
		case c == '?' && fragment:
		case c == '%' && i+2 < len(s) && ishex(s[i+1]) && ishex(s[i+2]):
			i += 2
		default:
			return false
		}
	}
	return true
}
