package api

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/results"
)

// braveFail answers f in Brave's error shape.
func braveFail(ctx *fasthttp.RequestCtx, f failure, now time.Time) {
	retryAfter(ctx, f)
	writeJSON(ctx, f.brave, map[string]any{
		"type": "ErrorResponse",
		"error": map[string]any{
			"id": "searxgate", "status": f.brave, "code": f.braveCode, "detail": f.text,
		},
		"time": now.Unix(),
	})
}

// braveSearch is Brave's web search: GET with q, count, offset,
// freshness, safesearch, country and search_lang, the key in
// X-Subscription-Token.
func (s *Server) braveSearch(ctx *fasthttp.RequestCtx) {
	now := s.cfg.Now()
	if !ctx.IsGet() && !ctx.IsHead() {
		ctx.Response.Header.Set("Allow", "GET")
		braveFail(ctx, failure{brave: fasthttp.StatusMethodNotAllowed, braveCode: "METHOD_NOT_ALLOWED", text: "send a GET"}, now)
		return
	}
	client, d := s.admit(ctx, strings.TrimSpace(string(ctx.Request.Header.Peek("X-Subscription-Token"))))
	if d.status != 0 {
		braveFail(ctx, denied(d), now)
		return
	}
	q, err := parseBrave(ctx.QueryArgs(), now)
	if err != nil {
		braveFail(ctx, badRequest(err.Error()), now)
		return
	}
	q.req.Client = client
	rctx, cancel := requestContext()
	defer cancel()
	g, err := s.run(rctx, q.search)
	if err != nil {
		braveFail(ctx, searchFailure(err), s.cfg.Now())
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, braveAnswer(q.text, g))
}

// braveQuery is one Brave search as searxgate reads it.
type braveQuery struct {
	search
	text string
}

// braveFreshness is Brave's freshness as SearXNG's time_range.
var braveFreshness = map[string]string{"pd": "day", "pw": "week", "pm": "month", "py": "year"}

// braveSafe is Brave's safesearch as SearXNG's.
var braveSafe = map[string]string{"off": "0", "moderate": "1", "strict": "2"}

