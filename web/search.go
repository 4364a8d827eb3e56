package web

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"html"
	"log/slog"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/searxgate/searxgate/results"
	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/client"
	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/internal/logevery"
	"github.com/searxgate/searxgate/proxy"
)

// Response headers that tell a client who answered.
const (
	HeaderInstance = "X-Searxgate-Instance"
	// HeaderThin says why an answer is thin (proxy.ThinNote): its
	// instance reports engines suspended and it holds few results.
	HeaderThin     = "X-Searxgate-Thin"
	HeaderAttempts = "X-Searxgate-Attempts"
	HeaderCache    = "X-Searxgate-Cache" // hit, miss, stale, coalesced
	// HeaderFanout is "asked/answered" on a search sent to several
	// instances and merged (fanout=N); HeaderInstance then lists them all.
	HeaderFanout = "X-Searxgate-Fanout"
	// HeaderError says why a CSV search was refused: SearXNG's CSV error
	// is an empty attachment, with no room for the reason.
	HeaderError = "X-Searxgate-Error"
)

// formatContentType is the Content-Type of a search answered in format,
// SearXNG's own (RSS as Flask's text/xml); a GET and a HEAD say the same.
func formatContentType(format string) string {
	switch format {
	case proxy.FormatJSON:
		return "application/json"
	case proxy.FormatCSV:
		return "application/csv"
	case proxy.FormatRSS:
		return "text/xml; charset=utf-8"
	}
	return "text/html; charset=utf-8"
}

// search serves /search (and / with q) in the format asked.
func (s *Server) search(ctx *fasthttp.RequestCtx) {
	req, err := proxy.ParseRequest(searchParams(ctx))
	// SearXNG checks the format before the query: a disabled format is
	// refused even without q.
	if !s.formatEnabled(req.Format) {
		forbidden(ctx)
		return
	}
	if err != nil {
		s.badRequest(ctx, req, err)
		return
	}
	if ctx.IsHead() {
		// A HEAD (link checkers, a browser's prefetch) says what a GET
		// would answer without searching: it must cost no instance a
		// search or the client its share.
		ctx.SetContentType(formatContentType(req.Format))
		return
	}
	req.Client = s.client(ctx)
	// The client's connection has no context in fasthttp; the search's own
	// deadline bounds it, and its timeout_limit (proxy.Search's rule).
	res, err := s.cfg.Search.Search(context.Background(), req)
	if err != nil {
		s.noAnswer(ctx, req, err)
		return
	}
	if s.answerHeaders(ctx, req, res) {
		return // a redirect, or why it is not passed on
	}
	if req.Format == proxy.FormatJSON {
		body, err := servedJSON(res, s.cfg.JSONShape)
		if err != nil {
			s.log.Error("an answer does not decode", "err", err)
			plainError(ctx, fasthttp.StatusInternalServerError, "Internal Server Error")
			return
		}
		ctx.SetContentType(formatContentType(proxy.FormatJSON))
		// Not copied: an answer's JSON is never modified once made.
		ctx.Response.SetBodyRaw(body)
		return
	}
	page, err := res.Results()
	if err != nil {
		s.log.Error("cached answer does not decode", "err", err)
		plainError(ctx, fasthttp.StatusInternalServerError, "Internal Server Error")
		return
	}
	// SearXNG sends a feeling-lucky search to its first result from the
	// HTML page and the RSS feed (its check comes after JSON and CSV).
	if (req.Format == proxy.FormatHTML || req.Format == proxy.FormatRSS) && s.feelingLucky(ctx, req, page) {
		return
	}
	switch req.Format {
	case proxy.FormatCSV:
		writeCSV(ctx, req, page)
	case proxy.FormatRSS:
		s.writeRSS(ctx, req, page)
	default:
		s.writeHTML(ctx, req, page, res)
	}
}

// searchParams are a search's parameters: the request's, with the
// preferences (cookies) filling in what it does not say. A request
// without cookies (every API client) has none to read: its empty
// parameters are absent, as withPrefs makes them with the default
// preferences.
func searchParams(ctx *fasthttp.RequestCtx) proxy.Params {
	if len(ctx.Request.Header.Peek("Cookie")) == 0 {
		return nonEmpty{params{ctx}}
	}
	pr := readPrefs(ctx)
	return withPrefs{params{ctx}, &pr}
}

