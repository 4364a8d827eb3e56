package api

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/results"
)

// tavilyQuery is one Tavily search as searxgate reads it.
type tavilyQuery struct {
	search
	text       string // the query as the client gave it
	answer     bool
	raw        string // "", "markdown" or "text"
	images     bool
	imageText  bool      // include_image_descriptions: images as {url, description}
	start, end time.Time // published between, when given (zero: open)
}

// tavilyFail answers f in Tavily's shape: {"detail": {"error": "..."}}.
func tavilyFail(ctx *fasthttp.RequestCtx, f failure) {
	retryAfter(ctx, f)
	writeJSON(ctx, f.tavily, map[string]any{"detail": map[string]string{"error": f.text}})
}

// tavilyAdmit checks the method and the key (Authorization: Bearer, or
// the body's api_key as older clients send it) and reads the body.
func (s *Server) tavilyAdmit(ctx *fasthttp.RequestCtx) (fields, string, bool) {
	if !ctx.IsPost() {
		ctx.Response.Header.Set("Allow", "POST")
		writeJSON(ctx, fasthttp.StatusMethodNotAllowed, map[string]any{"detail": map[string]string{"error": "Method Not Allowed: send a POST"}})
		return nil, "", false
	}
	f, err := readFields(ctx.PostBody())
	key := bearer(&ctx.Request.Header)
	if key == "" && err == nil {
		key, _ = f.str("api_key")
	}
	client, d := s.admit(ctx, key)
	if d.status != 0 {
		tavilyFail(ctx, denied(d))
		return nil, "", false
	}
	if err != nil {
		tavilyFail(ctx, badRequest(err.Error()))
		return nil, "", false
	}
	return f, client, true
}

func (s *Server) tavilySearch(ctx *fasthttp.RequestCtx) {
	start := s.cfg.Now()
	f, client, ok := s.tavilyAdmit(ctx)
	if !ok {
		return
	}
	q, err := s.parseTavily(f, start)
	if err != nil {
		tavilyFail(ctx, badRequest(err.Error()))
		return
	}
	q.req.Client = client
	rctx, cancel := requestContext()
	defer cancel()
	images := s.tavilyImages(rctx, q)
	g, err := s.run(rctx, q.search)
	if err != nil {
		tavilyFail(ctx, searchFailure(err))
		return
	}
	out := s.tavilyAnswer(rctx, q, g)
	out.Images = <-images
	out.ResponseTime = elapsedSeconds(s.cfg.Now(), start)
	writeJSON(ctx, fasthttp.StatusOK, out)
}

// parseTavily reads a Tavily search body. Errors are the client's (400).
func (s *Server) parseTavily(f fields, now time.Time) (q tavilyQuery, err error) {
	text, err := f.str("query")
	if err != nil {
		return q, err
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return q, fmt.Errorf("query is missing")
	}
	if len(text) > proxy.MaxQueryLen {
		return q, fmt.Errorf("query is longer than %d bytes", proxy.MaxQueryLen)
	}
	q.text = text
	q.req = proxy.Request{Format: proxy.FormatJSON, PageNo: 1}
	if q.want, err = f.integer("max_results", 5, 0, 20); err != nil {
		return q, err
	}
	depth, err := f.oneOf("search_depth", "basic", "advanced", "fast", "ultra-fast")
	if err != nil {
		return q, err
	}
	if depth == "advanced" {
		q.req.Fanout = s.cfg.Fanout
	}
	if err := tavilyTopic(f, &q.req); err != nil {
		return q, err
	}
	if err := tavilyTime(f, &q, now); err != nil {
		return q, err
	}
	text, err = tavilyDomains(f, &q, text)
	if err != nil {
		return q, err
	}
	q.req.Query = text
	if err := tavilyCountry(f, &q.req); err != nil {
		return q, err
	}
	if err := tavilyFlags(f, &q); err != nil {
		return q, err
	}
	if _, err := f.integer("chunks_per_source", 3, 1, 3); err != nil {
		return q, err
	}
	return q, nil
}

// tavilyTopic: general and finance search SearXNG's general category,
// news its news one.
func tavilyTopic(f fields, r *proxy.Request) error {
	topic, err := f.oneOf("topic", "general", "news", "finance")
	if err != nil {
		return err
	}
	if topic == "news" {
		r.Categories = []string{"news"}
	} else {
		r.Categories = []string{"general"}
	}
	return nil
}

