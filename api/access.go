package api

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/client"
)

// denial is why a request may not use a door; the zero denial lets it in.
type denial struct {
	status int // 401 or 403
	msg    string
}

// admit decides whether a request may use the doors and who it is. With
// keys, presented must be one (401 otherwise), and the client is the key.
// Without keys, /mcp's rule: open to this machine when searxgate is not
// exposed (listens on loopback only, no reverse proxy, no public URL),
// refused otherwise, and refused to a request a proxy forwarded, to a
// Host that is not loopback and to a browser Origin of another site
// (DNS rebinding).
func (s *Server) admit(ctx *fasthttp.RequestCtx, presented string) (who string, d denial) {
	if s.cfg.Keys.Len() > 0 {
		fp, ok := s.cfg.Keys.Check(presented)
		if !ok {
			if presented == "" {
				return "", denial{fasthttp.StatusUnauthorized, "no API key given: send one of the keys searxgate's operator issued"}
			}
			return "", denial{fasthttp.StatusUnauthorized, "the API key given is not one searxgate's operator issued"}
		}
		return client.FromAPIKey(fp), denial{}
	}
	switch {
	case s.cfg.Exposed:
		return "", denial{fasthttp.StatusForbidden, "searxgate's search APIs are off: it can be reached beyond this machine and no API key is set; " +
			"its operator can turn them on with --api-key (SEARXGATE_API_KEY) or --api-key-file, and clients then send a key"}
	case forwarded(&ctx.Request.Header):
		return "", denial{fasthttp.StatusForbidden, "this request was forwarded by a proxy, so it may come from beyond this machine, " +
			"and searxgate's search APIs need an API key then (--api-key, SEARXGATE_API_KEY)"}
	case !client.LoopbackHost(string(ctx.Host())):
		return "", denial{fasthttp.StatusForbidden, "Host " + quote(string(ctx.Host())) + " is not this searxgate's address"}
	case !loopbackOrigin(ctx.Request.Header.Peek("Origin")):
		return "", denial{fasthttp.StatusForbidden, "Origin " + quote(string(ctx.Request.Header.Peek("Origin"))) + " may not use searxgate's search APIs"}
	}
	return s.cfg.Client(ctx), denial{}
}

// forwarded reports whether a request says a proxy forwarded it
// (client.ForwardHeader, as /mcp reads it).
func forwarded(h *fasthttp.RequestHeader) bool {
	for k := range h.All() {
		if client.ForwardHeader(string(k)) {
			return true
		}
	}
	return false
}

// loopbackOrigin: no Origin (not a browser), or a loopback one.
func loopbackOrigin(origin []byte) bool {
	if len(origin) == 0 {
		return true
	}
	u, err := url.Parse(string(origin))
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && client.LoopbackHost(u.Host)
}

// bearer is the token of an "Authorization: Bearer <token>" header.
func bearer(h *fasthttp.RequestHeader) string {
	scheme, tok, ok := strings.Cut(string(h.Peek("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// quote writes s, cut to 200 bytes, quoted for an error message.
func quote(s string) string {
	return strconv.Quote(s[:min(len(s), 200)])
}
