package web

import (
	"net/url"
	"slices"
	"strings"

	"github.com/valyala/fasthttp"
)

// check is one checkbox of a form.
type check struct {
	Value, Label string
	Checked      bool
}

// boolField is one on/off preference of the form.
type boolField struct {
	Name, Label, Help string
	On                bool
}

// prefsView is what preferences.html shows.
type prefsView struct {
	Saved, Reset bool
	Categories   []check
	SafeSearch   []option
	TimeRanges   []option
	Themes       []option
	Methods      []option
	Hotkeys      []option
	Autocomplete []option
	Bools        []boolField
	// SettingsURL opens /preferences with these preferences and saves
	// them: for people whose browser forgets cookies.
	SettingsURL string
	// SearchURL is a search with the preferences in its URL, as the
	// OpenSearch description gives it to the browser.
	SearchURL string
}

// preferences serves /preferences: the form (GET), the choice saved in
// cookies (POST, or a GET with save=1: the settings URL), and the choice
// forgotten (POST with reset=1). Nothing is kept on the server.
func (s *Server) preferences(ctx *fasthttp.RequestCtx) {
	secure := ctx.IsTLS() || strings.HasPrefix(s.cfg.PublicURL, "https://")
	ctx.Response.Header.Set("Cache-Control", "no-store")
	if ctx.IsPost() {
		if len(ctx.PostArgs().Peek("reset")) > 0 {
			setPrefCookies(ctx, &defaultPrefs, secure)
			ctx.Redirect("/preferences?reset=1", fasthttp.StatusSeeOther)
			return
		}
		p := defaultPrefs
		args := ctx.PostArgs()
		for _, name := range prefNames {
			switch {
			case name == "categories":
				var cs []string
				for _, v := range args.PeekMulti(name) {
					cs = append(cs, string(v))
				}
				p.set(name, strings.Join(cs, ","))
			case args.Has(name):
				p.set(name, string(args.Peek(name)))
			}
		}
		setPrefCookies(ctx, &p, secure)
		ctx.Redirect("/preferences?saved=1", fasthttp.StatusSeeOther)
		return
	}
	p := readPrefs(ctx)
	if string(param(ctx, "save")) == "1" {
		setPrefCookies(ctx, &p, secure)
		ctx.Redirect("/", fasthttp.StatusSeeOther)
		return
	}
	base := s.baseURL(ctx)
	ctx.Response.Header.Set("Cache-Control", "no-store") // baseURL may have set "private"
	v := &prefsView{Saved: string(param(ctx, "saved")) == "1", Reset: string(param(ctx, "reset")) == "1"}
	for _, c := range searxngCategories {
		v.Categories = append(v.Categories, check{c, categoryLabel(c), slices.Contains(p.Categories, c) || (len(p.Categories) == 0 && c == "general")})
	}
	for _, o := range [][2]string{{"", "Each instance's default"}, {"0", "Off"}, {"1", "Moderate"}, {"2", "Strict"}} {
		v.SafeSearch = append(v.SafeSearch, option{o[0], o[1], p.SafeSearch == o[0]})
	}
	for _, o := range [][2]string{{"", "Any time"}, {"day", "Past day"}, {"week", "Past week"}, {"month", "Past month"}, {"year", "Past year"}} {
		v.TimeRanges = append(v.TimeRanges, option{o[0], o[1], p.TimeRange == o[0]})
	}
	for _, o := range [][2]string{{"auto", "As the system's (auto)"}, {"light", "Light"}, {"dark", "Dark"}} {
		v.Themes = append(v.Themes, option{o[0], o[1], p.Theme == o[0]})
	}
	for _, o := range [][2]string{{"GET", "GET (the search is in the address)"}, {"POST", "POST (the search is not in the address or the history)"}} {
		v.Methods = append(v.Methods, option{o[0], o[1], p.Method == o[0]})
	}
	for _, o := range [][2]string{{"", "Off"}, {"vim", "Vim-style (j, k, o, /, h for help)"}} {
		v.Hotkeys = append(v.Hotkeys, option{o[0], o[1], p.Hotkeys == o[0]})
	}
	for _, o := range [][2]string{{"", "Off"}, {"searxgate", "On: the instances' own suggestions"}} {
		v.Autocomplete = append(v.Autocomplete, option{o[0], o[1], p.value("autocomplete") == o[0]})
	}
	v.Bools = []boolField{
		{"image_proxy", "Images", "Thumbnails and image results, always through searxgate's image proxy (no image site sees your address). Off shows no images at all.", p.ImageProxy},
		{"results_on_new_tab", "Open results in a new tab", "", p.ResultsOnNewTab},
		{"query_in_title", "Search in the page's title", "The title (and so the browser's history and tabs) names what you searched.", p.QueryInTitle},
		{"infinite_scroll", "Infinite scroll", "The next page of results loads when you reach the end of one (needs the page's small script).", p.InfiniteScroll},
		{"center_alignment", "Centre the page", "", p.CenterAlignment},
	}
	set := p.URLValues()
	set.Set("save", "1")
	v.SettingsURL = base + "preferences?" + set.Encode()
	q := p.searchParams()
	q.Set("q", "searxgate")
	v.SearchURL = base + "search?" + q.Encode()
	s.render(ctx, fasthttp.StatusOK, "preferences.html", pageData{Title: "Preferences", Pref: v})
}

func categoryLabel(c string) string {
	if l := categoryLabels[c]; l != "" {
		return l
	}
	return strings.ToUpper(c[:1]) + c[1:]
}

// aboutView is what about.html shows.
type aboutView struct {
	Version             string
	Instances, Usable   int
	CacheTTL, CacheKeep string // how long an answer is served, and kept ("" = none is)
	OpenSearch, Example string
}

// about serves /about: what searxgate is, who answers, what it keeps and
// for how long, and how to add it to a browser.
func (s *Server) about(ctx *fasthttp.RequestCtx) {
	base := s.baseURL(ctx)
	v := &aboutView{Version: s.cfg.Version, OpenSearch: base + "opensearch.xml", Example: base + "search?q=%s"}
	if s.cfg.CacheTTL > 0 {
		v.CacheTTL, v.CacheKeep = ago(s.cfg.CacheTTL), ago(max(s.cfg.CacheKeep, s.cfg.CacheTTL))
	}
	if s.cfg.Pool != nil {
		now := s.cfg.Clock.Now()
		for _, st := range s.cfg.Pool.Snapshot() {
			v.Instances++
			if p := s.cfg.Proxy; p != nil {
				if ok, _ := p.Instances().Usable(st, now); ok {
					v.Usable++
				}
			}
		}
	}
	s.render(ctx, fasthttp.StatusOK, "about.html", pageData{Title: "About", About: v})
}

// openSearchTemplate is the results template of /opensearch.xml: a search
// with the preferences of the browser that reads it (its cookies), so
// that searches from the address bar are made as its pages' are.
func openSearchTemplate(base string, p *prefs) string {
	q := p.searchParams()
	// {searchTerms} must stay as it is: built by hand after the others.
	t := base + "search?q={searchTerms}"
	if len(q) > 0 {
		t += "&" + q.Encode()
	}
	return t
}

// suggestTemplate is the suggestions template of /opensearch.xml, in the
// language of the browser's preferences.
func suggestTemplate(base string, p *prefs) string {
	t := base + "autocompleter?q={searchTerms}"
	if p.Language != "" {
		t += "&" + url.Values{"language": {p.Language}}.Encode()
	}
	return t
}
