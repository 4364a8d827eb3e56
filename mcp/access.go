package mcp

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/searxgate/searxgate/client"
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
		if !s.cfg.Exposed && !client.LoopbackHost(r.Host) && !s.hostAllowed(r.Host) {
			http.Error(w, "Forbidden: Host "+strconvQuote(r.Host)+" is not this searxgate's address", http.StatusForbidden)
			return
		}
		if s.cfg.Token == "" && s.cfg.Exposed {
			http.Error(w, "Forbidden: /mcp is off because searxgate can be reached beyond this machine and no MCP token is set; "+
				"its operator can turn it on with --mcp-token (SEARXGATE_MCP_TOKEN), which clients then send as "+
				"\"Authorization: Bearer <token>\"", http.StatusForbidden)
			return
		}
		if s.cfg.Token == "" && forwarded(r) {
			// A proxy nobody declared: the request says it was forwarded,
			// so it may come from anywhere. Remote, whatever the socket.
			s.forwardedOnce.Do(func() {
				s.log.Warn("/mcp refused a forwarded request (Forwarded, Via, X-Forwarded-*, X-Real-IP or another client address header) from a proxy not given with --trust-proxy: " +
					"set --mcp-token, and --trust-proxy for the proxy")
			})
			http.Error(w, "Forbidden: this request was forwarded by a proxy, so it may come from beyond this machine, and /mcp needs a token then; "+
				"searxgate's operator can set --mcp-token (SEARXGATE_MCP_TOKEN), which clients send as \"Authorization: Bearer <token>\", "+
				"and name the proxy with --trust-proxy", http.StatusForbidden)
			return
		}
		if s.cfg.Token != "" && !bearerOK(r.Header.Get("Authorization"), s.cfg.Token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="searxgate"`)
			http.Error(w, "Unauthorized: send \"Authorization: Bearer <token>\" with searxgate's MCP token", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost && !s.batchOK(w, r) {
			return
		}
		r.Header.Set(clientHeader, s.cfg.Client(r))
		// A context of our own that ends with the request, or when the
		// request's own ends (its client went): behind fasthttp's adaptor
		// the request's context is the server's RequestCtx, which is reused
		// once the handler returns, so nothing the SDK or a tool starts may
		// keep it.
		ctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		stop := context.AfterFunc(r.Context(), func() { cancel(context.Cause(r.Context())) })
		defer stop()
		id, remove := s.callers.add(ctx)
		defer remove()
		r.Header.Set(requestHeader, id)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// forwarded reports whether a request says a proxy forwarded it
// (client.ForwardHeader).
func forwarded(r *http.Request) bool {
	for k := range r.Header {
		if client.ForwardHeader(k) {
			return true
		}
	}
	return false
}

// MaxBatch is the most messages one JSON-RPC batch may hold, for the
// protocol revisions that have batches (before 2025-06-18).
const MaxBatch = 8

// batchesGone is the first protocol revision without JSON-RPC batches.
const batchesGone = "2025-06-18"

// batchOK refuses a JSON-RPC batch the client's protocol revision has
// not (2025-06-18 removed them) or one larger than MaxBatch, with the
// JSON-RPC error the specification names, and restores the body for the
// handler otherwise. The body is already bounded by the server's limit.
func (s *Server) batchOK(w http.ResponseWriter, r *http.Request) bool {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "Bad Request: the body could not be read", http.StatusBadRequest)
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return true
	}
	rev := r.Header.Get("MCP-Protocol-Version")
	var msg string
	switch {
	case rev >= batchesGone:
		msg = "JSON-RPC batches are not part of MCP " + rev + ": send one message per request"
	default:
		var batch []json.RawMessage
		if err := json.Unmarshal(trimmed, &batch); err != nil {
			return true // the SDK answers what does not parse
		}
		if len(batch) <= MaxBatch {
			return true
		}
		msg = "a batch of " + strconv.Itoa(len(batch)) + " messages; searxgate takes at most " + strconv.Itoa(MaxBatch) + " in one"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": -32600, "message": "Invalid Request: " + msg},
	})
	return false
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
	if client.LoopbackHost(u.Host) {
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
