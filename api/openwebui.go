package api

import (
	"errors"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/proxy"
)

// maxOpenWebUI is the most results one request may ask: more than a page
// of SearXNG, across pages.
const maxOpenWebUI = 50

// openWebUIFail answers f as a FastAPI service would ({"detail": ...}):
// Open WebUI raises on any status but 2xx and logs the body.
func openWebUIFail(ctx *fasthttp.RequestCtx, f failure) {
	retryAfter(ctx, f)
	writeJSON(ctx, f.openWebUI, map[string]any{"detail": f.text})
}

type openWebUIResult struct {
	Link    string `json:"link"`
	Title   string `json:"title"`
	Snippet string `json:"snippet"`
}

// openWebUI is Open WebUI's "External" web search: POST {query, count}
// with "Authorization: Bearer <key>", answered with [{link, title,
// snippet}].
func (s *Server) openWebUI(ctx *fasthttp.RequestCtx) {
	if !ctx.IsPost() {
		ctx.Response.Header.Set("Allow", "POST")
		openWebUIFail(ctx, failure{openWebUI: fasthttp.StatusMethodNotAllowed, text: "Method Not Allowed: send a POST"})
		return
	}
	client, d := s.admit(ctx, bearer(&ctx.Request.Header))
	if d.status != 0 {
		openWebUIFail(ctx, denied(d))
		return
	}
	q, err := parseOpenWebUI(ctx.PostBody())
	if err != nil {
		openWebUIFail(ctx, badRequest(err.Error()))
		return
	}
	q.req.Client = client
	rctx, cancel := requestContext()
	defer cancel()
	g, err := s.run(rctx, q)
	if err != nil {
		openWebUIFail(ctx, searchFailure(err))
		return
	}
	out := make([]openWebUIResult, 0, len(g.results))
	for _, r := range g.results {
		out = append(out, openWebUIResult{Link: r.URL, Title: r.Title, Snippet: r.Content})
	}
	writeJSON(ctx, fasthttp.StatusOK, out)
}

// parseOpenWebUI reads {query, count}; count defaults to Open WebUI's own
// default (3) and is at most 50.
func parseOpenWebUI(body []byte) (search, error) {
	f, err := readFields(body)
	if err != nil {
		return search{}, err
	}
	text, err := f.str("query")
	if err != nil {
		return search{}, err
	}
	if text = strings.TrimSpace(text); text == "" {
		return search{}, errors.New("query is missing")
	}
	if len(text) > proxy.MaxQueryLen {
		return search{}, errors.New("query is too long")
	}
	n, err := f.integer("count", 3, 1, maxOpenWebUI)
	if err != nil {
		return search{}, err
	}
	return search{req: proxy.Request{Query: text, Format: proxy.FormatJSON, PageNo: 1}, want: n}, nil
}
