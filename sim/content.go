package sim

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// The engines an instance may say it asked, and the hosts its results
// point to (all under the reserved example domains).
var (
	enginePool = []string{"duckduckgo", "brave", "wikipedia", "startpage", "qwant", "mojeek", "bing", "google"}
	resultHost = []string{"docs.example.org", "en.example.net", "news.example.com", "blog.example.org", "forum.example.net", "www.example.com"}
	// Queries an OffTopic instance answers instead of the one asked.
	offTopicQueries = []string{"banana bread recipe", "cheap flights oslo", "weather lisbon tomorrow", "football league table", "vintage typewriter repair"}
	// Reasons SearXNG gives for an unresponsive engine.
	engineErrors = []string{"timeout", "Suspended: too many requests", "CAPTCHA", "Suspended: access denied", "HTTP error"}
)

// slug is the query as a path segment: lower case words joined by "-".
func slug(q string) string {
	words := strings.Fields(strings.ToLower(q))
	for i, w := range words {
		words[i] = url.PathEscape(w)
	}
	if len(words) == 0 {
		return "-"
	}
	return strings.Join(words, "-")
}

// NoResultsPrefix starts the queries that legitimately find nothing: an
// instance that answers searches at all answers one of them (matched
// without regard to case) with 200, an empty result list and no
// unresponsive engine, as SearXNG does when its engines found nothing
// (shared/fixtures/searxng/a-search-*-noresults.txt). Off-topic and
// empty-engines-down instances keep their own answers; thin and partial
// ones list no suspended engine on it either.
const NoResultsPrefix = "noresults"

// Queries whose answer depends on the query, not on the instance: every
// instance that answers searches at all answers them alike, as real
// SearXNG instances running the same engines do.
const (
	// EngineErrorPrefix starts the queries that make the engines fail
	// (a timeout, a crash, a CAPTCHA on that query): 200, no results,
	// every engine in unresponsive_engines
	// (shared/fixtures/searxng/a-search-json-engine-error-query.txt).
	EngineErrorPrefix = "engineerror"
	// SlowQueryPrefix starts the queries every instance answers
	// Config.SlowQuery late.
	SlowQueryPrefix = "slowquery"
	// ServerErrorPrefix starts the queries that crash SearXNG itself:
	// every instance answers them 500 Internal Server Error.
	ServerErrorPrefix = "servererror"
	// OffTopicQueryPrefix starts the queries whose honest answers do not
	// mention them (engines that read the words another way): the query
	// is echoed, but each instance's results are about its own other
	// topic, and no two instances share a URL.
	OffTopicQueryPrefix = "offtopicquery"
)

// bangSites are the external bangs the fleet knows: "!!g foo" sends the
// client to Google's search for foo, as SearXNG's bangs do.
var bangSites = map[string]string{
	"g":   "https://www.google.com/search?q=",
	"w":   "https://en.wikipedia.org/wiki/Special:Search?search=",
	"ddg": "https://duckduckgo.com/?q=",
}

// bang reads SearXNG's redirecting bangs in q: the site an external bang
// sends to (with the rest of the query), or lucky for a lone "!!"
// (feeling lucky); rest is the query without them. As in SearXNG, every
// word is read: the last known "!!x" word is the external bang, and it
// wins over "!!" wherever either stands (SearXNG redirects to the bang
// before it looks for a first result).
func bang(q string) (site string, lucky bool, rest string) {
	words := strings.Fields(q)
	ext := ""
	plain := make([]string, 0, len(words))
	for _, w := range words {
		switch {
		case w == "!!":
			lucky = true
		case strings.HasPrefix(w, "!!") && bangSites[strings.ToLower(w[2:])] != "":
			ext = w[2:] // an unknown one is a word
		default:
			plain = append(plain, w)
		}
	}
	if u, ok := bangSites[strings.ToLower(ext)]; ok && ext != "" {
		rest = strings.Join(plain, " ")
		return u + url.QueryEscape(rest), false, rest
	}
	if lucky {
		return "", true, strings.Join(plain, " ")
	}
	return "", false, q // no bang, or one SearXNG does not know: searched as it is
}

// parseQuery splits q as SearXNG's RawTextQuery does (searx/query.py):
// the words that are search syntax it knows, which choose how to search
// and are not searched (a timeout "<3", a language ":de" or ":de-CH",
// "!!" feeling lucky, an external bang of bangSites, a bang naming one of
// the instance's engines, their shortcuts or the general category), and
// the other words, joined by single spaces: what its engines are asked
// and what its JSON echoes as "query". A bang it does not know is a word.
// Bangs are matched without regard to case, as SearXNG since 2025 does.
func (s *site) parseQuery(q string) (syntax, terms string) {
	var sx, words []string
	for _, w := range strings.Fields(q) {
		if s.isSyntax(w) {
			sx = append(sx, w)
		} else {
			words = append(words, w)
		}
	}
	return strings.Join(sx, " "), strings.Join(words, " ")
}