// answerHeaders says who answered and how; for a bang it answers with its
// redirect and reports true. A bang's redirect back to searxgate itself
// (selfRedirect) is not passed on: it is answered 502, naming why.
func (s *Server) answerHeaders(ctx *fasthttp.RequestCtx, req proxy.Request, res *proxy.Response) bool {
	h := &ctx.Response.Header
	h.Set(HeaderInstance, res.Instance)
	h.Set(HeaderAttempts, strconv.Itoa(res.Attempts))
	if res.Redirect != "" && (req.Format == proxy.FormatHTML || req.Format == proxy.FormatRSS || res.Soft == string(detect.ExternalBang)) {
		// A bang: SearXNG redirects before it looks at the format, and so
		// does searxgate. Feeling lucky redirects the HTML page and the
		// RSS feed; JSON and CSV get its results.
		if s.selfRedirect(ctx, res.Redirect) {
			msg := "the instance's answer to this bang redirects back to searxgate itself; such a redirect is not passed on"
			s.refusals.log(s.log, "self_redirect", fasthttp.StatusBadGateway, 0)
			s.refuse(ctx, req, fasthttp.StatusBadGateway, msg, map[string]any{"error": msg, "instance": res.Instance}, 0)
			return true
		}
		redirect(ctx, res.Redirect)
		return true
	}
	if res.Fanout != "" {
		h.Set(HeaderFanout, res.Fanout)
	}
	if thin := res.Thin(); thin != "" {
		h.Set(HeaderThin, headerSafe(thin))
	}
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
	return false
}

// feelingLucky sends the browser to the first result of a feeling-lucky
// search ("!! words"), as SearXNG does, also when the instance asked
// answered with results (JSON); it reports whether it did. A first result
// that is searxgate itself (selfRedirect) is not redirected to: the
// results page is served instead.
func (s *Server) feelingLucky(ctx *fasthttp.RequestCtx, req proxy.Request, page *results.Page) bool {
	if why, _ := req.Syntax.Bang(); why != detect.FeelingLucky {
		return false
	}
	loc := firstLink(page)
	if loc != "" && s.selfRedirect(ctx, loc) {
		loc = ""
	}
	if loc != "" {
		redirect(ctx, loc)
	}
	return loc != ""
}

// nonEmpty is a request's parameters with the empty ones absent.
type nonEmpty struct{ params }

func (n nonEmpty) Get(name string) (string, bool) {
	v, ok := n.params.Get(name)
	return v, ok && v != ""
}

// redirect answers 302 to loc, with the short page Werkzeug writes for
// clients that do not follow redirects. loc is an absolute http(s) URL
// (detect checked it).
func redirect(ctx *fasthttp.RequestCtx, loc string) {
	redirectWith(ctx, fasthttp.StatusFound, loc)
}

// searchRedirect answers "/" with a query as SearXNG's index does: 308 to
// /search with the request's own query string (a POST's form is sent
// again by the client: 308 keeps the method and the body).
func (s *Server) searchRedirect(ctx *fasthttp.RequestCtx) {
	loc := "/search"
	if s.cfg.PublicURL != "" {
		if u, err := url.Parse(s.cfg.PublicURL); err == nil {
			loc = strings.TrimSuffix(u.Path, "/") + "/search"
		}
	}
	if qs := ctx.QueryArgs().QueryString(); len(qs) > 0 {
		loc += "?" + string(qs)
	}
	redirectWith(ctx, fasthttp.StatusPermanentRedirect, loc)
}

// redirectWith answers status to loc with Werkzeug's short page.
func redirectWith(ctx *fasthttp.RequestCtx, status int, loc string) {
	ctx.Response.Header.Set("Location", loc)
	ctx.SetContentType("text/html; charset=utf-8")
	ctx.SetStatusCode(status)
	e := html.EscapeString(loc)
	ctx.SetBodyString(`<!doctype html>
<html lang=en>
<title>Redirecting...</title>
<h1>Redirecting...</h1>
<p>You should be redirected automatically to the target URL: <a href="` + e + `">` + e + `</a>. If not, click the link.
`)
}

// firstLink is the first result's URL when it is an absolute http(s) URL
// a browser may be sent to, else "".
func firstLink(r *results.Page) string {
	if r == nil || len(r.Results) == 0 {
		return ""
	}
	u, err := url.Parse(r.Results[0].URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return ""
	}
	return u.String()
}