// dateRE is Tavily's date format.
var dateRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// tavilyTime maps time_range, days and start_date/end_date to SearXNG's
// time_range (the narrowest that holds what was asked); dated results
// outside start_date..end_date are filtered after.
func tavilyTime(f fields, q *tavilyQuery, now time.Time) error {
	tr, err := f.oneOf("time_range", "day", "week", "month", "year", "d", "w", "m", "y")
	if err != nil {
		return err
	}
	q.req.TimeRange = map[string]string{"d": "day", "w": "week", "m": "month", "y": "year"}[tr]
	if q.req.TimeRange == "" {
		q.req.TimeRange = tr
	}
	days, err := f.integer("days", 0, 0, 100_000)
	if err != nil {
		return err
	}
	if q.req.TimeRange == "" && days > 0 {
		q.req.TimeRange = rangeFor(time.Duration(days) * 24 * time.Hour)
	}
	for _, d := range []struct {
		name string
		t    *time.Time
	}{{"start_date", &q.start}, {"end_date", &q.end}} {
		s, err := f.str(d.name)
		if err != nil {
			return err
		}
		if s == "" {
			continue
		}
		t, err := time.Parse(time.DateOnly, s)
		if err != nil || !dateRE.MatchString(s) {
			return fmt.Errorf("%s must be a date as YYYY-MM-DD", d.name)
		}
		*d.t = t
	}
	if !q.end.IsZero() {
		q.end = q.end.Add(24 * time.Hour) // the whole end day
	}
	if q.req.TimeRange == "" && !q.start.IsZero() {
		q.req.TimeRange = rangeFor(now.Sub(q.start))
	}
	return nil
}

// rangeFor is SearXNG's narrowest time_range that covers d back from now
// ("" = none: all time).
func rangeFor(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d <= day:
		return "day"
	case d <= 7*day:
		return "week"
	case d <= 31*day:
		return "month"
	case d <= 366*day:
		return "year"
	}
	return ""
}

// tavilyDomains reads the domain filters: one domain to keep is asked of
// the instances as "site:" (engines that know it search only there), and
// every result is filtered after.
func tavilyDomains(f fields, q *tavilyQuery, text string) (string, error) {
	include, err := f.strings("include_domains", 300)
	if err != nil {
		return "", err
	}
	exclude, err := f.strings("exclude_domains", 150)
	if err != nil {
		return "", err
	}
	if len(include) == 1 && strings.TrimSpace(include[0]) != "" && !strings.ContainsAny(include[0], " \t") {
		text += " site:" + strings.TrimSpace(include[0])
	}
	start, end := &q.start, &q.end
	q.keep = func(r *results.Result) bool {
		host := hostOf(r.URL)
		if (len(include) > 0 && !inDomains(host, include)) || inDomains(host, exclude) {
			return false
		}
		return inDates(r.PublishedDate, *start, *end)
	}
	return text, nil
}

// inDates reports whether a result published at date (as SearXNG wrote
// it) may be kept between start and end; an undated result is kept (its
// date is not known to be outside).
func inDates(date string, start, end time.Time) bool {
	if date == "" || (start.IsZero() && end.IsZero()) {
		return true
	}
	t, ok := parseDate(date)
	if !ok {
		return true
	}
	return (start.IsZero() || !t.Before(start)) && (end.IsZero() || t.Before(end))
}

