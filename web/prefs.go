package web

import (
	"net/url"
	"slices"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/proxy"
)

// prefs are what a person chose on /preferences, named as SearXNG names
// them (its form fields and its cookies, one cookie per preference). They
// live in the browser's cookies only: searxgate keeps no state per person.
// A parameter of the request beats the cookie of the same name, so a
// "settings URL" works where cookies are cleared.
type prefs struct {
	Categories      []string // the default categories of a search; empty = general
	Language        string   // "" = auto, as the search form's default
	SafeSearch      string   // "", "0", "1", "2"
	TimeRange       string   // "", day, week, month, year
	Autocomplete    bool     // suggestions as you type (the script), off by default
	Theme           string   // auto, light, dark
	ResultsOnNewTab bool
	Method          string // GET or POST: how the search form sends
	ImageProxy      bool   // show images (always through /image_proxy); off = no images at all
	QueryInTitle    bool
	InfiniteScroll  bool
	CenterAlignment bool
	Hotkeys         string // "" (off) or vim
}

// defaultPrefs are the preferences of someone who chose nothing.
// The query is not in the page's title unless asked (SearXNG's privacy
// default, query_in_title: false): a title ends up in history and tabs.
var defaultPrefs = prefs{Theme: "auto", Method: "GET", ImageProxy: true}

// prefNames are the preferences' cookie and parameter names, in the order
// a settings URL lists them. Never modified.
var prefNames = []string{"categories", "language", "safesearch", "time_range", "autocomplete", "theme",
	"results_on_new_tab", "method", "image_proxy", "query_in_title", "infinite_scroll", "center_alignment", "hotkeys"}

// prefCookieAge is how long a preference cookie lasts: five years, as
// SearXNG's do.
const prefCookieAge = 5 * 365 * 24 * 3600

// readPrefs reads the preferences of a request: each from the request's
// parameter of its name when there is one, else from its cookie, else the
// default. A value that is not one the preference takes is ignored.
func readPrefs(ctx *fasthttp.RequestCtx) prefs {
	return prefsFrom(func(name string) (string, bool) {
		if v, ok := peekParam(ctx, name); ok {
			return string(v), true
		}
		if v := ctx.Request.Header.Cookie(name); v != nil {
			return string(v), true
		}
		return "", false
	})
}

// cookiePrefs reads the preferences of a request's cookies alone: what
// fills in a search that does not say.
func cookiePrefs(ctx *fasthttp.RequestCtx) prefs {
	return prefsFrom(func(name string) (string, bool) {
		if v := ctx.Request.Header.Cookie(name); v != nil {
			return string(v), true
		}
		return "", false
	})
}

// prefsFrom reads preferences from get, which says a value and whether
// there is one.
func prefsFrom(get func(name string) (string, bool)) prefs {
	p := defaultPrefs
	for _, name := range prefNames {
		if v, ok := get(name); ok {
			p.set(name, v)
		}
	}
	return p
}