// classicKeys are the keys of SearXNG's JSON answer, each as it starts
// in what results.Page.AppendJSON writes.
var classicKeys = [][]byte{
	[]byte(`{"query":`), []byte(`,"number_of_results":`), []byte(`,"results":[`), []byte(`,"answers":[`),
	[]byte(`,"corrections":[`), []byte(`,"infoboxes":[`), []byte(`,"suggestions":[`), []byte(`,"unresponsive_engines":[`),
}

// maxServedJSON is the largest answer's JSON served as it is: what detect's
// bounds let through, with room to spare.
const maxServedJSON = 2 * results.MaxAnswerBytes

// servedJSON is the answer as SearXNG writes it in shape, every key
// present with a list (empty when there is nothing): the proxy's JSON as
// it is when it is already so, or less its number_of_results for the
// Current shape; rewritten from its results otherwise (answers kept in
// the other shape, an answer kept in another form, a key missing or null).
func servedJSON(res *proxy.Response, shape results.Shape) ([]byte, error) {
	// The proxy writes every answer with results' AppendJSON (the Full
	// shape): "query" first, "unresponsive_engines" last, answers as
	// objects. Those two ends are looked at, and the answers read from
	// the tail (a cache hit must cost little, not a decode); anything else,
	// such as a newer SearXNG's shape, is written again.
	// (A key's quotes inside a string are escaped, so the first
	// `,"results":[` is the key, right after the query's.)
	// An answer larger than the bounds allow (kept by an older searxgate,
	// or a shared cache's) is read again, and so bounded (results.MaxResults).
	js := res.JSON
	head := bytes.Index(js, classicKeys[2])
	count := bytes.Index(js, classicKeys[1])
	if head > 0 && len(js) <= maxServedJSON && bytes.HasPrefix(js, classicKeys[0]) &&
		count > 0 && count < head && bytes.LastIndex(js, classicKeys[len(classicKeys)-1]) > head {
		if start, end, ok := results.AnswersSpan(js); ok {
			if out, ok := reshaped(js, count, head, start, end, shape); ok {
				return out, nil
			}
		}
	}
	r, err := res.Results()
	if err != nil {
		return nil, err
	}
	return r.AppendJSONAs(make([]byte, 0, len(res.JSON)+128), shape), nil
}

// reshaped is a kept answer js in shape without a decode of its results,
// when its answers (js[start:end]) allow: as it is when they are already
// in the shape; in the Classic shape, with answer objects made strings;
// in the Current shape, less its number_of_results (js[count:head]).
func reshaped(js []byte, count, head, start, end int, shape results.Shape) ([]byte, bool) {
	answers := js[start:end]
	none := string(answers) == "[]"
	objects := bytes.HasPrefix(answers, []byte("[{"))
	switch {
	case shape == results.Classic && (none || bytes.HasPrefix(answers, []byte(`["`))):
		return js, true
	case shape == results.Classic && objects:
		texts, err := results.ClassicAnswersJSON(answers)
		if err != nil {
			return nil, false
		}
		out := make([]byte, 0, len(js))
		return append(append(append(out, js[:start]...), texts...), js[end:]...), true
	case shape == results.Current && (none || objects):
		out := make([]byte, 0, len(js))
		return append(append(out, js[:count]...), js[head:]...), true
	}
	return nil, false
}

// formatEnabled reports whether the operator serves format (all four when
// Config.Formats is empty).
func (s *Server) formatEnabled(format string) bool {
	return len(s.cfg.Formats) == 0 || slices.Contains(s.cfg.Formats, format)
}

// werkzeugForbidden is the page SearXNG (Werkzeug) answers a disabled
// format with, byte for byte (fixture a-search-rss-disabled.txt).
const werkzeugForbidden = "<!doctype html>\n<html lang=en>\n<title>403 Forbidden</title>\n<h1>Forbidden</h1>\n" +
	"<p>You don&#39;t have the permission to access the requested resource. " +
	"It is either read-protected or not readable by the server.</p>\n"

// forbidden answers a disabled format as SearXNG does.
func forbidden(ctx *fasthttp.RequestCtx) {
	ctx.SetStatusCode(fasthttp.StatusForbidden)
	ctx.SetContentType("text/html; charset=utf-8")
	ctx.SetBodyString(werkzeugForbidden)
}

// client names who asked, for the per-client admission: Config.Client's
// answer, else the peer's client key (client.FromRequest without trusted
// proxies).
func (s *Server) client(ctx *fasthttp.RequestCtx) string {
	if s.cfg.Client != nil {
		if c := s.cfg.Client(ctx); c != "" {
			return c
		}
	}
	return client.FromRequest(ctx, nil)
}

