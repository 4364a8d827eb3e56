package detect

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"html"
	"slices"
	"strconv"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/searxgate/searxgate/results"
	"github.com/tidwall/gjson"
)

// noDescription is what the current simple theme shows in place of an
// empty content (with class empty_element); the English text is matched
// too for markup that lacks the class.
const noDescription = "This site did not provide any description."

// Compiled selectors of the lookups made once per result. goquery.Single
// stops at the first match; its Filter still keeps every match.
var (
	selURLHeader    = goquery.Single("a.url_header")
	selURLWrapper   = goquery.Single("a.url_wrapper")
	selH3Link       = goquery.Single("h3 a")
	selResultURL    = goquery.Single(".result-url a")
	selLink         = goquery.Single("a")
	selH3           = goquery.Single("h3")
	selTitle        = goquery.Single(".title")
	selH4           = goquery.Single("h4")
	selResultText   = goquery.Single(".result-content")
	selImageThumb   = goquery.Single("img.image_thumbnail")
	selImagesSource = goquery.Single("a.result-images-source")
	selContent      = goquery.Single("p.content")
	selThumbnail    = goquery.Single("img.thumbnail")
	selImage        = goquery.Single("img.image")
	selIframe       = goquery.Single("iframe")
	selPublished    = goquery.Single("time.published_date")
	selEngines      = goquery.Single(".engines")
	selSpan         = goquery.Single("span")
	selResultEngine = goquery.Single(".result-engine")
)

// htmlPage is what one HTML answer says.
type htmlPage struct {
	results   *results.Page // nil unless it is a results page
	formats   []string      // non-HTML formats offered (div#apis)
	frontPage bool          // the instance's front page
}

// ParseHTML reads a results page of SearXNG's simple theme, in the 2024
// markup (a.url_wrapper, suggestions in div.wrapper, engine errors in a
// table) and the current one (a.url_header, ul.wrapper, p.content
// empty_element). Results whose URL is not http(s) are dropped. The page
// does not show scores or positions: each result gets its rank on the
// page (1-based, counting the results passed on) as its one position,
// and the score SearXNG gives one engine's result at that rank (1/rank).
// Ranks restart at 1 on every page: the page does not say how many
// results page 1 had, and SearXNG's own JSON positions restart too.
func ParseHTML(body []byte) (*results.Page, error) {
	p, err := parseHTML(body)
	if err != nil {
		return nil, err
	}
	return p.results, nil
}

// ParseFormats returns the non-HTML formats a results page offers in its
// "Download results" box (div#apis), e.g. ["csv","json","rss"], sorted;
// nil when it offers none or is not a results page.
func ParseFormats(html []byte) []string {
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(html))
	if err != nil {
		return nil
	}
	if apis := elementsByID(doc)["apis"]; apis != nil {
		return readFormats(apis)
	}
	return nil
}

// parseHTML parses body once and reads what it is. The error wraps
// ErrNotResultsPage when it is not a results page; the page is returned
// even then, to say whether it is the front page.
//
// Most of a results page is its head, its search form (with a select of
// every language) and its pagination; only div#results and the query box
// say anything about the answer. When both are found, only they are
// parsed.
func parseHTML(body []byte) (*htmlPage, error) {
	if region, q, ok := resultsRegion(body); ok {
		doc, err := goquery.NewDocumentFromReader(bytes.NewReader(withoutSVG(region)))
		if err == nil {
			if ids := elementsByID(doc); ids["urls"] != nil {
				qdoc, err := goquery.NewDocumentFromReader(bytes.NewReader(q))
				if err == nil {
					return readPage(ids, qdoc.Find("input").AttrOr("value", "")), nil
				}
			}
		}
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotResultsPage, err)
	}
	ids := elementsByID(doc)
	if ids["urls"] == nil {
		p := &htmlPage{frontPage: ids["main_index"] != nil || doc.Find("body.index_endpoint, body.search_endpoint").Length() > 0}
		return p, fmt.Errorf("%w: no result list", ErrNotResultsPage)
	}
	q := ""
	if box := ids["q"]; box != nil {
		q = box.AttrOr("value", "")
	}
	return readPage(ids, q), nil
}

// elementsByID returns the first element of each id in doc, in one walk
// (a selector per container would walk the page once each).
func elementsByID(doc *goquery.Document) map[string]*goquery.Selection {
	ids := make(map[string]*goquery.Selection, 32)
	doc.Find("[id]").Each(func(_ int, s *goquery.Selection) {
		if id := s.AttrOr("id", ""); ids[id] == nil {
			ids[id] = s
		}
	})
	return ids
}

