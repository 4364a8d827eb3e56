package web

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy"
)

// openSearch serves /opensearch.xml in SearXNG's shape, with GET result and
// suggestion templates built from the public URL or the address used.
func (s *Server) openSearch(ctx *fasthttp.RequestCtx) {
	base := s.baseURL(ctx)
	name := xmlEscape(s.cfg.InstanceName)
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?>` + "\n")
	b.WriteString(`<OpenSearchDescription xmlns="http://a9.com/-/spec/opensearch/1.1/" xmlns:moz="http://www.mozilla.org/2006/browser/search/">` + "\n")
	b.WriteString("  <ShortName>" + name + "</ShortName>\n")
	b.WriteString("  <LongName>" + name + " metasearch</LongName>\n")
	b.WriteString("  <Description>" + name + " answers from a pool of public SearXNG instances.</Description>\n")
	b.WriteString("  <InputEncoding>UTF-8</InputEncoding>\n")
	b.WriteString(`  <Image type="image/svg+xml">` + xmlEscape(base+"static/favicon.svg") + "</Image>\n")
	pr := readPrefs(ctx)
	if len(pr.searchParams()) > 0 {
		// Made for this browser's cookies: no shared cache may keep it.
		ctx.Response.Header.Set("Cache-Control", "private")
		addVary(&ctx.Response.Header, "Cookie")
	}
	b.WriteString(`  <Url rel="results" type="text/html" method="GET" template="` + xmlEscape(openSearchTemplate(base, &pr)) + `"/>` + "\n")
	if pr.Autocomplete {
		// Only when suggestions are on, as SearXNG: a browser sends what
		// is typed in its address bar to a suggestions URL it is offered.
		b.WriteString(`  <Url rel="suggestions" type="application/x-suggestions+json" method="GET" template="` + xmlEscape(suggestTemplate(base, &pr)) + `"/>` + "\n")
	}
	b.WriteString(`  <Url rel="self" type="application/opensearchdescription+xml" method="GET" template="` + xmlEscape(base+"opensearch.xml") + `"/>` + "\n")
	b.WriteString(`  <Query role="example" searchTerms="SearXNG"/>` + "\n")
	b.WriteString("  <moz:SearchForm>" + xmlEscape(base+"search") + "</moz:SearchForm>\n")
	b.WriteString("</OpenSearchDescription>\n")
	ctx.SetContentType("application/opensearchdescription+xml; charset=utf-8")
	ctx.SetBody(b.Bytes())
}

// autocompleteLanguage is what /autocompleter passes on as the language.
var autocompleteLanguage = regexp.MustCompile(`^(auto|all|[a-z]{2,3}(-[a-zA-Z]{2})?)$`)

// autocompleter answers /autocompleter as SearXNG does: a plain JSON list
// to its own pages (X-Requested-With: XMLHttpRequest), OpenSearch's
// [prefix, [suggestions]] to a browser's address bar. When no instance
// can suggest, the list is empty.
func (s *Server) autocompleter(ctx *fasthttp.RequestCtx) {
	if ctx.IsHead() { // costs no instance anything
		ctx.SetContentType("application/json")
		return
	}
	q := clean(string(param(ctx, "q")), 256)
	lang := string(param(ctx, "language"))
	if !autocompleteLanguage.MatchString(lang) {
		lang = ""
	}
	list := []string{}
	if q != "" && s.cfg.Autocomplete != nil {
		c, cancel := context.WithTimeout(proxy.WithClient(context.Background(), s.client(ctx)), 3*time.Second)
		got, err := s.cfg.Autocomplete.Autocomplete(c, q, lang)
		cancel()
		if err != nil {
			s.log.Debug("no suggestions", "err", err)
		}
		for _, x := range got {
			if x = clean(x, 256); x != "" && len(list) < 20 {
				list = append(list, x)
			}
		}
	}
	var v any = []any{q, list}
	ctype := "application/x-suggestions+json"
	if string(ctx.Request.Header.Peek("X-Requested-With")) == "XMLHttpRequest" {
		v, ctype = list, "application/json"
	}
	b, _ := json.Marshal(v)
	ctx.Response.Header.Set("Cache-Control", "private, max-age=300")
	ctx.SetContentType(ctype)
	ctx.SetBody(b)
}

// searxngCategories are SearXNG's categories, in its order. Never modified.
var searxngCategories = []string{"general", "images", "videos", "news", "map", "music", "it", "science", "files", "social media"}

// config serves /config in SearXNG's shape. The engines are those the
// pool's instances said they run in their own /config, merged (see
// configEngine), with how many run each; the categories are those the
// engines have.
func (s *Server) config(ctx *fasthttp.RequestCtx) {
	autocomplete := ""
	versions := map[string]int{}
	n := 0
	engines := map[string]*configEngine{}
	if s.cfg.Pool != nil {
		counts := map[string]int{}
		for _, st := range s.cfg.Pool.Snapshot() {
			n++
			if s.cfg.Proxy == nil {
				continue
			}
			c := s.cfg.Proxy.Instances().Caps(st.URL)
			for _, e := range c.Engines {
				ce := engines[e.Name]
				if ce == nil {
					ce = &configEngine{Name: e.Name, Categories: e.Categories, Shortcut: e.Shortcut, Enabled: true}
					engines[e.Name] = ce
				}
				ce.add(&e)
			}
			// Offered unless the pool holds it back for a while (its own
			// rule, Stats.PoolWhy): disabled, or cooling down.
			if w := st.PoolWhy; c.Autocomplete != "" && w != pool.WhyDisabled && w != pool.WhyCircuitOpen {
				counts[c.Autocomplete]++
			}
			if c.Version != "" {
				versions[c.Version]++
			}
		}
		best := 0
		for _, k := range sortedKeys(counts) {
			if counts[k] > best {
				autocomplete, best = k, counts[k]
			}
		}
	}
	v := map[string]any{
		"autocomplete": autocomplete,
		"brand": map[string]any{
			"CONTACT_URL": false, "DOCS_URL": "https://docs.searxng.org/", "GIT_BRANCH": "master",
			"GIT_URL": "https://github.com/searxng/searxng", "PRIVACYPOLICY_URL": false,
		},
		"default_doi_resolver": "oadoi.org",
		"default_locale":       "",
		"default_theme":        "simple",
		"doi_resolvers":        []string{"oadoi.org", "doi.org"},
		"categories":           configCategories(engines),
		"engines":              configEngines(engines),
		"instance_name":        s.cfg.InstanceName,
		"limiter": map[string]any{
			"botdetection.ip_limit.link_token":       false,
			"botdetection.ip_lists.pass_searxng_org": false,
			"enabled":                                false,
		},
		"locales":         map[string]string{"en": "English"},
		"plugins":         []any{},
		"public_instance": false,
		"safe_search":     0,
		"version":         s.cfg.Version,
		"searxgate": map[string]any{
			"instances":         n,
			"upstream_versions": versions,
			"formats":           []string{"html", "json", "csv", "rss"},
		},
	}
	writeJSON(ctx, fasthttp.StatusOK, v)
}

// configEngine is one engine of /config, in SearXNG's shape (its keys
// sorted, as SearXNG's jsonify writes them): an engine that at least one
// instance of the pool runs, as their /config said. Its name, categories
// and shortcut are the first instance's; it can do what any of the
// instances' engines can (a search may go to any of them), in the
// languages and regions of them all, and may take the longest of their
// timeouts.
type configEngine struct {
	Categories       []string `json:"categories"`
	Enabled          bool     `json:"enabled"`
	Instances        int      `json:"instances"` // how many instances run it
	LanguageSupport  bool     `json:"language_support"`
	Languages        []string `json:"languages"`
	Name             string   `json:"name"`
	Paging           bool     `json:"paging"`
	Regions          []string `json:"regions"`
	SafeSearch       bool     `json:"safesearch"`
	Shortcut         string   `json:"shortcut"`
	TimeRangeSupport bool     `json:"time_range_support"`
	Timeout          float64  `json:"timeout"`

	languages, regions map[string]bool
}

// add merges what one more instance says of the engine.
func (ce *configEngine) add(e *proxy.Engine) {
	ce.Instances++
	ce.Paging = ce.Paging || e.Paging
	ce.LanguageSupport = ce.LanguageSupport || e.LanguageSupport
	ce.SafeSearch = ce.SafeSearch || e.SafeSearch
	ce.TimeRangeSupport = ce.TimeRangeSupport || e.TimeRangeSupport
	ce.Timeout = max(ce.Timeout, e.Timeout)
	ce.languages = addAll(ce.languages, e.Languages)
	ce.regions = addAll(ce.regions, e.Regions)
}

func addAll(set map[string]bool, list []string) map[string]bool {
	if len(list) > 0 && set == nil {
		set = make(map[string]bool, len(list))
	}
	for _, x := range list {
		set[x] = true
	}
	return set
}

// configEngines lists the pool's engines by name, each with its
// languages and regions sorted.
func configEngines(m map[string]*configEngine) []*configEngine {
	out := make([]*configEngine, 0, len(m))
	for _, k := range sortedKeys(m) {
		e := m[k]
		if e.Categories == nil {
			e.Categories = []string{}
		}
		e.Languages, e.Regions = sortedKeys(e.languages), sortedKeys(e.regions)
		out = append(out, e)
	}
	return out
}

// configCategories is the categories the pool's engines have, SearXNG's
// in its order first, then the others sorted; SearXNG's own list until
// an instance's engines are known. (SearXNG's /config lists the
// categories its engines have: one the pool has no engine for is not
// offered.)
func configCategories(m map[string]*configEngine) []string {
	if len(m) == 0 {
		return slices.Clone(searxngCategories)
	}
	has := map[string]bool{}
	for _, e := range m {
		for _, c := range e.Categories {
			has[c] = true
		}
	}
	var out, more []string
	for _, c := range searxngCategories {
		if has[c] {
			out = append(out, c)
			delete(has, c)
		}
	}
	for c := range has {
		more = append(more, c)
	}
	slices.Sort(more)
	return append(out, more...)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