// set sets one preference from its form or cookie value; a value the
// preference does not take leaves it as it was.
func (p *prefs) set(name, v string) {
	v = strings.TrimSpace(v)
	switch name {
	case "categories":
		var cs []string
		for _, c := range strings.Split(strings.ToLower(v), ",") {
			if c = strings.TrimSpace(c); slices.Contains(searxngCategories, c) && !slices.Contains(cs, c) {
				cs = append(cs, c)
			}
		}
		if len(cs) > 0 || v == "" {
			slices.Sort(cs)
			p.Categories = cs
		}
	case "language":
		if v == "" || v == "auto" {
			p.Language = ""
		} else if v == "all" || languageLabel(v) != "" || validPrefLanguage(v) {
			p.Language = v
		}
	case "safesearch":
		if v == "" || v == "0" || v == "1" || v == "2" {
			p.SafeSearch = v
		}
	case "time_range":
		switch v {
		case "", "day", "week", "month", "year":
			p.TimeRange = v
		case "None":
			p.TimeRange = ""
		}
	case "theme":
		if v == "auto" || v == "light" || v == "dark" {
			p.Theme = v
		}
	case "method":
		if u := strings.ToUpper(v); u == "GET" || u == "POST" {
			p.Method = u
		}
	case "hotkeys":
		switch v {
		case "vim":
			p.Hotkeys = v
		case "", "off", "default":
			p.Hotkeys = ""
		}
	case "autocomplete":
		// SearXNG names a backend here; searxgate's is the pool's own,
		// so any name is "on" and "" is off.
		p.Autocomplete = v != "" && v != "0" && v != "off"
	default:
		if b, ok := parseBool(v); ok {
			switch name {
			case "results_on_new_tab":
				p.ResultsOnNewTab = b
			case "image_proxy":
				p.ImageProxy = b
			case "query_in_title":
				p.QueryInTitle = b
			case "infinite_scroll":
				p.InfiniteScroll = b
			case "center_alignment":
				p.CenterAlignment = b
			}
		}
	}
}

// parseBool reads SearXNG's boolean values: "1"/"0", also "on", "true"
// and their opposites.
func parseBool(v string) (bool, bool) {
	switch strings.ToLower(v) {
	case "1", "on", "true", "yes":
		return true, true
	case "0", "off", "false", "no":
		return false, true
	}
	return false, false
}

func validPrefLanguage(v string) bool {
	_, err := proxy.ParseRequest(mapParams{"q": "x", "language": v})
	return err == nil
}

// mapParams is a proxy.Params from a map.
type mapParams map[string]string

func (m mapParams) Get(name string) (string, bool) {
	v, ok := m[name]
	return v, ok
}

// value is one preference as its cookie and its form field write it.
func (p *prefs) value(name string) string {
	b := func(v bool) string {
		if v {
			return "1"
		}
		return "0"
	}
	switch name {
	case "categories":
		return strings.Join(p.Categories, ",")
	case "language":
		if p.Language == "" {
			return "auto"
		}
		return p.Language
	case "safesearch":
		return p.SafeSearch
	case "time_range":
		return p.TimeRange
	case "autocomplete":
		if p.Autocomplete {
			return "searxgate"
		}
		return ""
	case "theme":
		return p.Theme
	case "results_on_new_tab":
		return b(p.ResultsOnNewTab)
	case "method":
		return p.Method
	case "image_proxy":
		return b(p.ImageProxy)
	case "query_in_title":
		return b(p.QueryInTitle)
	case "infinite_scroll":
		return b(p.InfiniteScroll)
	case "center_alignment":
		return b(p.CenterAlignment)
	case "hotkeys":
		return p.Hotkeys
	}
	return ""
}

// URLValues is every preference that differs from the default, for a
// settings URL.
func (p *prefs) URLValues() url.Values {
	v := url.Values{}
	d := defaultPrefs
	for _, name := range prefNames {
		if p.value(name) != d.value(name) {
			v.Set(name, p.value(name))
		}
	}
	return v
}

// searchParams are the preferences SearXNG takes on a search, which
// searxgate sends upstream: what a link to a search (the OpenSearch
// template) carries. Only those that differ from the default.
func (p *prefs) searchParams() url.Values {
	v := url.Values{}
	if len(p.Categories) > 0 {
		v.Set("categories", strings.Join(p.Categories, ","))
	}
	if p.Language != "" {
		v.Set("language", p.Language)
	}
	if p.SafeSearch != "" {
		v.Set("safesearch", p.SafeSearch)
	}
	if p.TimeRange != "" {
		v.Set("time_range", p.TimeRange)
	}
	return v
}

// withPrefs is a request's parameters with the preferences filling in the
// search parameters the request does not give: a parameter of the request
// beats its cookie.
type withPrefs struct {
	params
	p *prefs
}