// resultsRegion finds, without parsing, the markup of div#results (up to
// the pagination) and the tag of the query box input#q.
func resultsRegion(body []byte) (region, qTag []byte, ok bool) {
	i := bytes.Index(body, []byte(`id="results"`))
	if i < 0 {
		return nil, nil, false
	}
	start := bytes.LastIndexByte(body[:i], '<')
	if start < 0 {
		return nil, nil, false
	}
	region = body[start:]
	if j := bytes.Index(region, []byte(`<nav id="pagination"`)); j > 0 {
		region = region[:j]
	}
	k := bytes.Index(body[:start], []byte(`id="q"`))
	if k < 0 {
		return nil, nil, false
	}
	tagStart := bytes.LastIndexByte(body[:k], '<')
	tagEnd := bytes.IndexByte(body[k:start], '>')
	if tagStart < 0 || tagEnd < 0 {
		return nil, nil, false
	}
	return region, body[tagStart : k+tagEnd+1], true
}

// withoutSVG returns b without its inline <svg> elements (SearXNG's
// icons: a third of a result's markup, and nothing this package reads).
// b is returned as is when it has none or an unclosed one.
func withoutSVG(b []byte) []byte {
	open, end := []byte("<svg"), []byte("</svg>")
	i := bytes.Index(b, open)
	if i < 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	for i >= 0 {
		j := bytes.Index(b[i:], end)
		if j < 0 {
			break
		}
		out = append(out, b[:i]...)
		b = b[i+j+len(end):]
		i = bytes.Index(b, open)
	}
	return append(out, b...)
}

// readPage reads a results page from its elements by id; q is the query
// its box echoes.
func readPage(ids map[string]*goquery.Selection, q string) *htmlPage {
	r := &results.Page{Query: searchTerms(q)}
	p := &htmlPage{results: r}
	if s := ids["result_count"]; s != nil {
		r.NumberOfResults = readCount(s.Text())
	}
	items := ids["urls"].Find(".result")
	r.Results = make([]results.Result, 0, min(items.Length(), maxReadResults))
	items.EachWithBreak(func(i int, s *goquery.Selection) bool {
		if len(r.Results) == maxReadResults {
			r.Dropped += items.Length() - i
			return false
		}
		if x, ok := readHTMLResult(s); ok {
			r.Results = append(r.Results, x)
		}
		return true
	})
	if s := ids["answers"]; s != nil {
		s.Find(".answer").Each(func(_ int, s *goquery.Selection) {
			if a, ok := readHTMLAnswer(s); ok {
				r.Answers = append(r.Answers, a)
			}
		})
	}
	if s := ids["corrections"]; s != nil {
		s.Find("form").Each(func(_ int, s *goquery.Selection) {
			c := s.Find(`input[type="submit"]`).AttrOr("value", "")
			if c == "" {
				c = s.Find(`input[name="q"]`).AttrOr("value", "")
			}
			if c = collapse(c); c != "" {
				r.Corrections = append(r.Corrections, c)
			}
		})
	}
	if s := ids["suggestions"]; s != nil {
		s.Find("form").Each(func(_ int, s *goquery.Selection) {
			// The button shows the suggestion itself; the form's q is
			// the full query to search, with the asked query's syntax
			// (":de", "!bang") in front (SearXNG's changeQuery).
			q := strings.TrimLeft(s.Find("input.suggestion").AttrOr("value", ""), "•· ")
			if q == "" {
				q = searchTerms(s.Find(`input[name="q"]`).AttrOr("value", ""))
			}
			if q = collapse(q); q != "" {
				r.Suggestions = append(r.Suggestions, q)
			}
		})
	}
	if s := ids["infoboxes"]; s != nil {
		s.Find(".infobox").Each(func(_ int, s *goquery.Selection) {
			r.Infoboxes = append(r.Infoboxes, readHTMLInfobox(s))
		})
	}
	if s := ids["engines_msg"]; s != nil {
		r.UnresponsiveEngines = readEngineErrors(s)
	}
	if s := ids["apis"]; s != nil {
		p.formats = readFormats(s)
	}
	// Links are judged by sanitize (one parse each); the results kept are
	// ranked as the page shows them.
	sanitize(r)
	ranks := make([]int, len(r.Results)) // one backing array for every result's positions
	for i := range r.Results {
		ranks[i] = i + 1
		r.Results[i].Positions = ranks[i : i+1 : i+1]
		r.Results[i].Score = rankScore(i + 1)
	}
	return p
}

