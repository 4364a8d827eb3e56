package web

import (
	"bytes"
	"cmp"
	"embed"
	"encoding/json"
	"encoding/xml"
	"html/template"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/searxgate/searxgate/results"
	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/proxy"
)

//go:embed templates/*.html
var templateFS embed.FS

// parseTemplates parses every embedded template; a missing or broken one
// fails start-up.
func parseTemplates() (*template.Template, error) {
	t, err := template.New("").Funcs(template.FuncMap{
		"safeURL":    safeURL,
		"categories": func() []string { return tabCategories },
		"add":        func(a, b int) int { return a + b },
	}).ParseFS(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	for _, name := range []string{"index.html", "results.html", "error.html", "status.html", "preferences.html", "about.html"} {
		if t.Lookup(name) == nil {
			return nil, &missingTemplateError{name}
		}
	}
	return t, nil
}

type missingTemplateError struct{ name string }

func (e *missingTemplateError) Error() string { return "template " + e.name + " is missing" }

// safeURL returns u when it is an http(s) URL, "" otherwise: no upstream
// link of another scheme (javascript:, data:) is ever rendered.
func safeURL(u string) string {
	u = strings.TrimSpace(u)
	if strings.HasPrefix(u, "//") {
		u = "https:" + u // protocol-relative, as some engines give thumbnails
	}
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || !utf8.ValidString(u) {
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

// baseURL is the configured public URL, or the address the client used,
// ending in "/". A link built from the client's Host header is only as
// true as the header: such an answer is marked Cache-Control: private and
// Vary: Host, so that no shared cache (a reverse proxy, a CDN) keeps a copy
// made for a poisoned Host and serves it to others. X-Forwarded-Host is
// never read. --public-url (Config.PublicURL) makes the links fixed and the
// answer cacheable.
func (s *Server) baseURL(ctx *fasthttp.RequestCtx) string {
	if s.cfg.PublicURL != "" {
		return s.cfg.PublicURL
	}
	ctx.Response.Header.Set("Cache-Control", "private")
	addVary(&ctx.Response.Header, "Host")
	scheme := "http"
	if ctx.IsTLS() {
		scheme = "https"
	}
	host := string(ctx.Host())
	if !validHost(host) {
		host = "localhost"
	}
	return scheme + "://" + host + "/"
}

// addVary adds name to the response's Vary, in its one line.
func addVary(h *fasthttp.ResponseHeader, name string) {
	cur := string(h.Peek("Vary"))
	for _, v := range strings.Split(cur, ",") {
		if strings.EqualFold(strings.TrimSpace(v), name) {
			return
		}
	}
	if cur != "" {
		name = cur + ", " + name
	}
	h.Set("Vary", name)
}

// validHost accepts what a Host header may hold: a name or address and an
// optional port; nothing that could break out of a URL.
func validHost(h string) bool {
	if h == "" || len(h) > 255 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '.' || c == '-' || c == ':' || c == '[' || c == ']' || c == '_':
		default:
			return false
		}
	}
	return true
}

// Limits on what a page shows of one upstream string.
const (
	maxTitle   = 300
	maxContent = 1000
	maxURLText = 120
)

// clean makes an upstream string fit for a page: valid UTF-8, no control
// or bidi-override characters, at most max runes (cut with an ellipsis).
func clean(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return ' '
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || detect.IsBidiControl(r) {
			return -1
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > max {
		n := 0
		for i := range s {
			if n == max {
				return strings.TrimSpace(s[:i]) + "…"
			}
			n++
		}
	}
	return s
}

// tabCategories are the tabs of the results page, as SearXNG names them. Never modified.
var tabCategories = []string{"general", "images", "news", "videos", "science", "it"}

// offerableCategories are the tabs shown only when an instance of the
// pool runs an engine of theirs (its /config says so). Never modified.
var offerableCategories = []string{"map", "music", "files"}

var categoryLabels = map[string]string{
	"general": "General", "images": "Images", "news": "News", "videos": "Videos", "science": "Science", "it": "IT",
	"map": "Map", "music": "Music", "files": "Files",
}

// tabsOffered is the results page's tabs: tabCategories, then those of
// offerableCategories that offered (a category → whether an instance's
// engine is in it) says an instance offers.
func tabsOffered(offered func(category string) bool) []string {
	out := slices.Clone(tabCategories)
	for _, c := range offerableCategories {
		if offered(c) {
			out = append(out, c)
		}
	}
	return out
}

// offeredCategories is what the pool's instances said, in their /config,
// that their engines search (see tabsOffered).
func (s *Server) offeredCategories() func(string) bool {
	seen := map[string]bool{}
	if s.cfg.Pool != nil && s.cfg.Proxy != nil {
		for _, st := range s.cfg.Pool.Snapshot() {
			for _, e := range s.cfg.Proxy.Instances().Caps(st.URL).Engines {
				for _, c := range e.Categories {
					seen[c] = true
				}
			}
		}
	}
	return func(c string) bool { return seen[c] }
}

type tab struct {
	Name, Label, Href string
	Active            bool
}

type option struct {
	Value, Label string
	Selected     bool
}

type link struct{ Text, Href string }

// answerView is one answer on the page: its text (a typed answer's as
// results.Answer.Text gives it) and its link, shown by its host.
type answerView struct{ Text, Href, Host string }

type resultView struct {
	Title, URL, Display, Content string
	Engines                      []string
	Thumbnail                    string
	Published                    string
	// Cached is the page's copy at the web archive, as SearXNG links it.
	Cached string
	// Image is the full image of an image result, through the image
	// proxy ("" = not an image result); Resolution and Source are what
	// the instance said of it.
	Image, Resolution, Source string
	// Video marks a video result, whose thumbnail is drawn larger.
	Video bool
	// Snippet is Content with the query's words in <mark>, escaped here
	// part by part (snippetHTML): one action of the template, not one a
	// part, which cost the page twice its time.
	Snippet template.HTML
}

// textPart is a piece of a snippet; Mark says it is one of the query's
// words, which the page highlights as SearXNG does.
type textPart struct {
	Text string
	Mark bool
}

type infoboxView struct {
	Title, Content, Image string
	URLs                  []link
	Attributes            []link // Text = label, Href = value (plain text)
}

// searchPage is what results.html shows: every upstream string already
// cleaned and every link checked.
type searchPage struct {
	Query       string
	Tabs        []tab
	Category    string
	TimeRanges  []option
	SafeSearch  []option
	Language    string
	Answers     []answerView
	Corrections []link
	Suggestions []link
	Infoboxes   []infoboxView
	Results     []resultView
	Images      []resultView // the image results, drawn as a grid
	Count       string       // how many results the instances reckon there are ("" = not said)
	Formats     []link       // the same search as JSON, CSV and RSS
	Unresponse  []string
	PageNo      int
	Prev, Next  string
	Instances   []string // who answered: one, or every instance of a fan-out
	Took        string
	Cache       string
	Soft        string
	// Thin says why the answer is thin ("google, bing suspended on X; 4
	// results from wikipedia"), "" when it is not (proxy.ThinNote).
	Thin string
}

type pageData struct {
	Title   string
	Name    string // the gateway's name
	Query   string
	Status  int
	Message string
	Retry   string // a link that repeats the request
	RetryIn string // when trying again may work ("12 s"), from Retry-After
	// Causes say, one an instance, why no instance answered
	// (proxy.NoAnswerError.Explain).
	Causes  []string
	Problem string // why searxgate cannot search at all now; "" = nothing
	Search  *searchPage
	Stat    *statusView
	About   *aboutView
	Pref    *prefsView
	// Prefs are the request's preferences (render reads them); Languages
	// the search form's choice of language.
	Prefs     prefs
	Languages []option
	// Lang and Dir are the attributes of content in the search's language
	// ("" = the page's own).
	Lang, Dir string
	// Script says whether the page loads searxgate.js: only when a
	// preference needs it (suggestions, hotkeys, infinite scroll) or the
	// page has image results (focus and arrow keys in their detail).
	Script bool
}

func (s *Server) render(ctx *fasthttp.RequestCtx, status int, name string, d pageData) {
	d.Name = s.cfg.InstanceName
	// Every page follows the preferences' cookies.
	addVary(&ctx.Response.Header, "Cookie")
	d.Prefs = readPrefs(ctx)
	cur := d.Prefs.Language
	if d.Search != nil {
		cur = d.Search.Language
	}
	d.Languages = languageOptions(cur)
	d.Lang, d.Dir = langDir(cur)
	d.Script = d.Prefs.Autocomplete || d.Prefs.Hotkeys != "" || d.Prefs.InfiniteScroll ||
		(d.Search != nil && len(d.Search.Images) > 0)
	// Straight into the response's body: fasthttp pools its buffers, so a
	// page costs no buffer growing and no copy.
	ctx.Response.ResetBody()
	if err := s.tmpl.ExecuteTemplate(ctx.Response.BodyWriter(), name, d); err != nil {
		s.log.Error("rendering a page failed", "template", name, "err", err)
		ctx.Response.ResetBody()
		plainError(ctx, fasthttp.StatusInternalServerError, "Internal Server Error")
		return
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("text/html; charset=utf-8")
}

func (s *Server) index(ctx *fasthttp.RequestCtx) {
	// The title is the gateway's name alone: "searxgate", not
	// "searxgate - searxgate".
	s.render(ctx, fasthttp.StatusOK, "index.html", pageData{})
}

// errorPage answers status with the error page; retrySecs > 0 tells when
// to try again (the Retry-After sent with it).
func (s *Server) errorPage(ctx *fasthttp.RequestCtx, status int, req proxy.Request, msg string, retrySecs int64, causes ...string) {
	d := pageData{Title: "Error", Query: clean(req.Query, proxy.MaxQueryLen), Status: status, Message: clean(msg, maxContent)}
	if len(causes) > 0 {
		// The page lists the causes under the message: said once.
		d.Message = clean(strings.SplitN(msg, ". ", 2)[0], maxContent)
		for _, c := range causes {
			d.Causes = append(d.Causes, clean(c, maxContent))
		}
	}
	if retrySecs > 0 {
		d.RetryIn = ago(time.Duration(retrySecs) * time.Second)
	}
	d.Message = pageMessage(status, d.Message, retrySecs > 0)
	if req.Query != "" {
		d.Retry = "/search?" + req.Values(req.PageNo).Encode()
	}
	s.render(ctx, status, "error.html", d)
}

// pageMessage is an error's message as the error page shows it below its
// heading: a 503's "no instance answered: " is the heading's words, and
// "; retry in N s" the page's own line, so neither is said twice.
func pageMessage(status int, msg string, retryLine bool) string {
	if status == fasthttp.StatusServiceUnavailable {
		if rest, ok := strings.CutPrefix(msg, "no instance answered: "); ok && rest != "" {
			msg = strings.ToUpper(rest[:1]) + rest[1:]
		}
	}
	if i := strings.LastIndex(msg, "; retry in "); retryLine && i > 0 {
		msg = msg[:i]
	}
	return msg
}

func (s *Server) writeHTML(ctx *fasthttp.RequestCtx, req proxy.Request, r *results.Page, res *proxy.Response) {
	pr := readPrefs(ctx)
	image := s.images.link
	if !pr.ImageProxy {
		image = func(string) string { return "" }
	}
	// The tabs' links need the cookies' categories alone: the general tab
	// must name its category only when a cookie would choose another.
	ck := cookiePrefs(ctx)
	p := buildSearchPage(req, r, res, image, &ck, tabsOffered(s.offeredCategories()))
	p.Thin = clean(res.Thin(), maxContent)
	d := pageData{Query: p.Query, Search: p}
	if pr.QueryInTitle {
		d.Title = p.Query
	}
	s.render(ctx, fasthttp.StatusOK, "results.html", d)
}

// setControls fills in the page's tabs, time ranges and safe-search
// choices for req.
func (p *searchPage) setControls(req proxy.Request, pr *prefs, tabs []string) {
	p.Category = "general"
	if len(req.Categories) == 1 && slices.Contains(tabs, req.Categories[0]) {
		p.Category = req.Categories[0]
	}
	for _, c := range tabs {
		q := req
		q.Categories = []string{c}
		if c == "general" {
			q.Categories = nil
			if pr != nil && len(pr.Categories) > 0 {
				// Else the preference would choose the categories again.
				q.Categories = []string{"general"}
			}
		}
		p.Tabs = append(p.Tabs, tab{Name: c, Label: categoryLabels[c], Href: "/search?" + q.Values(1).Encode(),
			Active: c == p.Category && (len(req.Categories) <= 1)})
	}
	for _, o := range [][2]string{{"", "Any time"}, {"day", "Past day"}, {"week", "Past week"}, {"month", "Past month"}, {"year", "Past year"}} {
		p.TimeRanges = append(p.TimeRanges, option{o[0], o[1], req.TimeRange == o[0]})
	}
	for _, o := range [][2]string{{"", "Safe search: default"}, {"0", "Safe search: off"}, {"1", "Safe search: moderate"}, {"2", "Safe search: strict"}} {
		p.SafeSearch = append(p.SafeSearch, option{o[0], o[1], req.SafeSearch == o[0]})
	}
}

// setResults fills in what the answer r says: answers, corrections,
// suggestions, infoboxes, results and images, the count and the engines
// that failed.
func (p *searchPage) setResults(req proxy.Request, r *results.Page, image func(string) string) {
	for i := range r.Answers {
		a := &r.Answers[i]
		if t := clean(a.Text(), maxContent); t != "" {
			p.Answers = append(p.Answers, answerView{Text: t, Href: a.URL, Host: clean(cmp.Or(a.Host(), a.URL), maxTitle)})
		}
	}
	for _, list := range []struct {
		in  []string
		out *[]link
	}{{r.Corrections, &p.Corrections}, {r.Suggestions, &p.Suggestions}} {
		for _, c := range list.in {
			c = clean(c, maxTitle)
			if c == "" {
				continue
			}
			q := req
			q.Query = c
			*list.out = append(*list.out, link{Text: c, Href: "/search?" + q.Values(1).Encode()})
		}
	}
	for i := range r.Infoboxes {
		p.Infoboxes = append(p.Infoboxes, infoboxOf(&r.Infoboxes[i], image))
	}
	words := queryWords(req.Query)
	for i := range r.Results {
		v := resultOf(&r.Results[i], image)
		if v.Image != "" && (p.Category == "images" || r.Results[i].Template == "images.html") {
			p.Images = append(p.Images, v)
			continue
		}
		v.Snippet = snippetHTML(highlight(v.Content, words))
		p.Results = append(p.Results, v)
	}
	if r.NumberOfResults > 0 {
		p.Count = formatCount(r.NumberOfResults)
	}
	for _, e := range r.UnresponsiveEngines {
		p.Unresponse = append(p.Unresponse, clean(e[0], 60)+" ("+clean(e[1], 60)+")")
	}

}

// buildSearchPage turns an answer into what the page shows; image turns an
// upstream image URL into the page's link to it ("" = no image); pr are
// the preferences of the request's cookies (nil = none); tabs the
// categories of its tabs.
func buildSearchPage(req proxy.Request, r *results.Page, res *proxy.Response, image func(string) string, pr *prefs, tabs []string) *searchPage {
	p := &searchPage{Query: clean(req.Query, proxy.MaxQueryLen), PageNo: req.PageNo, Language: req.Language}
	if p.PageNo < 1 {
		p.PageNo = 1
	}
	p.setControls(req, pr, tabs)
	if r != nil {
		p.setResults(req, r, image)
	}
	if p.PageNo > 1 {
		p.Prev = "/search?" + req.Values(p.PageNo-1).Encode()
	}
	for _, f := range [][2]string{{"json", "JSON"}, {"csv", "CSV"}, {"rss", "RSS"}} {
		v := req.Values(p.PageNo)
		v.Set("format", f[0])
		p.Formats = append(p.Formats, link{Text: f[1], Href: "/search?" + v.Encode()})
	}
	if len(p.Results)+len(p.Images) > 0 {
		p.Next = "/search?" + req.Values(p.PageNo+1).Encode()
	}
	if res != nil {
		// A fan-out's answer names every instance that answered,
		// comma-separated.
		for _, in := range strings.Split(res.Instance, ",") {
			if h := clean(hostOf(strings.TrimSpace(in)), maxURLText); h != "" {
				p.Instances = append(p.Instances, h)
			}
		}
		p.Took = formatMS(float64(res.Elapsed) / float64(time.Millisecond))
		switch {
		case res.Stale:
			p.Cache = "from the cache (stale: no instance answered)"
		case res.Cached:
			p.Cache = "from the cache"
		case res.Coalesced:
			p.Cache = "shared with an identical search"
		}
		p.Soft = res.Soft
	}
	return p
}

// queryWords matches the words of query's terms (its syntax, such as
// bangs and :de, left out) in any case; nil when it has none.
func queryWords(query string) *regexp.Regexp {
	var alts []string
	for _, w := range strings.Fields(detect.ParseQuery(query).Terms()) {
		w = strings.Trim(w, `"'()[]{},.;:!?`)
		if utf8.ValidString(w) && utf8.RuneCountInString(w) >= 2 && !slices.Contains(alts, regexp.QuoteMeta(w)) {
			alts = append(alts, regexp.QuoteMeta(w))
		}
	}
	if len(alts) == 0 {
		return nil
	}
	// Longest first, so "hello world" marks "hello" whole, not "he".
	slices.SortFunc(alts, func(a, b string) int { return len(b) - len(a) })
	re, err := regexp.Compile(`(?i)` + strings.Join(alts, "|"))
	if err != nil {
		return nil // a query too long to match: nothing is marked
	}
	return re
}

// highlight cuts text where words match, for the page to mark them.
func highlight(text string, words *regexp.Regexp) []textPart {
	if text == "" {
		return nil
	}
	if words == nil {
		return []textPart{{Text: text}}
	}
	var parts []textPart
	at := 0
	for _, m := range words.FindAllStringIndex(text, 64) {
		if m[0] > at {
			parts = append(parts, textPart{Text: text[at:m[0]]})
		}
		parts = append(parts, textPart{Text: text[m[0]:m[1]], Mark: true})
		at = m[1]
	}
	if at < len(text) {
		parts = append(parts, textPart{Text: text[at:]})
	}
	return parts
}

// snippetHTML writes parts as HTML element content: each part's text
// escaped, the marked ones in <mark>.
func snippetHTML(parts []textPart) template.HTML {
	var b strings.Builder
	for _, p := range parts {
		if p.Mark {
			b.WriteString("<mark>")
		}
		template.HTMLEscape(&b, []byte(p.Text))
		if p.Mark {
			b.WriteString("</mark>")
		}
	}
	return template.HTML(b.String()) // every byte of text escaped above
}

func resultOf(x *results.Result, image func(string) string) resultView {
	v := resultView{URL: safeURL(x.URL), Title: clean(x.Title, maxTitle), Content: clean(x.Content, maxContent)}
	if v.URL != "" {
		v.Display = clean(displayURL(v.URL), maxURLText)
	}
	if v.Title == "" {
		v.Title = v.Display
	}
	if v.Title == "" {
		v.Title = "(untitled)"
	}
	engines := x.Engines
	if len(engines) == 0 && x.Engine != "" {
		engines = []string{x.Engine}
	}
	for _, e := range engines {
		if e = clean(e, 40); e != "" && !slices.Contains(v.Engines, e) && len(v.Engines) < 8 {
			v.Engines = append(v.Engines, e)
		}
	}
	// An image result's grid picture is its thumbnail_src, as SearXNG's
	// images template has it (an engine's "thumbnail" there may be
	// something else, or nothing a browser can show); other results show
	// their thumbnail.
	if x.Template == "images.html" {
		v.Thumbnail = image(extraString(x, "thumbnail_src"))
	}
	if v.Thumbnail == "" {
		v.Thumbnail = image(x.Thumbnail)
	}
	if v.Thumbnail == "" {
		v.Thumbnail = image(extraString(x, "thumbnail_src"))
	}
	if x.ImgSrc != "" {
		v.Image = image(x.ImgSrc)
	}
	if v.Thumbnail == "" {
		v.Thumbnail = v.Image
	}
	if v.Image != "" {
		v.Resolution = clean(extraString(x, "resolution"), 40)
		v.Source = clean(extraString(x, "source"), maxTitle)
	}
	v.Video = x.Template == "videos.html" || x.Category == "videos"
	if v.URL != "" && v.Image == "" && archivable(v.URL) {
		v.Cached = "https://web.archive.org/web/" + v.URL
	}
	if t, ok := parseDate(x.PublishedDate); ok {
		v.Published = t.Format("2 Jan 2006")
	}
	return v
}

// extraString is a string field of an upstream result that searxgate
// keeps as it came (Result.Extra), "" when absent or not a string.
func extraString(x *results.Result, name string) string {
	raw, ok := x.Extra[name]
	if !ok {
		return ""
	}
	var v string
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	return v
}

// formatCount writes a result count as people read it: "12,300".
func formatCount(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func infoboxOf(ib *results.Infobox, image func(string) string) infoboxView {
	v := infoboxView{Title: clean(ib.Infobox, maxTitle), Content: clean(ib.Content, 4*maxContent), Image: image(ib.ImgSrc)}
	for _, u := range ib.URLs {
		if h := safeURL(u.URL); h != "" {
			t := clean(u.Title, maxTitle)
			if t == "" {
				t = clean(displayURL(h), maxURLText)
			}
			v.URLs = append(v.URLs, link{Text: t, Href: h})
		}
	}
	for _, a := range ib.Attributes {
		if l, val := clean(a.Label, maxTitle), clean(a.Value, maxContent); l != "" || val != "" {
			v.Attributes = append(v.Attributes, link{Text: l, Href: val})
		}
	}
	return v
}

// displayURL is a link as people read it: host and path, decoded.
func displayURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	s := p.Host + p.Path
	if d, err := url.PathUnescape(s); err == nil {
		s = d
	}
	return strings.TrimSuffix(s, "/")
}

// hostOf is an instance URL without its scheme and final slash.
func hostOf(u string) string {
	u = strings.TrimPrefix(strings.TrimPrefix(u, "https://"), "http://")
	return strings.TrimSuffix(u, "/")
}

// formatMS writes a duration in ms as people read it: "85 ms", "1.2 s".
func formatMS(ms float64) string {
	switch {
	case ms < 0 || ms != ms:
		return "–"
	case ms < 1000:
		return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
	case ms < 60_000:
		return strconv.FormatFloat(ms/1000, 'f', 1, 64) + " s"
	}
	return strconv.FormatFloat(ms/60_000, 'f', 1, 64) + " min"
}

// archivable reports whether the Wayback Machine can hold a copy of u:
// not of a page on loopback, a private address or localhost, which it
// cannot reach (the demo's pages among them).
func archivable(u string) bool {
	pu, err := url.Parse(u)
	if err != nil {
		return false
	}
	h := strings.TrimSuffix(strings.ToLower(pu.Hostname()), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return false
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		ip = ip.Unmap()
		return !(ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsUnspecified())
	}
	return true
}
