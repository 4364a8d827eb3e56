package web

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"searxgate/detect"
	"searxgate/proxy"
)

// Response headers that tell a client who answered.
const (
	HeaderInstance = "X-Searxgate-Instance"
	HeaderAttempts = "X-Searxgate-Attempts"
	HeaderCache    = "X-Searxgate-Cache" // hit, miss, stale, coalesced
)

// search serves /search (and / with q) in the format asked.
func (s *Server) search(ctx *fasthttp.RequestCtx) {
	req, err := proxy.ParseRequest(params{ctx})
	if err != nil {
		s.badRequest(ctx, req, err)
		return
	}
	// The client's connection has no context in fasthttp; the search's own
	// deadline bounds it.
	res, err := s.cfg.Search.Search(context.Background(), req)
	if err != nil {
		s.noAnswer(ctx, req, err)
		return
	}
	h := &ctx.Response.Header
	h.Set(HeaderInstance, res.Instance)
	h.Set(HeaderAttempts, strconv.Itoa(res.Attempts))
	switch {
	case res.Stale:
		h.Set(HeaderCache, "stale")
	case res.Cached:
		h.Set(HeaderCache, "hit")
	case res.Coalesced:
		h.Set(HeaderCache, "coalesced")
	default:
		h.Set(HeaderCache, "miss")
	}
	if req.Format == proxy.FormatJSON {
		ctx.SetContentType("application/json")
		ctx.SetBody(res.JSON)
		return
	}
	results, err := res.Results()
	if err != nil {
		s.log.Error("cached answer does not decode", "err", err)
		plainError(ctx, fasthttp.StatusInternalServerError, "Internal Server Error")
		return
	}
	switch req.Format {
	case proxy.FormatCSV:
		writeCSV(ctx, req, results)
	case proxy.FormatRSS:
		s.writeRSS(ctx, req, results)
	default:
		s.writeHTML(ctx, req, results, res)
	}
}

// badRequest answers a parameter SearXNG would refuse, in SearXNG's forms.
func (s *Server) badRequest(ctx *fasthttp.RequestCtx, req proxy.Request, err error) {
	switch {
	case errors.Is(err, proxy.ErrFormat):
		plainError(ctx, fasthttp.StatusForbidden, "Forbidden")
		return
	case errors.Is(err, proxy.ErrNoQuery) && req.Format == proxy.FormatHTML:
		s.index(ctx)
		return
	}
	msg := err.Error()
	switch req.Format {
	case proxy.FormatJSON:
		writeJSON(ctx, fasthttp.StatusBadRequest, map[string]any{"error": msg})
	case proxy.FormatCSV, proxy.FormatRSS:
		ctx.SetStatusCode(fasthttp.StatusBadRequest)
		ctx.SetContentType("text/plain; charset=utf-8")
		ctx.SetBodyString(msg)
	default:
		s.errorPage(ctx, fasthttp.StatusBadRequest, req, msg)
	}
}

// noAnswer answers 503 with what was tried and why each attempt failed.
func (s *Server) noAnswer(ctx *fasthttp.RequestCtx, req proxy.Request, err error) {
	body := map[string]any{"error": "no instance answered"}
	var na *proxy.NoAnswerError
	if errors.As(err, &na) {
		body["error"] = "no instance answered: " + explainWhy(na.Why)
		tried := na.Tried
		if tried == nil {
			tried = []proxy.Attempt{}
		}
		body["tried"] = tried
	} else if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		body["error"] = "search cancelled"
		body["tried"] = []proxy.Attempt{}
	} else {
		s.log.Error("search failed", "err", err)
		body["tried"] = []proxy.Attempt{}
	}
	ctx.Response.Header.Set("Retry-After", "5")
	if req.Format == proxy.FormatHTML {
		s.errorPage(ctx, fasthttp.StatusServiceUnavailable, req, body["error"].(string))
		return
	}
	writeJSON(ctx, fasthttp.StatusServiceUnavailable, body)
}