// rankScore is the score SearXNG gives a result found by one engine (of
// weight 1) at rank: searx/results.py's calculate_score sums
// weight*len(positions)/position over the positions, so one position p
// scores 1/p.
func rankScore(rank int) float64 {
	return 1 / float64(rank)
}

// readHTMLResult reads one article.result; ok is false when it has no link
// (a link that is not http(s) is dropped by sanitize).
func readHTMLResult(s *goquery.Selection) (x results.Result, ok bool) {
	images := false
	for _, c := range strings.Fields(s.AttrOr("class", "")) {
		switch {
		case strings.HasPrefix(c, "result-"):
			x.Template = c[len("result-"):] + ".html"
			images = c == "result-images"
		case strings.HasPrefix(c, "category-"):
			x.Category = c[len("category-"):]
		}
	}
	x.URL = firstAttr(s, "href", selURLHeader, selURLWrapper, selH3Link, selResultURL)
	if x.URL == "" && images {
		x.URL = firstAttr(s, "href", selLink)
	}
	if x.URL == "" {
		return x, false
	}
	x.Title = highlighted(s, firstText(s, selH3, selTitle, selH4))
	if images {
		x.Content = firstText(s, selResultText)
		x.Thumbnail = firstAttr(s, "src", selImageThumb)
		x.ImgSrc = firstAttr(s, "href", selImagesSource, selLink)
	} else {
		c := s.FindMatcher(selContent)
		if !c.HasClass("empty_element") {
			x.Content = highlighted(c, collapse(c.Text()))
			if x.Content == noDescription {
				x.Content = ""
			}
		}
		x.Thumbnail = firstAttr(s, "src", selThumbnail)
		x.ImgSrc = firstAttr(s, "src", selImage)
	}
	if f := s.FindMatcher(selIframe); f.Length() > 0 {
		x.IframeSrc = strings.TrimSpace(f.AttrOr("data-src", ""))
		if x.IframeSrc == "" {
			x.IframeSrc = strings.TrimSpace(f.AttrOr("src", ""))
		}
	}
	if t := s.FindMatcher(selPublished); t.Length() > 0 {
		x.PublishedDate = isoDate(collapse(t.Text()), strings.TrimSpace(t.AttrOr("datetime", "")))
	}
	s.FindMatcher(selEngines).Children().FilterMatcher(selSpan).Each(func(_ int, e *goquery.Selection) {
		if name := collapse(e.Text()); name != "" {
			x.Engines = append(x.Engines, name)
		}
	})
	if len(x.Engines) == 0 {
		// The image template names its engine as "Engine: name".
		if t := collapse(s.FindMatcher(selResultEngine).Text()); t != "" {
			if i := strings.LastIndexByte(t, ':'); i >= 0 {
				t = strings.TrimSpace(t[i+1:])
			}
			if t != "" {
				x.Engines = []string{t}
			}
		}
	}
	if len(x.Engines) > 0 {
		x.Engine = x.Engines[0]
	}
	return x, true
}

// isoDate is a result's date as SearXNG's JSON writes it (Python's
// isoformat: "2025-03-14T15:09:26+00:00") from what its page shows: the
// text is str() of the same date ("2025-03-14 15:09:26+00:00"), the
// datetime attribute (often empty) strftime's "%Y-%m-%d %H:%M:%S%z"
// ("2025-03-14 15:09:26+0000"). Otherwise the attribute, else the text,
// is kept as it is.
func isoDate(text, attr string) string {
	if d, ok := pythonDate(text); ok {
		return d
	}
	if d, ok := pythonDate(attr); ok {
		if n := len(d); n > 19 && (d[n-5] == '+' || d[n-5] == '-') {
			d = d[:n-2] + ":" + d[n-2:] // %z has no colon, isoformat has one
		}
		return d
	}
	return cmp.Or(attr, text)
}

// pythonDate is s with the T of ISO 8601 when s starts with a date and a
// time as Python's str() writes them ("2006-01-02 15:04").
func pythonDate(s string) (string, bool) {
	if len(s) < 16 || s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' {
		return s, false
	}
	for _, i := range []int{0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15} {
		if s[i] < '0' || s[i] > '9' {
			return s, false
		}
	}
	return s[:10] + "T" + s[11:], true
}

// searchTerms is an echoed query box's value without SearXNG's search
// syntax (":de", "!bang", "!!", "<3"): what SearXNG's JSON echoes as
// "query" (RawTextQuery.getQuery), since the box shows the query as typed.
// A box of syntax alone is echoed as it is.
func searchTerms(q string) string {
	if pq := ParseQuery(q); pq.HasSyntax() {
		if t := pq.Terms(); t != "" {
			return t
		}
	}
	return collapse(q)
}

