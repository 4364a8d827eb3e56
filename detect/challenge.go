package detect

import (
	"bytes"
)

// challengeScan is how much of a body is searched for challenge markers:
// interstitials put them in the head or in a short page.
const challengeScan = 128 << 10

// challengeMarkers are lower-case strings found in bot-challenge
// interstitials and nowhere in SearXNG's own pages. They are looked for
// only in answers that are not a SearXNG answer, so a result that merely
// mentions them cannot trigger them.
var challengeMarkers = [][]byte{
	// Cloudflare managed challenge, JS challenge and Turnstile.
	[]byte("<title>just a moment...</title>"),
	[]byte("/cdn-cgi/challenge-platform/"),
	[]byte("_cf_chl_opt"),
	[]byte("cf-chl-"),
	[]byte("cf_chl_"),
	[]byte("challenges.cloudflare.com"),
	[]byte("checking your browser before accessing"),
	[]byte("checking if the site connection is secure"),
	// Anubis.
	[]byte("making sure you&#39;re not a bot"),
	[]byte("making sure you're not a bot"),
	[]byte("making sure you&#x27;re not a bot"),
	[]byte("anubis_challenge"),
	[]byte("/.within.website/"),
	// DDoS-Guard.
	[]byte("ddos-guard"),
	[]byte("/.well-known/ddos-guard/"),
	// Other interstitials and captcha walls.
	[]byte("sucuri website firewall"),
	[]byte("vercel security checkpoint"),
	[]byte("g-recaptcha"),
	[]byte("h-captcha"),
	[]byte("hcaptcha.com"),
	[]byte("cf-turnstile"),
	[]byte("ddos protection by"),
}

// cdnBlockMarkers are lower-case strings of a CDN's "you are blocked" page:
// a refusal that is not a challenge (nothing to wait out by solving).
var cdnBlockMarkers = [][]byte{
	[]byte("cf-error-details"),
	[]byte("cloudflare ray id"),
	[]byte("sorry, you have been blocked"),
	[]byte("attention required! | cloudflare"),
	[]byte("access denied"),
}

// cfChallengeHeader reports Cloudflare's own word that the answer is a
// challenge (cf-mitigated: challenge), whatever the status and body.
func cfChallengeHeader(h Header) bool {
	if h == nil {
		return false
	}
	return bytes.Contains(bytes.ToLower(h.Peek("cf-mitigated")), []byte("challenge"))
}

// isChallenge reports whether an answer that is not a SearXNG answer is a
// bot challenge: by Cloudflare's header, a DDoS-Guard server header, or a
// marker in the body.
func isChallenge(h Header, body []byte) bool {
	if cfChallengeHeader(h) {
		return true
	}
	if h != nil && bytes.Contains(bytes.ToLower(h.Peek("server")), []byte("ddos-guard")) {
		return true
	}
	return containsAnyFold(body, challengeMarkers)
}

// isCDNBlock reports whether a 403 comes from a CDN's block page rather
// than from SearXNG itself.
func isCDNBlock(h Header, body []byte) bool {
	if h != nil && len(h.Peek("cf-ray")) > 0 && !bytes.Contains(body, []byte("<h1>Forbidden</h1>")) {
		return true
	}
	return containsAnyFold(body, cdnBlockMarkers)
}

// containsAnyFold reports whether the first challengeScan bytes of body
// contain any of the lower-case markers, ignoring ASCII case.
func containsAnyFold(body []byte, markers [][]byte) bool {
	if len(body) > challengeScan {
		body = body[:challengeScan]
	}
	lower := bytes.ToLower(body)
	for _, m := range markers {
		if bytes.Contains(lower, m) {
			return true
		}
	}
	return false
}
