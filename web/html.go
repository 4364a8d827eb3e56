package web

import (
	"bytes"
	"embed"
	"encoding/xml"
	"html/template"
	"net/url"
	"strings"

	"github.com/valyala/fasthttp"

	"searxgate/detect"
	"searxgate/proxy"
)

//go:embed templates/*.html
var templateFS embed.FS

// parseTemplates parses every embedded template; a missing or broken one
// fails start-up.
func parseTemplates() (*template.Template, error) {
	return template.New("").Funcs(template.FuncMap{
		"safeURL": safeURL,
	}).ParseFS(templateFS, "templates/*.html")
}

// safeURL returns u when it is an http(s) URL, "" otherwise: no upstream
// link of another scheme (javascript:, data:) is ever rendered.
func safeURL(u string) string {
	p, err := url.Parse(strings.TrimSpace(u))
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return ""
	}
	return p.String()
}

func xmlEscape(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }

// baseURL is the address the client used, ending in "/".
func (s *Server) baseURL(ctx *fasthttp.RequestCtx) string {
	scheme := "http"
	if ctx.IsTLS() {
		scheme = "https"
	}
	return scheme + "://" + string(ctx.Host()) + "/"
}

type pageData struct {
	Title    string
	Query    string
	Request  proxy.Request
	Results  *detect.Results
	Response *proxy.Response
	Status   int
	Message  string
}

func (s *Server) render(ctx *fasthttp.RequestCtx, status int, name string, d pageData) {
	var b bytes.Buffer
	if err := s.tmpl.ExecuteTemplate(&b, name, d); err != nil {
		s.log.Error("rendering a page failed", "template", name, "err", err)
		ctx.Error("Internal Server Error", fasthttp.StatusInternalServerError)
		return
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("text/html; charset=utf-8")
	ctx.SetBody(b.Bytes())
}

func (s *Server) index(ctx *fasthttp.RequestCtx) {
	s.render(ctx, fasthttp.StatusOK, "index.html", pageData{Title: s.cfg.InstanceName})
}

func (s *Server) errorPage(ctx *fasthttp.RequestCtx, status int, req proxy.Request, msg string) {
	s.render(ctx, status, "error.html", pageData{Title: "Error", Query: req.Query, Request: req, Status: status, Message: msg})
}

func (s *Server) writeHTML(ctx *fasthttp.RequestCtx, req proxy.Request, r *detect.Results, res *proxy.Response) {
	s.render(ctx, fasthttp.StatusOK, "results.html", pageData{Title: req.Query, Query: req.Query, Request: req, Results: r, Response: res})
}