// badRequest answers a parameter SearXNG would refuse, in SearXNG's forms.
func (s *Server) badRequest(ctx *fasthttp.RequestCtx, req proxy.Request, err error) {
	switch {
	case errors.Is(err, proxy.ErrNoQuery) && req.Format == proxy.FormatHTML:
		s.index(ctx)
		return
	case errors.Is(err, proxy.ErrBlankQuery):
		s.blankQuery(ctx, req)
		return
	}
	msg := err.Error()
	switch req.Format {
	case proxy.FormatJSON:
		writeJSON(ctx, fasthttp.StatusBadRequest, map[string]any{"error": msg})
	case proxy.FormatCSV:
		csvError(ctx, fasthttp.StatusBadRequest)
	case proxy.FormatRSS:
		s.rssError(ctx, fasthttp.StatusBadRequest, req, msg)
	default:
		s.errorPage(ctx, fasthttp.StatusBadRequest, req, msg, 0)
	}
}

// blankQuery answers a q of white space as SearXNG does, 200 with
// nothing found (it searches an empty query), without asking an instance:
// the empty answer in JSON, CSV and RSS, the front page in HTML.
func (s *Server) blankQuery(ctx *fasthttp.RequestCtx, req proxy.Request) {
	empty := &results.Page{}
	switch req.Format {
	case proxy.FormatJSON:
		ctx.SetContentType(formatContentType(proxy.FormatJSON))
		ctx.SetBody(empty.AppendJSONAs(nil, s.cfg.JSONShape))
	case proxy.FormatCSV:
		writeCSV(ctx, req, empty)
	case proxy.FormatRSS:
		s.writeRSS(ctx, req, empty)
	default:
		s.index(ctx)
	}
}

// retryAfterSeconds is d in whole seconds, rounded up, at least 1: what a
// Retry-After header says.
func retryAfterSeconds(d time.Duration) int64 {
	s := int64((d + time.Second - 1) / time.Second)
	return max(s, 1)
}

// noAnswer answers a search that got no answer, in the format asked: 429
// when the client asked more than its share, 503 with what was tried and
// why each attempt failed otherwise. Retry-After is sent only when the
// proxy knows when to come back: never a made-up constant.
func (s *Server) noAnswer(ctx *fasthttp.RequestCtx, req proxy.Request, err error) {
	var le *proxy.LimitedError
	if errors.As(err, &le) {
		secs := retryAfterSeconds(le.RetryAfter)
		ctx.Response.Header.Set("Retry-After", strconv.FormatInt(secs, 10))
		msg := "too many searches from this client (its own limit, --client-rate): retry in " + strconv.FormatInt(secs, 10) + " s"
		s.refusals.log(s.log, "client_limited", fasthttp.StatusTooManyRequests, secs)
		s.refuse(ctx, req, fasthttp.StatusTooManyRequests, msg, map[string]any{"error": msg}, secs)
		return
	}
	body := map[string]any{"error": "no instance answered"}
	var secs int64
	var causes []string
	why := "error"
	var na *proxy.NoAnswerError
	if errors.As(err, &na) {
		why = string(na.Why)
		if na.RetryAfter > 0 {
			secs = retryAfterSeconds(na.RetryAfter)
			ctx.Response.Header.Set("Retry-After", strconv.FormatInt(secs, 10))
		}
		causes = na.Explain()
		msg := "no instance answered: " + explainWhy(na.Why)
		if len(causes) > 0 {
			msg += ". " + strings.Join(causes, ". ")
		}
		if secs > 0 {
			msg += "; retry in " + strconv.FormatInt(secs, 10) + " s"
		}
		body["error"] = msg
		tried := na.Tried
		if tried == nil {
			tried = []proxy.Attempt{}
		}
		body["tried"] = tried
		if len(na.Waiting) > 0 {
			body["waiting"] = na.Waiting
		}
		if len(causes) > 0 {
			body["causes"] = causes
		}
	} else if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		body["error"] = "search cancelled"
		body["tried"] = []proxy.Attempt{}
	} else {
		s.log.Error("search failed", "err", err)
		body["tried"] = []proxy.Attempt{}
	}
	s.refusals.log(s.log, why, fasthttp.StatusServiceUnavailable, secs)
	s.refuse(ctx, req, fasthttp.StatusServiceUnavailable, body["error"].(string), body, secs, causes...)
}

