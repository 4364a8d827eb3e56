package sim

import (
	"regexp"
	"strings"

	"github.com/valyala/fasthttp"
)

// botUA is SearXNG's USER_AGENT pattern (searx/botdetection/
// http_user_agent.py), matched from the start of the header as Python's
// re.match does. A missing User-Agent is read as "unknown", which matches.
var botUA = regexp.MustCompile(`^(unknown` +
	`|[Cc][Uu][Rr][Ll]|[wW]get|Scrapy|splash|JavaFX|FeedFetcher|python-requests|Go-http-client|Java|Jakarta|okhttp` +
	`|HttpClient|Jersey|Python|libwww-perl|Ruby|SynHttpClient|UniversalFeedParser|Googlebot|GoogleImageProxy` +
	`|bingbot|Baiduspider|yacybot|YandexMobileBot|YandexBot|Yahoo! Slurp|MJ12bot|AhrefsBot|archive.org_bot|msnbot` +
	`|MJ12bot|SeznamBot|linkdexbot|Netvibes|SMTBot|zgrab|James BOT|Sogou|Abonti|Pixray|Spinn3r|SemrushBot|Exabot` +
	`|ZmEu|BLEXBot|bitlybot|HeadlessChrome` +
	`|` + regexp.QuoteMeta(`Mozilla/5.0 (compatible; Farside/0.1.0; +https://farside.link)`) +
	`|.*PetalBot.*` +
	`)`)

// botUserAgent reports whether SearXNG's bot check refuses the request's
// User-Agent. An empty one counts as missing.
func botUserAgent(h *fasthttp.RequestHeader) bool {
	ua := string(h.UserAgent())
	if ua == "" {
		ua = "unknown"
	}
	return botUA.MatchString(ua)
}

// badSearchHeaders returns why SearXNG's bot check refuses a search for
// its Accept, Accept-Encoding or Accept-Language header, or "".
func badSearchHeaders(h *fasthttp.RequestHeader) string {
	if !acceptsHTML(string(h.Peek("Accept"))) {
		return "HTTP header Accept did not contain text/html"
	}
	if !encodingOK(string(h.Peek("Accept-Encoding"))) {
		return "HTTP header Accept-Encoding did not contain gzip nor deflate"
	}
	if strings.TrimSpace(string(h.Peek("Accept-Language"))) == "" {
		return "missing HTTP header Accept-Language"
	}
	return ""
}

// acceptsHTML reports whether 'text/html' is in the Accept header's media
// ranges, as Werkzeug's MIMEAccept decides it (*/* and text/* match).
func acceptsHTML(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		mt, _, _ := strings.Cut(part, ";")
		switch strings.ToLower(strings.TrimSpace(mt)) {
		case "text/html", "*/*", "text/*", "*":
			return true
		}
	}
	return false
}

// encodingOK applies SearXNG's Accept-Encoding check: after splitting on
// commas and trimming, one entry must be exactly "gzip" or "deflate" (so
// "gzip;q=1.0" alone does not pass, as in SearXNG).
func encodingOK(ae string) bool {
	for _, part := range strings.Split(ae, ",") {
		switch strings.TrimSpace(part) {
		case "gzip", "deflate":
			return true
		}
	}
	return false
}

// acceptsGzip reports whether the client takes a gzip body.
func acceptsGzip(h *fasthttp.RequestHeader) bool {
	for _, part := range strings.Split(string(h.Peek("Accept-Encoding")), ",") {
		name, params, _ := strings.Cut(part, ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") {
			params = strings.ReplaceAll(params, " ", "")
			return params != "q=0" && params != "q=0.0" && params != "q=0.00" && params != "q=0.000"
		}
	}
	return false
}

// leaks reports whether a request carries anything of searxgate's own
// client: forwarding headers, cookies, Via.
func leaks(h *fasthttp.RequestHeader) bool {
	for _, k := range []string{"X-Forwarded-For", "Forwarded", "X-Real-IP", "Cookie", "Via"} {
		if len(h.Peek(k)) > 0 {
			return true
		}
	}
	return false
}

// claimsBrowser reports whether a User-Agent claims to be a modern browser.
func claimsBrowser(ua string) bool {
	if !strings.HasPrefix(ua, "Mozilla/5.0") {
		return false
	}
	for _, tok := range []string{"Chrome/", "Firefox/", "Safari/", "Edg/"} {
		if strings.Contains(ua, tok) {
			return true
		}
	}
	return false
}