// freshRange is Brave's "YYYY-MM-DDtoYYYY-MM-DD".
var freshRange = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2})to(\d{4}-\d{2}-\d{2})$`)

// twoLetters is a language or country code as Brave takes them.
var twoLetters = regexp.MustCompile(`^[a-zA-Z]{2}$`)

// parseBrave reads Brave's parameters; errors are Brave's 422.
func parseBrave(args *fasthttp.Args, now time.Time) (q braveQuery, err error) {
	q.text = strings.TrimSpace(string(args.Peek("q")))
	if q.text == "" {
		return q, fmt.Errorf("q is missing")
	}
	if len(q.text) > proxy.MaxQueryLen {
		return q, fmt.Errorf("q is longer than %d bytes", proxy.MaxQueryLen)
	}
	q.req = proxy.Request{Query: q.text, Format: proxy.FormatJSON, PageNo: 1}
	if q.want, err = intArg(args, "count", 20, 1, 20); err != nil {
		return q, err
	}
	offset, err := intArg(args, "offset", 0, 0, 9)
	if err != nil {
		return q, err
	}
	q.skip = offset * q.want
	if v := string(args.Peek("safesearch")); v != "" {
		if q.req.SafeSearch = braveSafe[v]; q.req.SafeSearch == "" {
			return q, fmt.Errorf("safesearch must be off, moderate or strict")
		}
	}
	if err := braveTime(string(args.Peek("freshness")), &q, now); err != nil {
		return q, err
	}
	lang, country := string(args.Peek("search_lang")), string(args.Peek("country"))
	for _, v := range []string{lang, country} {
		if v != "" && !twoLetters.MatchString(v) && !(v == "ALL" || v == "all") {
			return q, fmt.Errorf("search_lang and country must be two-letter codes")
		}
	}
	if twoLetters.MatchString(lang) {
		q.req.Language = strings.ToLower(lang)
		if twoLetters.MatchString(country) {
			q.req.Language += "-" + strings.ToUpper(country)
		}
	}
	return q, nil
}

// braveTime maps freshness: pd, pw, pm, py to SearXNG's time_range; a
// date range to the narrowest time_range that holds it, dated results
// outside it filtered after.
func braveTime(v string, q *braveQuery, now time.Time) error {
	if v == "" {
		return nil
	}
	if tr, ok := braveFreshness[v]; ok {
		q.req.TimeRange = tr
		return nil
	}
	m := freshRange.FindStringSubmatch(v)
	if m == nil {
		return fmt.Errorf("freshness must be pd, pw, pm, py or YYYY-MM-DDtoYYYY-MM-DD")
	}
	start, err1 := time.Parse(time.DateOnly, m[1])
	end, err2 := time.Parse(time.DateOnly, m[2])
	if err1 != nil || err2 != nil || end.Before(start) {
		return fmt.Errorf("freshness must be pd, pw, pm, py or YYYY-MM-DDtoYYYY-MM-DD")
	}
	end = end.Add(24 * time.Hour)
	q.req.TimeRange = rangeFor(now.Sub(start))
	q.keep = func(r *results.Result) bool { return inDates(r.PublishedDate, start, end) }
	return nil
}

// intArg reads a whole-number query parameter in [lo, hi].
func intArg(args *fasthttp.Args, name string, def, lo, hi int) (int, error) {
	v := string(args.Peek(name))
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%s must be a whole number between %d and %d", name, lo, hi)
	}
	return n, nil
}

// braveResult is one web result as Brave writes it.
type braveResult struct {
	Type           string       `json:"type"`
	Title          string       `json:"title"`
	URL            string       `json:"url"`
	Description    string       `json:"description"`
	Age            string       `json:"age,omitempty"`
	PageAge        string       `json:"page_age,omitempty"`
	Profile        braveProfile `json:"profile"`
	MetaURL        braveMetaURL `json:"meta_url"`
	Language       string       `json:"language,omitempty"`
	FamilyFriendly bool         `json:"family_friendly"`
	IsSourceLocal  bool         `json:"is_source_local"`
	IsSourceBoth   bool         `json:"is_source_both"`
}

type braveProfile struct {
	Name     string `json:"name"`
	URL      string `json:"url"`
	LongName string `json:"long_name"`
	Img      string `json:"img,omitempty"`
}

type braveMetaURL struct {
	Scheme   string `json:"scheme"`
	Netloc   string `json:"netloc"`
	Hostname string `json:"hostname"`
	Favicon  string `json:"favicon,omitempty"`
	Path     string `json:"path"`
}

// braveAnswer writes what the search found as Brave's web search answer.
func braveAnswer(text string, g gathered) map[string]any {
	rs := make([]braveResult, 0, len(g.results))
	for _, r := range g.results {
		rs = append(rs, braveOne(r))
	}
	return map[string]any{
		"type":  "search",
		"query": map[string]any{"original": text, "more_results_available": g.more},
		"mixed": map[string]any{"type": "mixed", "main": braveMixed(len(rs)), "top": []any{}, "side": []any{}},
		"web":   map[string]any{"type": "search", "results": rs, "family_friendly": true},
	}
}

// braveMixed is the order of the web results in the page, as Brave lists it.
func braveMixed(n int) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = map[string]any{"type": "web", "index": i, "all": false}
	}
	return out
}

// braveOne is one result, its profile and meta_url from its URL, its
// ages from the date SearXNG gave.
func braveOne(r results.Result) braveResult {
	b := braveResult{Type: "search_result", Title: r.Title, URL: r.URL, Description: r.Content, FamilyFriendly: true}
	if u, err := url.Parse(r.URL); err == nil {
		host := u.Hostname()
		site := u.Scheme + "://" + u.Host
		name := strings.TrimPrefix(host, "www.")
		b.Profile = braveProfile{Name: name, URL: site, LongName: name}
		path := u.EscapedPath()
		if path != "" && path != "/" {
			path = " › " + strings.Join(strings.FieldsFunc(path, func(r rune) bool { return r == '/' }), " › ")
		} else {
			path = ""
		}
		b.MetaURL = braveMetaURL{Scheme: u.Scheme, Netloc: u.Host, Hostname: host, Path: path}
	}
	if t, ok := parseDate(r.PublishedDate); ok {
		b.PageAge = t.UTC().Format("2006-01-02T15:04:05")
		b.Age = t.UTC().Format("January 2, 2006")
	}
	return b
}
