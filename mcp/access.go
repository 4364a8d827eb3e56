package mcp

import (
	"context"
	"crypto/subtle"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// access guards the MCP endpoint: browser Origins other than loopback and
// the configured ones are refused (DNS-rebinding protection, as the MCP
// specification asks), and so are Host names other than loopback ones when
// searxgate is not exposed; an exposed searxgate without a token refuses
// /mcp altogether; with a token, requests must carry it.
func (s *Server) access(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && !s.originAllowed(o) {
			http.Error(w, "Forbidden: Origin "+strconvQuote(o)+" may not use searxgate's MCP endpoint", http.StatusForbidden)
			return
		}
		if !s.cfg.Exposed && !LoopbackHost(r.Host) && !s.hostAllowed(r.Host) {
			http.Error(w, "Forbidden: Host "+strconvQuote(r.Host)+" is not this searxgate's address", http.StatusForbidden)
			return
		}
		if s.cfg.Token == "" && s.cfg.Exposed {
			http.Error(w, "Forbidden: /mcp is off because searxgate can be reached beyond this machine and no MCP token is set; "+
				"its operator can turn it on with --mcp-token (SEARXGATE_MCP_TOKEN), which clients then send as "+
				"\"Authorization: Bearer <token>\"", http.StatusForbidden)
			return
		}
		if s.cfg.Token != "" && !bearerOK(r.Header.Get("Authorization"), s.cfg.Token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="searxgate"`)
			http.Error(w, "Unauthorized: send \"Authorization: Bearer <token>\" with searxgate's MCP token", http.StatusUnauthorized)
			return
		}
		r.Header.Del(clientHeader)
		r.Header.Set(clientHeader, s.cfg.Client(r))
		// A context of our own that ends with the request: behind
		// fasthttp's adaptor the request's context is the server's
		// RequestCtx, which is reused once the handler returns, so nothing
		// the SDK or a tool starts may keep it.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

func strconvQuote(s string) string {
	if len(s) > 200 {
		s = s[:200]
	}
	return `"` + strings.ToValidUTF8(strings.Map(func(r rune) rune {
		if r < 0x20 || r == '"' || r == 0x7f {
			return '?'
		}
		return r
	}, s), "?") + `"`
}

func bearerOK(header, token string) bool {
	scheme, got, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(token)) == 1
}

// originAllowed: a loopback origin (any port: a local inspector or app), or
// one of Config.Origins. "null" and anything unparsable are refused.
func (s *Server) originAllowed(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	if LoopbackHost(u.Host) {
		return true
	}
	for _, o := range s.cfg.Origins {
		if strings.EqualFold(strings.TrimSuffix(o, "/"), u.Scheme+"://"+u.Host) {
			return true
		}
	}
	return false
}

// hostAllowed: the Host is one of Config.Origins' hosts.
func (s *Server) hostAllowed(host string) bool {
	for _, o := range s.cfg.Origins {
		if u, err := url.Parse(o); err == nil && strings.EqualFold(u.Host, host) {
			return true
		}
	}
	return false
}

// LoopbackHost reports whether host[:port] names this machine: localhost
// (and *.localhost), or a loopback address.
func LoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// peerAddr is the default client key: the peer's address.
func peerAddr(r *http.Request) string {
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		return ap.Addr().Unmap().String()
	}
	return ""
}