// isSyntax reports whether w is search syntax the instance knows.
func (s *site) isSyntax(w string) bool {
	switch {
	case w == "!!":
		return true
	case strings.HasPrefix(w, "!!"):
		_, ok := bangSites[strings.ToLower(w[2:])]
		return ok
	case strings.HasPrefix(w, "!") && len(w) > 1:
		v := strings.NewReplacer("-", " ", "_", " ").Replace(strings.ToLower(w[1:]))
		if v == "general" {
			return true
		}
		for _, e := range s.EngineList {
			if v == e || v == e[:min(2, len(e))] {
				return true
			}
		}
	case strings.HasPrefix(w, "<") && len(w) > 1:
		for _, c := range w[1:] {
			if c < '0' || c > '9' {
				return false
			}
		}
		return true
	case strings.HasPrefix(w, ":") && len(w) > 1:
		return languageCode.MatchString(strings.ReplaceAll(strings.ToLower(w[1:]), "_", "-"))
	}
	return false
}

// languageCode is SearXNG's VALID_LANGUAGE_CODE (and "auto"); SearXNG also
// takes a language's or a country's name, which the sim does not know.
var languageCode = regexp.MustCompile(`^([a-z]{2,3}(-[a-z]{2})?|auto)$`)

// hasPrefixFold reports whether q starts with prefix, ignoring case.
func hasPrefixFold(q, prefix string) bool {
	return len(q) >= len(prefix) && strings.EqualFold(q[:len(prefix)], prefix)
}

// findsNothing reports whether the instance answers the search with an
// honest empty answer because of its query (NoResultsPrefix).
func (in *Instance) findsNothing(s search) bool {
	if in.cfg.Behaviour == OffTopic || in.cfg.Behaviour == EmptyEnginesDown {
		return false
	}
	return len(s.q) >= len(NoResultsPrefix) && strings.EqualFold(s.q[:len(NoResultsPrefix)], NoResultsPrefix)
}

// page builds the answer to a search from the instance's behaviour: ten
// results a page (Results), Pages pages, each echoing the query's words and
// naming the instance; nothing at all for a query that finds nothing.
func (in *Instance) page(s search) *page {
	cfg := &in.cfg
	q := s.q
	if cfg.Behaviour == OffTopic {
		q = in.offq
	}
	// What the engines are asked, and echoed: the query without its
	// syntax (feeling lucky asked for anything but the HTML page gets its
	// results).
	syntax, terms := in.site.parseQuery(q)
	p := &page{Query: terms, Typed: q, Syntax: syntax, PageNo: s.pageno}
	q = terms
	if hasPrefixFold(q, OffTopicQueryPrefix) {
		q = in.offq // echoed as asked, answered about something else
	}
	engines := in.site.EngineList
	if cfg.Behaviour == EmptyEnginesDown || hasPrefixFold(q, EngineErrorPrefix) {
		for i, e := range engines {
			p.Unresponsive = append(p.Unresponsive, [2]string{e, engineErrors[i%len(engineErrors)]})
		}
		return p
	}
	if s.pageno > cfg.Pages || in.findsNothing(s) || in.lacksCategories(s) {
		return p
	}
	defer suspend(cfg.Behaviour, p)
	p.HasNext = s.pageno < cfg.Pages
	p.Suggestions = []string{q + " tutorial", q + " examples"}
	p.Raw = cfg.Behaviour == Hostile
	p.RawBytes = cfg.Behaviour == InvalidUTF8
	sl := slug(q)
	cat := s.category()
	if in.rich() && cat != "general" && cat != "images" {
		engines = categoryEngines[cat]
	}
	for i := 0; i < cfg.Results; i++ {
		k := (s.pageno-1)*cfg.Results + i // index over all pages
		host := resultHost[k%len(resultHost)]
		engine := engines[k%len(engines)]
		u := fmt.Sprintf("https://%s/%s/%s/%d", host, cfg.ID, sl, k+1)
		if in.f.cfg.LocalLinks {
			u = fmt.Sprintf("%ssim/page/%s/%s/%d", in.url, cfg.ID, sl, k+1)
		}
		r := result{
			URL:      u,
			Title:    fmt.Sprintf("%s: result %d", q, k+1),
			Content:  fmt.Sprintf("Result %d about %s, served by %s through %s.", k+1, q, cfg.ID, engine),
			Engine:   engine,
			Engines:  []string{engine},
			Position: i + 1,
			Score:    1 / float64(i+1),
			Category: "general",
		}
		if k%4 == 1 && len(engines) > 1 {
			r.Engines = append(r.Engines, engines[(k+1)%len(engines)])
			r.Score *= 2
		}
		if k%3 == 2 {
			r.PublishedDate = fmt.Sprintf("2024-%02d-%02dT00:00:00", k%12+1, k%28+1)
		}
		if k%5 == 4 {
			// On the instance itself, as the images' are: an image proxy
			// in front has a real picture to fetch, on loopback.
			r.Thumbnail = fmt.Sprintf("%ssim/img/%d.png?thumb", in.url, k+1)
		}
		if in.rich() {
			in.categorize(&r, cat, q, k)
		}
		if s.images() {
			r.Category = "images"
			r.ImgSrc = fmt.Sprintf("%ssim/img/%d.png", in.url, k+1)
			r.ThumbnailSrc = fmt.Sprintf("%ssim/img/%d.png?small", in.url, k+1)
			r.Resolution = fmt.Sprintf("%d x %d", 640+40*(k%5), 480)
			r.Source = host
		}
		switch cfg.Behaviour {
		case Hostile:
			hostile(&r, q, cfg.ID, k)
		case EchoSpam:
			echoSpam(&r, q, k)
		case PartialEchoSpam:
			partialEchoSpam(&r, q, k)
		case InvalidUTF8:
			r.Title = q + " \xff\xfe result " + fmt.Sprint(k+1)
			r.Content = fmt.Sprintf("Result %d about %s \xc3\x28 served by %s \xed\xa0\x80.", k+1, q, cfg.ID)
		}
		p.Results = append(p.Results, r)
	}
	if in.rich() && s.pageno == 1 && cleanContent(cfg.Behaviour) {
		in.enrich(p, q, cat, sl)
	}
	return p
}