// parseDate reads a date as SearXNG writes it.
func parseDate(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04:05-07:00", "2006-01-02 15:04:05", time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// countryLanguage maps Tavily's country names to SearXNG's language-region
// codes, for the countries with one main language; another country is
// searched without a language.
var countryLanguage = map[string]string{
	"united states": "en-US", "united kingdom": "en-GB", "canada": "en-CA", "australia": "en-AU", "ireland": "en-IE",
	"new zealand": "en-NZ", "india": "en-IN", "germany": "de-DE", "austria": "de-AT", "france": "fr-FR", "spain": "es-ES",
	"mexico": "es-MX", "argentina": "es-AR", "italy": "it-IT", "netherlands": "nl-NL", "portugal": "pt-PT", "brazil": "pt-BR",
	"japan": "ja-JP", "south korea": "ko-KR", "china": "zh-CN", "taiwan": "zh-TW", "poland": "pl-PL", "sweden": "sv-SE",
	"norway": "nb-NO", "denmark": "da-DK", "finland": "fi-FI", "russia": "ru-RU", "ukraine": "uk-UA", "turkey": "tr-TR",
	"greece": "el-GR", "czech republic": "cs-CZ", "hungary": "hu-HU", "romania": "ro-RO", "israel": "he-IL",
	"indonesia": "id-ID", "vietnam": "vi-VN", "thailand": "th-TH",
}

func tavilyCountry(f fields, r *proxy.Request) error {
	c, err := f.str("country")
	if err != nil {
		return err
	}
	r.Language = countryLanguage[strings.ToLower(strings.TrimSpace(c))]
	return nil
}

// tavilyFlags reads include_answer, include_raw_content and
// include_images.
func tavilyFlags(f fields, q *tavilyQuery) error {
	answer, err := f.boolOrWord("include_answer", "basic", "advanced")
	if err != nil {
		return err
	}
	q.answer = answer != ""
	if q.raw, err = f.boolOrWord("include_raw_content", "markdown", "text"); err != nil {
		return err
	}
	if q.images, err = f.boolean("include_images"); err != nil {
		return err
	}
	q.imageText, err = f.boolean("include_image_descriptions")
	return err
}

// tavilyResult is one result as Tavily writes it.
type tavilyResult struct {
	Title         string  `json:"title"`
	URL           string  `json:"url"`
	Content       string  `json:"content"`
	Score         float64 `json:"score"`
	RawContent    *string `json:"raw_content"`
	PublishedDate string  `json:"published_date,omitempty"`
}

// tavilyResponse is Tavily's search answer.
type tavilyResponse struct {
	Query        string         `json:"query"`
	FollowUp     []string       `json:"follow_up_questions"`
	Answer       *string        `json:"answer"`
	Images       []any          `json:"images"`
	Results      []tavilyResult `json:"results"`
	ResponseTime float64        `json:"response_time"`
}

// tavilyAnswer writes what the search found as Tavily does, reading the
// pages when raw content was asked (images and the time are the caller's).
func (s *Server) tavilyAnswer(ctx context.Context, q tavilyQuery, g gathered) tavilyResponse {
	out := tavilyResponse{Query: q.text, Images: []any{}, Results: make([]tavilyResult, 0, len(g.results))}
	top := 0.0
	for _, r := range g.results {
		top = max(top, r.Score)
	}
	for _, r := range g.results {
		score := 0.0
		if top > 0 {
			score = float64(int(r.Score/top*1000)) / 1000
		}
		out.Results = append(out.Results, tavilyResult{Title: r.Title, URL: r.URL, Content: r.Content, Score: score,
			PublishedDate: r.PublishedDate})
	}
	if q.answer {
		out.Answer = pageAnswer(g.first)
	}
	if q.raw != "" && s.cfg.Read != nil && len(g.results) > 0 {
		urls := make([]string, len(g.results))
		for i, r := range g.results {
			urls[i] = r.URL
		}
		pages, _ := s.readAll(ctx, urls, q.req.Client)
		for i, p := range pages {
			if p != nil {
				text := rawContent(p.Content, q.raw)
				out.Results[i].RawContent = &text
			}
		}
	}
	return out
}

// maxImages is the most images a Tavily answer lists.
const maxImages = 10

// tavilyImages is SearXNG's images category asked for the same query,
// at the same time as the search: what Tavily's include_images gives
// (query-related images), as URLs, or as {url, description} (the image
// result's title) with include_image_descriptions. A failed image search
// leaves the list empty; the search's answer stands.
func (s *Server) tavilyImages(ctx context.Context, q tavilyQuery) <-chan []any {
	out := make(chan []any, 1)
	if !q.images {
		out <- []any{}
		return out
	}
	req := q.req
	req.Query, req.Categories, req.Fanout = q.text, []string{"images"}, 0
	go func() {
		images := []any{}
		g, err := s.run(ctx, search{req: req, want: maxImages, keep: func(r *results.Result) bool {
			return strings.HasPrefix(r.ImgSrc, "https://") || strings.HasPrefix(r.ImgSrc, "http://")
		}})
		if err == nil {
			for _, r := range g.results {
				if q.imageText {
					images = append(images, map[string]string{"url": r.ImgSrc, "description": r.Title})
				} else {
					images = append(images, r.ImgSrc)
				}
			}
		}
		out <- images
	}()
	return out
}

// pageAnswer is what the instances answered outright: SearXNG's first
// answer, else the first infobox's text; nil when they gave neither.
func pageAnswer(p *results.Page) *string {
	if p == nil {
		return nil
	}
	for _, a := range p.Answers {
		if a = strings.TrimSpace(a); a != "" {
			return &a
		}
	}
	for _, ib := range p.Infoboxes {
		text := strings.TrimSpace(ib.Content)
		if text == "" {
			continue
		}
		if ib.Infobox != "" {
			text = ib.Infobox + ": " + text
		}
		return &text
	}
	return nil
}