// refusalLog logs the searches searxgate refuses (429, 503), at most one
// line a second: the first of each second, with how many more were
// refused since the last line. Never the query text.
type refusalLog struct {
	now  func() time.Time
	gate logevery.Gate
}

func (r *refusalLog) log(l *slog.Logger, why string, status int, retrySecs int64) {
	if more, ok := r.gate.Pass(r.now(), time.Second); ok {
		l.Warn("search refused", "status", status, "why", why, "retry_after_s", retrySecs, "more_refused_since_last_line", more)
	}
}

// refuse answers status in the format asked: jsonBody as JSON, the error
// page for html, and for csv and rss what SearXNG's index_error writes
// (an empty CSV; a feed with one "Error" item saying msg).
func (s *Server) refuse(ctx *fasthttp.RequestCtx, req proxy.Request, status int, msg string, jsonBody map[string]any, retrySecs int64, causes ...string) {
	switch req.Format {
	case proxy.FormatJSON:
		writeJSON(ctx, status, jsonBody)
	case proxy.FormatCSV:
		csvError(ctx, status)
		ctx.Response.Header.Set(HeaderError, msg)
	case proxy.FormatRSS:
		s.rssError(ctx, status, req, msg)
	default:
		s.errorPage(ctx, status, req, msg, retrySecs, causes...)
	}
}

// stopWords say each proxy.Stop to a person or an API client: the one
// table web words them in (a test holds it to proxy.Stops).
var stopWords = map[proxy.Stop]string{
	proxy.StopDeadline:     "the search deadline passed",
	proxy.StopNoInstance:   "no instance can be searched: none is in the pool, or every one is disabled, already tried or checks for browsers",
	proxy.StopNoSlot:       "every instance that could answer is cooling down, over its politeness budget or busy until after this search's deadline",
	proxy.StopShare:        "your share of the public instances' budget is spent for now: the rest of each window is kept for other clients",
	proxy.StopAttempts:     "every instance asked refused or failed",
	proxy.StopNetwork:      "no instance's name resolves: DNS fails on the machine searxgate runs on (no network?); no instance was blamed",
	proxy.StopBudget:       "your share of the budget for retries and second opinions is spent",
	proxy.StopShutdown:     "searxgate is shutting down",
	proxy.StopQueueFull:    "too many searches are waiting for an instance",
	proxy.StopLeaderFailed: "the identical search this one joined ended without an answer",
	proxy.StopQueryTimeout: "the query's timeout syntax (<N) asks SearXNG to wait longer than searxgate's --deadline; no instance was blamed",
	proxy.StopQuery:        "this query makes SearXNG fail the same way on every instance asked (a server error or a refused request); no instance was blamed",
}

func explainWhy(why proxy.Stop) string {
	if w, ok := stopWords[why]; ok {
		return w
	}
	return string(why)
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
func writeCSV(ctx *fasthttp.RequestCtx, req proxy.Request, r *results.Page) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.UseCRLF = true
	_ = w.Write([]string{"title", "url", "content", "host", "engine", "score", "type"})
	for _, x := range r.Results {
		host := ""
		if len(x.ParsedURL) > 1 {
			host = x.ParsedURL[1]
		}
		_ = w.Write(csvRow(x.Title, x.URL, x.Content, host, x.Engine, pyFloat(x.Score), "result"))
	}
	// An answer's row has its text as title, its link, host and engine
	// (SearXNG's CSV has only the link, host and engine of an answer
	// object, and no type).
	for i := range r.Answers {
		a := &r.Answers[i]
		if t := a.Text(); t != "" {
			_ = w.Write(csvRow(t, a.URL, "", a.Host(), a.Engine, "", "answer"))
		}
	}
	for _, row := range []struct {
		kind string
		list []string
	}{{"suggestion", r.Suggestions}, {"correction", r.Corrections}} {
		for _, a := range row.list {
			_ = w.Write(csvRow(a, "", "", "", "", "", row.kind))
		}
	}
	w.Flush()
	ctx.SetContentType(formatContentType(proxy.FormatCSV))
	ctx.Response.Header.Set("Content-Disposition", "attachment;Filename=searx_-_"+sanitizeFilename(req.Query)+".csv")
	ctx.SetBody(buf.Bytes())
}

// csvRow is one CSV row, every cell defused against formula injection.
func csvRow(cells ...string) []string {
	for i, c := range cells {
		cells[i] = csvCell(c)
	}
	return cells
}