// The demo's fleet (Config.LocalLinks) shows everything a SearXNG page
// can: a result count, an answer, an infobox, corrections, an engine that
// failed beside the results, and each category's own results.

// rich reports whether the instance's pages show everything.
func (in *Instance) rich() bool { return in.f.cfg.LocalLinks }

// cleanContent reports whether a behaviour's results are the plain ones
// the extras go with (not hostile, spam, broken bytes or another topic).
func cleanContent(b Behaviour) bool {
	return b != Hostile && b != EchoSpam && b != InvalidUTF8 && b != OffTopic
}

// categoryEngines are the engines of the categories that answer with
// their own results.
var categoryEngines = map[string][]string{
	"news":    {"bing news", "google news", "yahoo news"},
	"videos":  {"youtube", "vimeo", "dailymotion"},
	"it":      {"github", "stackoverflow", "pypi", "mdn"},
	"science": {"arxiv", "google scholar", "pubmed", "semantic scholar"},
}

// misspellings are the words the fleet corrects ("helo" asks for
// "hello"), as SearXNG's engines offer corrections.
var misspellings = map[string]string{
	"helo": "hello", "hellow": "hello", "pyhton": "python", "teh": "the",
	"serach": "search", "recieve": "receive", "tutorail": "tutorial", "rsut": "rust",
}

// category is the first category the search asks for that the fleet
// answers apart, else "general".
func (s search) category() string {
	for c := range strings.SplitSeq(s.params["categories"], ",") {
		c = strings.TrimSpace(c)
		if _, ok := categoryEngines[c]; ok || c == "images" {
			return c
		}
	}
	return "general"
}

// categorize makes r the k-th result of its category: its title, snippet
// and category field, and what that category's results carry.
func (in *Instance) categorize(r *result, cat, q string, k int) {
	id := in.cfg.ID
	switch cat {
	case "news":
		r.Title = fmt.Sprintf("%s: news story %d", q, k+1)
		r.Content = fmt.Sprintf("Story %d on %s, reported by %s's %s today.", k+1, q, id, r.Engine)
		r.PublishedDate = fmt.Sprintf("2026-12-%02dT%02d:00:00", 6-k%5, 9+k%8)
	case "videos":
		r.Title = fmt.Sprintf("%s: video %d", q, k+1)
		r.Content = fmt.Sprintf("A %d:%02d video about %s, found by %s on %s.", 2+k%9, 7*k%60, q, id, r.Engine)
		r.Thumbnail = fmt.Sprintf("%ssim/img/%d.png?thumb", in.url, k+1)
	case "it":
		r.Title = fmt.Sprintf("%s: %s answer %d", q, r.Engine, k+1)
		r.Content = fmt.Sprintf("Code and documentation %d for %s, from %s through %s.", k+1, q, id, r.Engine)
	case "science":
		r.Title = fmt.Sprintf("%s: a paper, part %d", q, k+1)
		r.Content = fmt.Sprintf("Abstract %d: what is known of %s, indexed by %s through %s.", k+1, q, id, r.Engine)
		r.PublishedDate = fmt.Sprintf("20%02d-%02d-01T00:00:00", 10+k%16, k%12+1)
	default:
		return
	}
	r.Category = cat
}