// highlighted is text, read from s, with the entities SearXNG escaped
// twice decoded: its highlight_content runs on the escaped text, so a
// query word that is part of an entity ("&", "amp") splits it with a
// <span class="highlight"> and the page shows "&amp;" where the JSON has
// "&". Only text with such a span and an '&' is decoded again.
func highlighted(s *goquery.Selection, text string) string {
	if !strings.Contains(text, "&") || !strings.Contains(text, ";") || s.Find("span.highlight").Length() == 0 {
		return text
	}
	return html.UnescapeString(text)
}

// readHTMLAnswer reads one div.answer as the template that wrote it
// (elements/answers.html includes answer/<template>): translations
// (details.answer-translations, the engine in .answer-url), the weather
// (details.weather, the service in .answer-url), else a text and its link
// (answer/legacy.html: a span and a.answer-url; the 2024 markup a span or
// a link). ok is false when it holds nothing.
func readHTMLAnswer(s *goquery.Selection) (a results.Answer, ok bool) {
	a.URL = strings.TrimSpace(s.Find("a.answer-url").AttrOr("href", ""))
	name := collapse(s.Find(".answer-url").First().Text())
	if d := s.Find("details.answer-translations"); d.Length() > 0 {
		a.Template, a.Engine = results.TranslationsAnswer, name
		a.Extra = cleanAnswerExtra(map[string]json.RawMessage{"translations": readTranslations(d)})
		return a, a.Extra != nil
	}
	if d := s.Find("details.weather"); d.Length() > 0 {
		a.Template = results.WeatherAnswer
		extra := readWeather(d)
		extra["service"] = results.AppendString(nil, name)
		a.Extra = cleanAnswerExtra(extra)
		return a, a.Extra != nil
	}
	a.Template = results.LegacyAnswer
	a.Answer = collapse(s.Find("span").Not(".answer-url").First().Text())
	if a.Answer == "" {
		l := s.Find("a[href]").First()
		a.Answer, a.URL = collapse(l.Text()), strings.TrimSpace(l.AttrOr("href", ""))
	}
	if a.Answer == "" {
		a.Answer = collapse(s.Text())
	}
	return a, a.Answer != ""
}

// cleanAnswerExtra is a typed answer's fields read from a page, cleaned
// and bounded as those read from JSON are (no bidirectional controls,
// MaxAnswerExtraBytes).
func cleanAnswerExtra(fields map[string]json.RawMessage) map[string]json.RawMessage {
	var out map[string]json.RawMessage
	for k, v := range fields {
		putExtraWithin(&out, k, gjson.ParseBytes(v), MaxAnswerExtraBytes, MaxAnswerExtraBytes)
	}
	return out
}

// translationItem is one item of a translation answer, as SearXNG writes
// it in JSON (Translations.Item: every field, lists empty when none).
type translationItem struct {
	Text            string   `json:"text"`
	Transliteration string   `json:"transliteration"`
	Examples        []string `json:"examples"`
	Definitions     []string `json:"definitions"`
	Synonyms        []string `json:"synonyms"`
}

// readTranslations reads the items of answer/translations.html: a dt with
// the text, its dd with the transliteration and the lists, each after a
// heading in the page's language (translationLists).
func readTranslations(d *goquery.Selection) json.RawMessage {
	var items []translationItem
	d.Find("dl > dt").Each(func(_ int, dt *goquery.Selection) {
		it := translationItem{Text: collapse(dt.Text()), Examples: []string{}, Definitions: []string{}, Synonyms: []string{}}
		dd := dt.NextFiltered("dd")
		it.Transliteration = collapse(dd.Find(".item-transliteration").Text())
		dd.ChildrenFiltered("ul").Each(func(_ int, ul *goquery.Selection) {
			var list []string
			ul.ChildrenFiltered("li").Each(func(_ int, li *goquery.Selection) {
				list = append(list, collapse(li.Text()))
			})
			switch translationLists[collapse(ul.PrevFiltered("div").Text())] {
			case "examples":
				it.Examples = append(it.Examples, list...)
			case "definitions":
				it.Definitions = append(it.Definitions, list...)
			case "synonyms":
				it.Synonyms = append(it.Synonyms, list...)
			}
		})
		items = append(items, it)
	})
	b, _ := json.Marshal(items)
	return b
}