func explainWhy(why string) string {
	switch why {
	case "deadline":
		return "the search deadline passed"
	case "no_instance":
		return "every instance is cooling down, out of budget or already tried"
	case "attempts":
		return "every attempt failed"
	case "budget":
		return "the retry budget is spent"
	case "shutdown":
		return "searxgate is shutting down"
	}
	return why
}

func writeJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		plainError(ctx, fasthttp.StatusInternalServerError, "Internal Server Error")
		return
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}

// pyFloat writes f as Python's str(float) does ("1.0", "0.5").
func pyFloat(f float64) string {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return s
}

// writeCSV writes SearXNG's CSV: a header row, then results, answers,
// suggestions and corrections, each row typed.
func writeCSV(ctx *fasthttp.RequestCtx, req proxy.Request, r *detect.Results) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.UseCRLF = true
	_ = w.Write([]string{"title", "url", "content", "host", "engine", "score", "type"})
	for _, x := range r.Results {
		host := ""
		if len(x.ParsedURL) > 1 {
			host = x.ParsedURL[1]
		}
		_ = w.Write([]string{x.Title, x.URL, x.Content, host, x.Engine, pyFloat(x.Score), "result"})
	}
	for _, row := range []struct {
		kind string
		list []string
	}{{"answer", r.Answers}, {"suggestion", r.Suggestions}, {"correction", r.Corrections}} {
		for _, a := range row.list {
			_ = w.Write([]string{a, "", "", "", "", "", row.kind})
		}
	}
	w.Flush()
	ctx.SetContentType("application/csv")
	ctx.Response.Header.Set("Content-Disposition", "attachment;Filename=searx_-_"+sanitizeFilename(req.Query)+".csv")
	ctx.SetBody(buf.Bytes())
}

// sanitizeFilename keeps a header value safe: no quotes, separators or
// control characters.
func sanitizeFilename(q string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '"' || r == ';' || r == '\\' || r == '/' {
			return '_'
		}
		return r
	}, q)
}

// writeRSS writes SearXNG's RSS (its opensearch_response_rss template).
func (s *Server) writeRSS(ctx *fasthttp.RequestCtx, req proxy.Request, r *detect.Results) {
	var b bytes.Buffer
	base := s.baseURL(ctx)
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<rss version="2.0" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" xmlns:atom="http://www.w3.org/2005/Atom">` + "\n  <channel>\n")
	n := strconv.FormatInt(max(r.NumberOfResults, int64(len(r.Results))), 10)
	b.WriteString("    <title>SearXNG search: " + xmlEscape(req.Query) + "</title>\n")
	b.WriteString("    <link>" + xmlEscape(base+"search?q="+urlQueryEscape(req.Query)) + "</link>\n")
	b.WriteString(`    <description>Search results for "` + xmlEscape(req.Query) + `" - searxgate</description>` + "\n")
	b.WriteString("    <opensearch:totalResults>" + n + "</opensearch:totalResults>\n")
	b.WriteString("    <opensearch:startIndex>1</opensearch:startIndex>\n")
	b.WriteString("    <opensearch:itemsPerPage>" + n + "</opensearch:itemsPerPage>\n")
	b.WriteString(`    <atom:link rel="search" type="application/opensearchdescription+xml" href="` + xmlEscape(base+"opensearch.xml") + `"/>` + "\n")
	b.WriteString(`    <opensearch:Query role="request" searchTerms="` + xmlEscape(req.Query) + `" startPage="1" />` + "\n")
	for _, x := range r.Results {
		b.WriteString("    <item>\n      <title>" + xmlEscape(x.Title) + "</title>\n      <type>result</type>\n")
		b.WriteString("      <link>" + xmlEscape(x.URL) + "</link>\n")
		b.WriteString("      <description>" + xmlEscape(x.Content) + "</description>\n")
		if t, ok := parseDate(x.PublishedDate); ok {
			b.WriteString("      <pubDate>" + t.Format(time.RFC1123Z) + "</pubDate>\n")
		}
		b.WriteString("    </item>\n")
	}
	b.WriteString("  </channel>\n</rss>\n")
	ctx.SetContentType("application/rss+xml; charset=UTF-8")
	ctx.SetBody(b.Bytes())
}

func parseDate(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