// csvCell defuses a cell a spreadsheet would run as a formula (OWASP's
// CSV injection advice): one starting with =, +, -, @, a tab or a carriage
// return gets a leading single quote, which spreadsheets show as text.
func csvCell(c string) string {
	if c != "" {
		switch c[0] {
		case '=', '+', '-', '@', '\t', '\r':
			return "'" + c
		}
	}
	return c
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
// It is written as SearXNG 2024 writes it: totalResults and itemsPerPage
// are the answer's number_of_results as it gave it (0 when its engines
// gave no count), and the answers, corrections and suggestions follow the
// results as items of their type.
func (s *Server) writeRSS(ctx *fasthttp.RequestCtx, req proxy.Request, r *results.Page) {
	s.rss(ctx, req, r, "")
}

// rssError answers status with SearXNG's feed for an error: no results
// and one "Error" item with msg.
func (s *Server) rssError(ctx *fasthttp.RequestCtx, status int, req proxy.Request, msg string) {
	s.rss(ctx, req, &results.Page{}, msg)
	ctx.SetStatusCode(status)
}

// csvError answers status with SearXNG's CSV for an error: an empty
// attachment named searx.csv.
func csvError(ctx *fasthttp.RequestCtx, status int) {
	ctx.SetStatusCode(status)
	ctx.SetContentType(formatContentType(proxy.FormatCSV))
	ctx.Response.Header.Set("Content-Disposition", "attachment;Filename=searx.csv")
	ctx.ResetBody()
}

func (s *Server) rss(ctx *fasthttp.RequestCtx, req proxy.Request, r *results.Page, errMsg string) {
	var b bytes.Buffer
	base := s.baseURL(ctx)
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<rss version="2.0" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" xmlns:atom="http://www.w3.org/2005/Atom">` + "\n  <channel>\n")
	n := strconv.FormatInt(r.NumberOfResults, 10)
	b.WriteString("    <title>SearXNG search: " + xmlEscape(req.Query) + "</title>\n")
	b.WriteString("    <link>" + xmlEscape(base+"search?q="+urlQueryEscape(req.Query)) + "</link>\n")
	b.WriteString(`    <description>Search results for "` + xmlEscape(req.Query) + `" - searxgate</description>` + "\n")
	b.WriteString("    <opensearch:totalResults>" + n + "</opensearch:totalResults>\n")
	b.WriteString("    <opensearch:startIndex>1</opensearch:startIndex>\n")
	b.WriteString("    <opensearch:itemsPerPage>" + n + "</opensearch:itemsPerPage>\n")
	b.WriteString(`    <atom:link rel="search" type="application/opensearchdescription+xml" href="` + xmlEscape(base+"opensearch.xml") + `"/>` + "\n")
	b.WriteString(`    <opensearch:Query role="request" searchTerms="` + xmlEscape(req.Query) + `" startPage="1" />` + "\n")
	if errMsg != "" {
		b.WriteString("    <item>\n      <title>Error</title>\n      <description>" + xmlEscape(errMsg) + "</description>\n    </item>\n")
	}
	for _, x := range r.Results {
		b.WriteString("    <item>\n      <title>" + xmlEscape(x.Title) + "</title>\n      <type>result</type>\n")
		b.WriteString("      <link>" + xmlEscape(x.URL) + "</link>\n")
		b.WriteString("      <description>" + xmlEscape(x.Content) + "</description>\n")
		if t, ok := parseDate(x.PublishedDate); ok {
			b.WriteString("      <pubDate>" + t.Format(time.RFC1123Z) + "</pubDate>\n")
		}
		b.WriteString("    </item>\n")
	}
	for i := range r.Answers {
		a := &r.Answers[i]
		if t := a.Text(); t != "" {
			b.WriteString("    <item>\n      <title>" + xmlEscape(t) + "</title>\n      <type>answer</type>\n")
			if a.URL != "" {
				b.WriteString("      <link>" + xmlEscape(a.URL) + "</link>\n")
			}
			b.WriteString("    </item>\n")
		}
	}
	for _, row := range []struct {
		kind string
		list []string
	}{{"correction", r.Corrections}, {"suggestion", r.Suggestions}} {
		for _, a := range row.list {
			b.WriteString("    <item>\n      <title>" + xmlEscape(a) + "</title>\n      <type>" + row.kind + "</type>\n    </item>\n")
		}
	}
	b.WriteString("  </channel>\n</rss>\n")
	ctx.SetContentType(formatContentType(proxy.FormatRSS))
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
