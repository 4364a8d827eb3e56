package web

import (
	"embed"

	"github.com/valyala/fasthttp"
)

//go:embed static/style.css static/favicon.svg static/searxgate.js
var staticFS embed.FS

// serveStatic answers searxgate's own stylesheet, script and icon, embedded.
func serveStatic(ctx *fasthttp.RequestCtx, path string) {
	name, ctype := "static/favicon.svg", "image/svg+xml"
	switch path {
	case "/static/style.css":
		name, ctype = "static/style.css", "text/css; charset=utf-8"
	case "/static/searxgate.js":
		name, ctype = "static/searxgate.js", "text/javascript; charset=utf-8"
	}
	b, err := staticFS.ReadFile(name)
	if err != nil { // embedded at build time: cannot happen
		plainError(ctx, fasthttp.StatusNotFound, "Not Found")
		return
	}
	ctx.Response.Header.Set("Cache-Control", "public, max-age=86400")
	ctx.SetContentType(ctype)
	ctx.SetBody(b)
}