func (w withPrefs) Get(name string) (string, bool) {
	v, ok := w.params.Get(name)
	if ok && v != "" {
		return v, ok
	}
	// An empty value (the form's "default" choice) chose the default,
	// which readPrefs took from the parameter too: the switch below
	// gives nothing for it. SearXNG refuses an empty safesearch; the
	// form sends one, so it is no parameter here.
	switch name {
	case "categories":
		if len(w.p.Categories) > 0 {
			return strings.Join(w.p.Categories, ","), true
		}
	case "language":
		if w.p.Language != "" {
			return w.p.Language, true
		}
	case "safesearch":
		if w.p.SafeSearch != "" {
			return w.p.SafeSearch, true
		}
	case "time_range":
		if w.p.TimeRange != "" {
			return w.p.TimeRange, true
		}
	}
	return "", false
}

// languages are the search form's short list of languages (plus "auto"
// and "all"), as SearXNG names them. Never modified.
var languages = [][2]string{
	{"all", "All languages"},
	{"ar", "العربية (Arabic)"}, {"de", "Deutsch"}, {"en", "English"}, {"es", "Español"}, {"fa", "فارسی (Persian)"},
	{"fr", "Français"}, {"he", "עברית (Hebrew)"}, {"hi", "हिन्दी (Hindi)"}, {"id", "Bahasa Indonesia"}, {"it", "Italiano"},
	{"ja", "日本語 (Japanese)"}, {"ko", "한국어 (Korean)"}, {"nl", "Nederlands"}, {"pl", "Polski"}, {"pt", "Português"},
	{"ru", "Русский"}, {"sv", "Svenska"}, {"tr", "Türkçe"}, {"uk", "Українська"}, {"zh", "中文 (Chinese)"},
}

// languageLabel is the name of a language of the short list, "" for
// another.
func languageLabel(code string) string {
	for _, l := range languages {
		if l[0] == code {
			return l[1]
		}
	}
	return ""
}

// languageOptions are the search form's choices of language, with cur
// selected; a code not on the list is added, so that the form keeps it.
func languageOptions(cur string) []option {
	out := []option{{Value: "auto", Label: "Language: auto", Selected: cur == "" || cur == "auto"}}
	found := cur == "" || cur == "auto"
	for _, l := range languages {
		out = append(out, option{Value: l[0], Label: l[1], Selected: l[0] == cur})
		found = found || l[0] == cur
	}
	if !found {
		out = append(out, option{Value: cur, Label: cur, Selected: true})
	}
	return out
}

// rtlLanguages are the languages written right to left.
var rtlLanguages = []string{"ar", "fa", "he", "ur", "ps", "sd", "yi", "dv", "ug", "ckb"}

// langDir is the lang and dir attributes for content in language l ("" =
// not known: the page's own English).
func langDir(l string) (lang, dir string) {
	if l == "" || l == "auto" || l == "all" {
		return "", ""
	}
	base, _, _ := strings.Cut(l, "-")
	if slices.Contains(rtlLanguages, base) {
		return l, "rtl"
	}
	return l, "ltr"
}

// setPrefCookies answers with a cookie for every preference: the value
// chosen, or an expired cookie for one at its default (so that clearing a
// choice forgets it).
func setPrefCookies(ctx *fasthttp.RequestCtx, p *prefs, secure bool) {
	d := defaultPrefs
	for _, name := range prefNames {
		c := fasthttp.AcquireCookie()
		c.SetKey(name)
		c.SetPath("/")
		c.SetHTTPOnly(true)
		c.SetSameSite(fasthttp.CookieSameSiteLaxMode)
		c.SetSecure(secure)
		if v := p.value(name); v != d.value(name) {
			c.SetValue(v)
			c.SetMaxAge(prefCookieAge)
		} else {
			c.SetValue("")
			c.SetExpire(fasthttp.CookieExpireDelete)
		}
		ctx.Response.Header.SetCookie(c)
		fasthttp.ReleaseCookie(c)
	}
}