// weatherSummary is what answer/weather.html shows of one weather item as
// text: its summary line (a forecast's with its time in front).
type weatherSummary struct {
	Summary string `json:"summary"`
}

// readWeather reads answer/weather.html: the current summary and each
// forecast's summary line. The measures the page shows in its tables are
// formatted for the page's locale and are not read.
func readWeather(d *goquery.Selection) map[string]json.RawMessage {
	cur, _ := json.Marshal(weatherSummary{collapse(d.Find("summary > .summary").First().Text())})
	forecasts := []weatherSummary{}
	d.Find(".answer-weather-forecasts > .summary").Each(func(_ int, f *goquery.Selection) {
		forecasts = append(forecasts, weatherSummary{collapse(f.Text())})
	})
	fc, _ := json.Marshal(forecasts)
	return map[string]json.RawMessage{"current": cur, "forecasts": fc}
}

// readHTMLInfobox reads one aside.infobox.
func readHTMLInfobox(s *goquery.Selection) results.Infobox {
	b := results.Infobox{
		Infobox: collapse(s.Find("h2").First().Text()),
		ImgSrc:  s.ChildrenFiltered("img").AttrOr("src", ""),
		Content: collapse(s.ChildrenFiltered("p").First().Text()),
	}
	s.Find(".attributes dl").Each(func(_ int, dl *goquery.Selection) {
		label := strings.TrimSpace(strings.TrimSuffix(collapse(dl.Find("dt").Text()), ":"))
		value := collapse(dl.Find("dd").Text())
		if label != "" || value != "" {
			b.Attributes = append(b.Attributes, results.InfoboxAttribute{Label: label, Value: value})
		}
	})
	s.Find(".urls a[href]").Each(func(_ int, a *goquery.Selection) {
		if u := a.AttrOr("href", ""); httpURL(u) {
			b.URLs = append(b.URLs, results.InfoboxURL{Title: collapse(a.Text()), URL: u})
		}
	})
	return b
}

// readEngineErrors reads the unresponsive engines of div#engines_msg: rows
// with td.response-error (2024 and current), or paragraphs "engine (error)"
// of a div.dialog-error.
func readEngineErrors(msg *goquery.Selection) [][2]string {
	var out [][2]string
	msg.Find("td.response-error").Each(func(_ int, td *goquery.Selection) {
		name := collapse(td.Parent().Find("td.engine-name").Text())
		if name != "" {
			out = append(out, [2]string{name, collapse(td.Text())})
		}
	})
	msg.Find(".dialog-error p").Each(func(_ int, p *goquery.Selection) {
		a := p.Find("a")
		if a.Length() == 0 {
			return
		}
		t := collapse(p.Text())
		name, _, _ := strings.Cut(t, "(")
		if name = strings.TrimSpace(name); name != "" {
			out = append(out, [2]string{name, collapse(a.Text())})
		}
	})
	return out
}

// readFormats reads the formats offered in div#apis.
func readFormats(apis *goquery.Selection) []string {
	var out []string
	apis.Find(`input[name="format"]`).Each(func(_ int, s *goquery.Selection) {
		f := strings.ToLower(strings.TrimSpace(s.AttrOr("value", "")))
		if f != "" && f != "html" {
			out = append(out, f)
		}
	})
	slices.Sort(out)
	return slices.Clip(slices.Compact(out))
}

// readCount reads "Number of results: 1,234,000" in any locale's digit
// grouping.
func readCount(s string) int64 {
	var digits []byte
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= '0' && c <= '9' {
			digits = append(digits, c)
		}
	}
	n, err := strconv.ParseInt(string(digits), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// firstAttr returns attr of the first element matched by the first of
// matchers that matches one with a non-empty attr.
func firstAttr(s *goquery.Selection, attr string, matchers ...goquery.Matcher) string {
	for _, m := range matchers {
		if v := strings.TrimSpace(s.FindMatcher(m).AttrOr(attr, "")); v != "" {
			return v
		}
	}
	return ""
}

// firstText returns the text of the first element matched by the first of
// matchers that matches one with text.
func firstText(s *goquery.Selection, matchers ...goquery.Matcher) string {
	for _, m := range matchers {
		if v := collapse(s.FindMatcher(m).Text()); v != "" {
			return v
		}
	}
	return ""
}

// collapse trims s and folds every run of white space into one space.
func collapse(s string) string {
	s = strings.TrimSpace(s)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\n' || c == '\t' || c == '\r' || c == '\f' || (c == ' ' && i+1 < len(s) && s[i+1] == ' ') {
			return strings.Join(strings.Fields(s), " ")
		}
	}
	return s
}
