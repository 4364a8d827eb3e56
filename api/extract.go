package api

import (
	"errors"
	"regexp"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/reader"
)

// maxExtract is the most URLs one extract may name (Tavily's own limit).
const maxExtract = 20

type extractResult struct {
	URL        string   `json:"url"`
	Title      string   `json:"title,omitempty"`
	RawContent string   `json:"raw_content"`
	Images     []string `json:"images"`
}

type extractFailed struct {
	URL   string `json:"url"`
	Error string `json:"error"`
}

type extractResponse struct {
	Results       []extractResult `json:"results"`
	FailedResults []extractFailed `json:"failed_results"`
	ResponseTime  float64         `json:"response_time"`
}

// tavilyExtract reads the pages asked, at once, through the page reader
// (its address guard, size limits and each site's politeness).
func (s *Server) tavilyExtract(ctx *fasthttp.RequestCtx) {
	start := s.cfg.Now()
	f, client, ok := s.tavilyAdmit(ctx)
	if !ok {
		return
	}
	if s.cfg.Read == nil {
		writeJSON(ctx, fasthttp.StatusNotFound, map[string]any{"detail": map[string]string{"error": "searxgate reads no pages here"}})
		return
	}
	urls, format, err := parseExtract(f)
	if err != nil {
		tavilyFail(ctx, badRequest(err.Error()))
		return
	}
	rctx, cancel := requestContext()
	defer cancel()
	pages, errs := s.readAll(rctx, urls, client)
	out := extractResponse{Results: []extractResult{}, FailedResults: []extractFailed{}}
	limited := 0
	for i, p := range pages {
		if p == nil {
			out.FailedResults = append(out.FailedResults, extractFailed{URL: urls[i], Error: errs[i].Error()})
			if errors.Is(errs[i], reader.ErrLimited) {
				limited++
			}
			continue
		}
		out.Results = append(out.Results, extractResult{URL: urls[i], Title: p.Title, RawContent: rawContent(p.Content, format), Images: []string{}})
	}
	if limited == len(urls) {
		// Not one page for this client now: its limit, as a search's.
		tavilyFail(ctx, searchFailure(errs[0]))
		return
	}
	out.ResponseTime = elapsedSeconds(s.cfg.Now(), start)
	writeJSON(ctx, fasthttp.StatusOK, out)
}

// parseExtract reads an extract body: urls (one or a list), format and
// extract_depth (both depths read the page alike).
func parseExtract(f fields) ([]string, string, error) {
	urls, err := f.strings("urls", maxExtract)
	if err != nil {
		return nil, "", err
	}
	kept := urls[:0]
	for _, u := range urls {
		if u = strings.TrimSpace(u); u != "" {
			kept = append(kept, u)
		}
	}
	if len(kept) == 0 {
		return nil, "", errors.New("urls is missing")
	}
	format, err := f.oneOf("format", "markdown", "text")
	if err != nil {
		return nil, "", err
	}
	if format == "" {
		format = "markdown"
	}
	if _, err := f.oneOf("extract_depth", "basic", "advanced"); err != nil {
		return nil, "", err
	}
	return kept, format, nil
}

// rawContent is a page's Markdown in the format asked: as it is, or as
// plain text ("text": links, images, emphasis and heading marks dropped).
func rawContent(markdown, format string) string {
	if format != "text" {
		return markdown
	}
	s := mdImage.ReplaceAllString(markdown, "$1")
	s = mdLink.ReplaceAllString(s, "$1")
	s = mdHeading.ReplaceAllString(s, "")
	for _, re := range mdEmphasis {
		s = re.ReplaceAllString(s, "$1")
	}
	return s
}

var (
	mdImage   = regexp.MustCompile(`!\[([^\]]*)\]\([^)]*\)`)
	mdLink    = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	mdHeading = regexp.MustCompile(`(?m)^#{1,6}\s+`)
	// Bold, italic and code marks; underscores are left, as in
	// snake_case words.
	mdEmphasis = []*regexp.Regexp{regexp.MustCompile(`\*\*([^*\n]+)\*\*`), regexp.MustCompile(`\*([^*\n]+)\*`), regexp.MustCompile("`([^`\n]+)`")}
)