// enrich adds a first page's extras: its result count, an answer and an
// infobox (general searches), corrections of misspelt words, and for
// about every second query an engine that timed out beside its results.
func (in *Instance) enrich(p *page, q, cat, sl string) {
	p.NumberOfResults = 1000 + len(p.Results)*(137*len(q)+len(sl))
	words := strings.Fields(q)
	fixed := false
	for i, w := range words {
		if c, ok := misspellings[strings.ToLower(w)]; ok {
			words[i], fixed = c, true
		}
	}
	if fixed {
		p.Corrections = []string{strings.Join(words, " ")}
	}
	if cat == "general" && len(p.Results) > 0 {
		p.Answers = []string{fmt.Sprintf("%s: %d letters, %d words, as the demo fleet counts them", q, len(strings.ReplaceAll(q, " ", "")), len(strings.Fields(q)))}
		p.Infoboxes = []infobox{{
			Title:   q,
			Content: fmt.Sprintf("%s, as the demo fleet describes it: every instance gives this box for a general search, so searxgate shows one.", q),
			ImgSrc:  in.url + "sim/img/1.png?thumb",
			Attributes: [][2]string{
				{"Asked of", in.cfg.ID}, {"Engines", strings.Join(in.site.EngineList, ", ")},
			},
			URLs: [][2]string{{"The first result", p.Results[0].URL}},
		}}
	}
	if slowForWikidata(q) {
		p.Unresponsive = append(p.Unresponsive, [2]string{"wikidata", "timeout"})
	}
}

// echoSpam makes r the k-th result of spam generated from q: a title and
// a snippet of q's words alone, rotated by k and cut to fewer words.
func echoSpam(r *result, q string, k int) {
	words := strings.Fields(q)
	if len(words) == 0 {
		return
	}
	rot := func(shift, keep int) string {
		out := make([]string, 0, len(words))
		for i := range max(keep, 1) {
			out = append(out, words[(i+shift)%len(words)])
		}
		return strings.Join(out, " ")
	}
	n := len(words)
	r.Title = rot(k, n-k%n)
	if k%2 == 1 {
		r.Title = strings.ToUpper(r.Title)
	}
	r.Content = rot(k+1, n) + " " + rot(k, n)
}

// partialEchoSpam makes r the k-th result of spam that wraps parts of q
// in one canned text: the title and the snippet each hold a different
// cut of q's words (all of them for a one-word q), and a counter.
func partialEchoSpam(r *result, q string, k int) {
	words := strings.Fields(q)
	if len(words) == 0 {
		return
	}
	cut := func(shift int) string {
		keep := max(len(words)-1, 1)
		out := make([]string, 0, keep)
		for i := range keep {
			out = append(out, words[(i+shift)%len(words)])
		}
		return strings.Join(out, " ")
	}
	r.Title = fmt.Sprintf("Buy %s cheap — spam %d", cut(k), k+1)
	r.Content = fmt.Sprintf("Best %s deals, offer %d", cut(k+1), k+1)
}

// hostile fills r with markup and dangerous links that still mention the
// query and the instance.
func hostile(r *result, q, id string, k int) {
	switch k % 4 {
	case 0:
		r.URL = "javascript:alert(document.cookie)//" + id
		r.Title = `<script>alert("` + id + `")</script>` + q
		r.Content = `<img src=x onerror="alert(1)">` + q + ` by ` + id
	case 1:
		r.URL = "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg=="
		r.Title = q + `<iframe src="javascript:alert(2)"></iframe>`
		r.Content = q + ` <a href="javascript:void(0)" onclick="steal()">click</a> ` + id
	case 2:
		r.URL = `https://evil.example.com/` + id + `/"><script>alert(3)</script>`
		r.Title = q + `<style>body{display:none}</style>`
		r.Content = `</p></article><div class="result">` + q + ` fake ` + id + `</div>`
	default:
		r.URL = " JaVaScRiPt:alert(4)//" + id
		r.Title = q + ` <b onmouseover="alert(5)">bold</b>`
		r.Content = q + ` <svg onload=alert(6)> ` + id
	}
}

// slowForWikidata reports whether the demo's wikidata engine times out on
// q: on about every second query, on every instance alike, as an engine's
// trouble with one query shows wherever it is asked.
func slowForWikidata(q string) bool {
	sum := 0
	for i := 0; i < len(q); i++ {
		sum += int(q[i])
	}
	return sum%2 == 0
}
