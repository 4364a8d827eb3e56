package web

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
)

// apiErr answers the instance API's errors as {"error": msg}.
func apiErr(ctx *fasthttp.RequestCtx, status int, msg string) {
	writeJSON(ctx, status, map[string]string{"error": msg})
}

// authorized reports whether the request may change the pool, answering
// 403 (writes are off), 401 (no or wrong token) or 503 (no operator)
// when it may not. The token is compared in constant time.
func (s *Server) authorized(ctx *fasthttp.RequestCtx) bool {
	if s.cfg.AdminToken == "" {
		apiErr(ctx, fasthttp.StatusForbidden, "the instance API's writes are off: start searxgate with --admin-token <token> "+
			"(or SEARXGATE_ADMIN_TOKEN) and send \"Authorization: Bearer <token>\"")
		return false
	}
	h := string(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization))
	scheme, token, _ := strings.Cut(h, " ")
	want := sha256.Sum256([]byte(s.cfg.AdminToken))
	got := sha256.Sum256([]byte(strings.TrimSpace(token)))
	ok := subtle.ConstantTimeCompare(want[:], got[:]) == 1
	if !strings.EqualFold(scheme, "Bearer") || !ok {
		ctx.Response.Header.Set(fasthttp.HeaderWWWAuthenticate, `Bearer realm="searxgate"`)
		apiErr(ctx, fasthttp.StatusUnauthorized, "a valid \"Authorization: Bearer <token>\" is required")
		return false
	}
	if s.cfg.Operator == nil {
		apiErr(ctx, fasthttp.StatusServiceUnavailable, "the instance API is not available in this process")
		return false
	}
	return true
}

// opError answers an Operator's error: the client's (400) or ours (500).
func (s *Server) opError(ctx *fasthttp.RequestCtx, op string, err error) {
	if errors.Is(err, ErrBadInstance) {
		apiErr(ctx, fasthttp.StatusBadRequest, err.Error())
		return
	}
	s.log.Error("instance API", "op", op, "err", err)
	apiErr(ctx, fasthttp.StatusInternalServerError, op+" failed; the log says why")
}

// apiInstances serves GET (list) and POST (add) /api/instances.
func (s *Server) apiInstances(ctx *fasthttp.RequestCtx) {
	if !ctx.IsPost() {
		var b []byte
		var err error
		if s.cfg.Pool != nil {
			b, err = marshalStats(s.cfg.Pool.Snapshot())
		} else {
			b, err = marshalStats(nil)
		}
		if err != nil {
			plainError(ctx, fasthttp.StatusInternalServerError, "Internal Server Error")
			return
		}
		ctx.Response.Header.Set("Cache-Control", "no-store")
		ctx.SetContentType("application/json")
		ctx.SetBody(b)
		return
	}
	if !s.authorized(ctx) {
		return
	}
	raw, ok := bodyURL(ctx)
	if !ok {
		apiErr(ctx, fasthttp.StatusBadRequest, `give the instance as {"url": "https://..."} or a form field url`)
		return
	}
	c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	u, err := s.cfg.Operator.Add(c, raw)
	if err != nil {
		s.opError(ctx, "add", err)
		return
	}
	s.log.Info("instance added by the operator", "instance", u)
	writeJSON(ctx, fasthttp.StatusCreated, map[string]string{"url": u, "status": "added"})
}

// bodyURL reads the URL to add from a JSON body or a form.
func bodyURL(ctx *fasthttp.RequestCtx) (string, bool) {
	if strings.HasPrefix(string(ctx.Request.Header.ContentType()), "application/json") {
		var v struct {
			URL string `json:"url"`
		}
		if json.Unmarshal(ctx.PostBody(), &v) != nil || strings.TrimSpace(v.URL) == "" {
			return "", false
		}
		return strings.TrimSpace(v.URL), true
	}
	u := strings.TrimSpace(string(ctx.PostArgs().Peek("url")))
	if u == "" {
		u = strings.TrimSpace(string(ctx.QueryArgs().Peek("url")))
	}
	return u, u != ""
}

// instancePath splits what follows /api/instances/ in the raw path into
// the percent-decoded instance URL and the action ("", "disable" or
// "enable"). An unencoded URL works too, when it is unambiguous.
func instancePath(rawPath []byte) (inst, action string, ok bool) {
	rest, found := strings.CutPrefix(string(rawPath), "/api/instances/")
	if !found || rest == "" || rest[0] == '/' {
		return "", "", false
	}
	for _, a := range []string{"disable", "enable"} {
		if r, cut := strings.CutSuffix(rest, "/"+a); cut && r != "" {
			rest, action = r, a
			break
		}
	}
	u, err := url.PathUnescape(rest)
	if err != nil || u == "" {
		return "", "", false
	}
	return u, action, true
}

// apiInstance serves DELETE /api/instances/{url} and
// POST /api/instances/{url}/disable|enable.
func (s *Server) apiInstance(ctx *fasthttp.RequestCtx) {
	inst, action, ok := instancePath(ctx.Request.URI().PathOriginal())
	if !ok {
		apiErr(ctx, fasthttp.StatusNotFound, "no such instance path; the instance URL must be percent-encoded")
		return
	}
	switch action {
	case "":
		if !allow(ctx, fasthttp.MethodDelete) || !s.authorized(ctx) {
			return
		}
		found, err := s.cfg.Operator.Remove(inst)
		if err != nil {
			s.opError(ctx, "remove", err)
			return
		}
		if !found {
			apiErr(ctx, fasthttp.StatusNotFound, "the instance is not in the pool (it stays out of later directory lists)")
			return
		}
		s.log.Info("instance removed by the operator", "instance", inst)
		writeJSON(ctx, fasthttp.StatusOK, map[string]string{"url": inst, "status": "removed"})
	default:
		if !allow(ctx, fasthttp.MethodPost) || !s.authorized(ctx) {
			return
		}
		found, err := s.cfg.Operator.SetDisabled(inst, action == "disable")
		if err != nil {
			s.opError(ctx, action, err)
			return
		}
		if !found {
			apiErr(ctx, fasthttp.StatusNotFound, "the instance is not in the pool")
			return
		}
		s.log.Info("instance "+action+"d by the operator", "instance", inst)
		writeJSON(ctx, fasthttp.StatusOK, map[string]string{"url": inst, "status": action + "d"})
	}
}

// apiReset serves POST /api/pool/reset.
func (s *Server) apiReset(ctx *fasthttp.RequestCtx) {
	if !s.authorized(ctx) {
		return
	}
	if err := s.cfg.Operator.Reset(); err != nil {
		s.opError(ctx, "reset", err)
		return
	}
	s.log.Info("pool reset by the operator")
	writeJSON(ctx, fasthttp.StatusOK, map[string]string{"status": "reset"})
}

// apiPurgeCache serves POST /api/cache/purge: every cached answer and
// autocompletion is dropped, from memory and from the store's file (which
// is compacted, so that none of it stays on disk).
func (s *Server) apiPurgeCache(ctx *fasthttp.RequestCtx) {
	if !s.authorized(ctx) {
		return
	}
	if s.cfg.Proxy == nil {
		apiErr(ctx, fasthttp.StatusServiceUnavailable, "the cache is not available in this process")
		return
	}
	n, err := s.cfg.Proxy.Cache().Purge()
	if err != nil {
		s.opError(ctx, "cache purge", err)
		return
	}
	s.log.Info("result cache purged by the operator", "entries", n)
	writeJSON(ctx, fasthttp.StatusOK, map[string]any{"status": "purged", "entries": n})
}
