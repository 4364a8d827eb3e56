package web

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/sim"
)

// setCookies sends one request and returns the cookies its answer sets
// (name → value; "" for one it deletes), the status and the Location.
func (c *tester) setCookies(method, uri, body string, headers ...string) (map[string]string, int, string) {
	c.t.Helper()
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI("http://gateway.test" + uri)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	if body != "" {
		req.SetBodyString(body)
		req.Header.SetContentType("application/x-www-form-urlencoded")
	}
	if err := c.c.DoTimeout(req, resp, 10*time.Second); err != nil {
		c.t.Fatalf("%s %s: %v", method, uri, err)
	}
	out := map[string]string{}
	for k, v := range resp.Header.Cookies() {
		ck := fasthttp.AcquireCookie()
		if err := ck.ParseBytes(v); err != nil {
			c.t.Fatalf("cookie %s: %v", k, err)
		}
		if ck.Path() == nil || string(ck.Path()) != "/" || !ck.HTTPOnly() || ck.SameSite() != fasthttp.CookieSameSiteLaxMode {
			c.t.Errorf("cookie %s is not Path=/, HttpOnly, SameSite=Lax: %s", k, v)
		}
		out[string(k)] = string(ck.Value())
		fasthttp.ReleaseCookie(ck)
	}
	return out, resp.StatusCode(), string(resp.Header.Peek("Location"))
}

func TestPreferencesApplyToEverySearchAndAParameterBeatsTheCookie(t *testing.T) {
	const cookies = "language=de; safesearch=2; categories=news; time_range=week"
	for _, tc := range []struct {
		name, uri, cookie               string
		lang, safe, timeRange, category string
	}{
		{"cookies alone", "/search?q=hello", cookies, "de", "2", "week", "news"},
		{"the URL wins", "/search?q=hello&language=fr&safesearch=0&time_range=year&categories=it", cookies, "fr", "0", "year", "it"},
		{"JSON too", "/search?q=hello&format=json", cookies, "de", "2", "week", "news"},
		// The results page's form sends what its menus show, and they
		// show the preferences: an empty value is a choice of the
		// default, which beats the cookie too.
		{"empty form values", "/search?q=hello&safesearch=&language=&time_range=", cookies, "", "", "", "news"},
		{"no cookie", "/search?q=hello", "", "", "", "", ""},
		{"bad cookies are ignored", "/search?q=hello", "language=<x>; safesearch=9; time_range=ever; categories=nope", "", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := &fakeSearch{answer: jsonAnswer(simpleAnswer, "https://up.example/")}
			_, c := serve(t, Config{Search: fs})
			var r reply
			if tc.cookie != "" {
				r = c.get(tc.uri, "Cookie", tc.cookie)
			} else {
				r = c.get(tc.uri)
			}
			if r.status != 200 {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			got := fs.last()
			cat := strings.Join(got.Categories, ",")
			if got.Language != tc.lang || got.SafeSearch != tc.safe || got.TimeRange != tc.timeRange || cat != tc.category {
				t.Errorf("searched with language %q safesearch %q time_range %q categories %q, want %q %q %q %q",
					got.Language, got.SafeSearch, got.TimeRange, cat, tc.lang, tc.safe, tc.timeRange, tc.category)
			}
		})
	}
}

func TestPreferencesAreSavedInCookiesOnly(t *testing.T) {
	_, c := serve(t, Config{Search: &fakeSearch{answer: jsonAnswer(simpleAnswer, "https://up.example/")}})
	got, status, loc := c.setCookies("POST", "/preferences", "categories=general&categories=news&language=de&safesearch=2&time_range=&autocomplete=searxgate"+
		"&theme=dark&method=POST&image_proxy=1&results_on_new_tab=1&query_in_title=1&infinite_scroll=0&center_alignment=1&hotkeys=vim")
	if status != fasthttp.StatusSeeOther || !strings.HasSuffix(loc, "/preferences?saved=1") {
		t.Fatalf("POST /preferences: %d to %q", status, loc)
	}
	want := map[string]string{"categories": "general,news", "language": "de", "safesearch": "2", "autocomplete": "searxgate", "theme": "dark",
		"method": "POST", "results_on_new_tab": "1", "query_in_title": "1", "center_alignment": "1", "hotkeys": "vim",
		// At their defaults: deleted, so that a default chosen later is not stuck.
		"time_range": "", "image_proxy": "", "infinite_scroll": ""}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("cookie %s = %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(prefNames) {
		t.Errorf("%d cookies set, want one per preference (%d): %v", len(got), len(prefNames), got)
	}

	// The page shows them, and the settings URL that saves them again.
	cookie := "categories=general,news; language=de; safesearch=2; autocomplete=searxgate; theme=dark; method=POST; results_on_new_tab=1; query_in_title=1; center_alignment=1; hotkeys=vim"
	r := c.get("/preferences", "Cookie", cookie)
	for _, w := range []string{
		`<option value="de" selected>Deutsch</option>`,
		`<option value="2" selected>Strict</option>`,
		`<input type="checkbox" name="categories" value="news" checked>`,
		`<html lang="en" dir="ltr" class="dark center" data-autocomplete="1" data-hotkeys="vim" data-infinite-scroll="0">`,
		`<script src="/static/searxgate.js" defer></script>`,
		`<form class="searchform" id="searchform" method="post"`,
		`value="http://gateway.test/preferences?autocomplete=searxgate&amp;categories=general%2Cnews&amp;center_alignment=1&amp;hotkeys=vim&amp;language=de&amp;method=POST&amp;query_in_title=1&amp;results_on_new_tab=1&amp;safesearch=2&amp;save=1&amp;theme=dark"`,
	} {
		if !strings.Contains(r.body, w) {
			t.Errorf("/preferences lacks %q", w)
		}
	}
	if r.header["Cache-Control"] != "no-store" {
		t.Errorf("/preferences is Cache-Control %q", r.header["Cache-Control"])
	}

	// The settings URL, opened in a browser without cookies, saves them.
	got, status, loc = c.setCookies("GET", "/preferences?language=fr&safesearch=1&hotkeys=vim&save=1", "")
	if status != fasthttp.StatusSeeOther || !strings.HasSuffix(loc, "gateway.test/") || got["language"] != "fr" || got["safesearch"] != "1" || got["hotkeys"] != "vim" {
		t.Errorf("the settings URL: %d to %q, cookies %v", status, loc, got)
	}

	// Reset forgets every one.
	got, status, _ = c.setCookies("POST", "/preferences", "reset=1", "Cookie", cookie)
	for _, name := range prefNames {
		if v, ok := got[name]; !ok || v != "" {
			t.Errorf("reset: cookie %s = %q (set: %v), want deleted", name, v, ok)
		}
	}
	if status != fasthttp.StatusSeeOther {
		t.Errorf("reset: status %d", status)
	}
}

func TestPagesWithoutPreferencesLoadNoScript(t *testing.T) {
	_, c := serve(t, Config{Search: &fakeSearch{answer: jsonAnswer(simpleAnswer, "https://up.example/")}})
	for _, uri := range []string{"/", "/search?q=hello", "/preferences", "/about", "/nowhere"} {
		r := c.get(uri)
		if strings.Contains(r.body, "<script") {
			t.Errorf("%s loads a script though no preference asks for one", uri)
		}
		if !strings.Contains(r.body, `<a class="skip" href="#main">`) || !strings.Contains(r.body, `id="main"`) {
			t.Errorf("%s has no link to skip to its content", uri)
		}
	}
	r := c.get("/static/searxgate.js")
	if r.status != 200 || r.header["Content-Type"] != "text/javascript; charset=utf-8" || !strings.Contains(r.body, "/autocompleter") {
		t.Errorf("/static/searxgate.js: %d %q", r.status, r.header["Content-Type"])
	}
}

func TestTitles(t *testing.T) {
	_, c := serve(t, Config{Search: &fakeSearch{answer: jsonAnswer(simpleAnswer, "https://up.example/")}})
	for _, tc := range []struct{ uri, cookie, want string }{
		{"/", "", "<title>searxgate</title>"},
		// SearXNG's privacy default: the query is not in the title unless
		// asked (query_in_title).
		{"/search?q=hello", "", "<title>searxgate</title>"},
		{"/search?q=hello", "query_in_title=1", "<title>hello - searxgate</title>"},
		{"/search?q=hello", "query_in_title=0", "<title>searxgate</title>"},
		{"/preferences", "", "<title>Preferences - searxgate</title>"},
		{"/about", "", "<title>About - searxgate</title>"},
	} {
		r := c.get(tc.uri, "Cookie", tc.cookie)
		if !strings.Contains(r.body, tc.want) {
			t.Errorf("%s (cookie %q) lacks %s", tc.uri, tc.cookie, tc.want)
		}
	}
}

func TestOpenSearchCarriesThePreferences(t *testing.T) {
	_, c := serve(t, Config{Search: &fakeSearch{answer: jsonAnswer(simpleAnswer, "https://up.example/")}, PublicURL: "https://search.example/"})
	r := c.get("/opensearch.xml", "Cookie", "language=de; safesearch=2; theme=dark; autocomplete=searxgate")
	if want := `template="https://search.example/search?q={searchTerms}&amp;language=de&amp;safesearch=2"`; !strings.Contains(r.body, want) {
		t.Errorf("opensearch.xml lacks %s:\n%s", want, r.body)
	}
	if want := `template="https://search.example/autocompleter?q={searchTerms}&amp;language=de"`; !strings.Contains(r.body, want) {
		t.Errorf("opensearch.xml lacks %s", want)
	}
	if r.header["Cache-Control"] != "private" {
		t.Errorf("an OpenSearch description made from cookies is Cache-Control %q", r.header["Cache-Control"])
	}
	r = c.get("/opensearch.xml")
	if want := `template="https://search.example/search?q={searchTerms}"`; !strings.Contains(r.body, want) {
		t.Errorf("opensearch.xml without cookies lacks %s", want)
	}
}

func TestLanguageOnTheFormAndRightToLeftResults(t *testing.T) {
	fs := &fakeSearch{answer: jsonAnswer(simpleAnswer, "https://up.example/")}
	_, c := serve(t, Config{Search: fs})
	r := c.get("/")
	if !strings.Contains(r.body, `<select name="language" aria-label="Search language"><option value="auto" selected>Language: auto</option>`) {
		t.Errorf("the home page's form has no language choice")
	}
	r = c.get("/search?q=hello&language=ar")
	if fs.last().Language != "ar" {
		t.Errorf("language %q sent upstream", fs.last().Language)
	}
	for _, w := range []string{`<option value="ar" selected>`, `<main class="results" id="main" lang="ar" dir="rtl">`, `<h3 dir="auto">`} {
		if !strings.Contains(r.body, w) {
			t.Errorf("an Arabic search's page lacks %q", w)
		}
	}
	r = c.get("/search?q=hello&language=pt-BR")
	if !strings.Contains(r.body, `<option value="pt-BR" selected>pt-BR</option>`) || !strings.Contains(r.body, `lang="pt-BR" dir="ltr"`) {
		t.Errorf("a language off the short list is not kept by the form")
	}
}

func TestFanoutAnsweredByListsEachInstance(t *testing.T) {
	fs := &fakeSearch{answer: func(proxy.Request) (*proxy.Response, error) {
		return &proxy.Response{JSON: []byte(simpleAnswer), Instance: "https://a.example/,https://b.example/searx/", Fanout: "3/2", Attempts: 2, Elapsed: time.Second}, nil
	}}
	_, c := serve(t, Config{Search: fs})
	r := c.get("/search?q=hello&fanout=3")
	if want := `Answered by <a href="/status">a.example</a>, <a href="/status">b.example/searx</a> in 1.0 s`; !strings.Contains(r.body, want) {
		t.Errorf("page lacks %q", want)
	}
}

const imageAnswer = `{"query":"cat","number_of_results":12300,"results":[` +
	`{"url":"https://photos.example/cat/1","title":"A cat","content":"A cat on a wall","engine":"bing images","engines":["bing images"],"template":"images.html","category":"images",` +
	`"img_src":"https://img.example/cat1.jpg","thumbnail_src":"https://img.example/cat1-small.jpg","thumbnail":"https://img.example/cat1-engine-page","resolution":"1920 x 1080","source":"photos.example"},` +
	`{"url":"https://photos.example/cat/2","title":"Another cat","content":"","engine":"bing images","template":"images.html","category":"images",` +
	`"img_src":"https://img.example/cat2.jpg"}],` +
	`"answers":[],"corrections":[],"infoboxes":[],"suggestions":[],"unresponsive_engines":[]}`

// TestImageResultsAreAGridWithADetailView: the grid shows an image
// result's thumbnail_src (SearXNG's images template), not its thumbnail.
func TestImageResultsAreAGridWithADetailView(t *testing.T) {
	s, c := serve(t, Config{Search: &fakeSearch{answer: jsonAnswer(imageAnswer, "https://up.example/")}})
	r := c.get("/search?q=cat&categories=images")
	thumb, full := s.images.link("https://img.example/cat1-small.jpg"), s.images.link("https://img.example/cat1.jpg")
	for _, w := range []string{
		`<ul class="imagegrid" id="imagegrid"><li><a class="imagelink" id="i0" href="#image-0" aria-label="A cat"><img src="` + strings.ReplaceAll(thumb, "&", "&amp;") + `"`,
		// Focusable, so that the script moves the keyboard into it when
		// it opens; the script is on every page of images.
		`<section class="imagedetail" id="image-0" aria-labelledby="image-0-title" tabindex="-1">`,
		`<script src="/static/searxgate.js" defer></script>`,
		`<img src="` + strings.ReplaceAll(full, "&", "&amp;") + `" alt="A cat"`,
		`<dt>Resolution</dt><dd>1920 x 1080</dd>`,
		`<dt>Source</dt><dd dir="auto">photos.example</dd>`,
		`<a href="https://photos.example/cat/1" rel="noreferrer noopener">Source page</a>`,
		`<a class="close" href="#i0">Close`,
		`<a href="#image-1">Next image →</a>`,
		`<a href="#image-0">← Previous image</a>`,
		`About 12,300 results`,
	} {
		if !strings.Contains(r.body, w) {
			t.Errorf("the images page lacks %q", w)
		}
	}
	if strings.Contains(r.body, `<article class="result">`) {
		t.Error("image results are drawn as text results too")
	}
	// Without the image_proxy preference: no image at all, text results.
	r = c.get("/search?q=cat&categories=images", "Cookie", "image_proxy=0")
	if strings.Contains(r.body, "/image_proxy?") || strings.Contains(r.body, "imagegrid") || !strings.Contains(r.body, `<article class="result">`) {
		t.Error("with image_proxy off the page still shows images")
	}
}

func TestResultCountAndCachedLink(t *testing.T) {
	_, c := serve(t, Config{Search: &fakeSearch{answer: jsonAnswer(strings.Replace(simpleAnswer, `"number_of_results":0`, `"number_of_results":1234567`, 1), "https://up.example/")}})
	r := c.get("/search?q=hello")
	for _, w := range []string{`About 1,234,567 results`,
		`<a class="cached" href="https://web.archive.org/web/https://example.org/hello" rel="noreferrer noopener">cached<span class="visually-hidden">: Hello world at the web archive</span></a>`} {
		if !strings.Contains(r.body, w) {
			t.Errorf("page lacks %q", w)
		}
	}
	r = c.get("/search?q=hello", "Cookie", "results_on_new_tab=1")
	if !strings.Contains(r.body, `<a href="https://example.org/hello" rel="noreferrer noopener" target="_blank">Hello world</a>`) {
		t.Error("results_on_new_tab does not open results in a new tab")
	}
}

func TestAboutPage(t *testing.T) {
	p, px := publicPool(t, "https://a.example/", "https://b.example/")
	_ = p
	_, c := serve(t, Config{Proxy: px, Pool: p, CacheTTL: time.Hour, CacheKeep: 25 * time.Hour, Version: "1.2.3"})
	r := c.get("/about")
	for _, w := range []string{"The pool has 2 instances; 2 can be searched now.", `<a href="/status">status page</a>`,
		"served for 1 h, and kept up to 25 h in all", "Searches are not logged.", `<a href="/preferences">preferences</a>`} {
		if !strings.Contains(r.body, w) {
			t.Errorf("/about lacks %q", w)
		}
	}
	_, c = serve(t, Config{Proxy: px, Pool: p})
	if r := c.get("/about"); !strings.Contains(r.body, "This gateway keeps no answers.") {
		t.Error("/about without a cache does not say it keeps no answers")
	}
}

func TestPrefsRoundTrip(t *testing.T) {
	p := defaultPrefs
	for name, v := range map[string]string{"categories": "it,news", "language": "de", "safesearch": "1", "time_range": "month", "autocomplete": "searxgate",
		"theme": "light", "results_on_new_tab": "1", "method": "POST", "image_proxy": "0", "query_in_title": "0", "infinite_scroll": "1",
		"center_alignment": "1", "hotkeys": "vim"} {
		p.set(name, v)
		if got := p.value(name); got != v {
			t.Errorf("%s: set %q, reads %q", name, v, got)
		}
	}
	back := prefsFrom(func(name string) (string, bool) {
		v := p.URLValues()
		return v.Get(name), v.Has(name)
	})
	if back.value("categories") != "it,news" || back.Hotkeys != "vim" || back.ImageProxy || !back.InfiniteScroll {
		t.Errorf("the settings URL does not carry the preferences: %+v", back)
	}
}

// TestTypingCannotSpendTheSearchesBudget is one person typing a query
// letter by letter with suggestions on, at worst (no debounce: a request
// per letter): each is answered 200 (a list, empty once autocompletion's
// own budget is spent: never a refusal the page would show), the
// instance is asked no more than that budget allows, and the search that
// follows is answered by the same instance, its budget untouched.
func TestTypingCannotSpendTheSearchesBudget(t *testing.T) {
	lf := startLive(t, []sim.InstanceConfig{{ID: "only", Behaviour: sim.Fast, JSON: true, Latency: -1, Autocomplete: "duckduckgo"}})
	lf.proxy.Instances().ReadTermsNow(context.Background(), lf.fleet.URLs())
	_, c := serve(t, Config{Proxy: lf.proxy, Pool: lf.pool})
	before := lf.fleet.Instance("only").Truth()
	typed := "browser privacy settings"
	for i := 3; i <= len(typed); i++ {
		r := c.get("/autocompleter?q="+url.QueryEscape(typed[:i]), "X-Requested-With", "XMLHttpRequest")
		if r.status != 200 || !strings.HasPrefix(r.body, "[") {
			t.Fatalf("suggestions for %q: %d %s", typed[:i], r.status, r.body)
		}
	}
	after := lf.fleet.Instance("only").Truth()
	asked := (after.Requests - after.Searches - after.ConfigReads) - (before.Requests - before.Searches - before.ConfigReads)
	t.Logf("%d keystrokes asked the instance %d times", len(typed)-2, asked)
	if asked < 1 || asked > 2 {
		t.Errorf("%d keystrokes asked the instance's /autocompleter %d times, want 1 or 2 (autocompletion's budget: 2 per 20 s)", len(typed)-2, asked)
	}
	r := c.get("/search?q=" + url.QueryEscape(typed) + "&format=json")
	if r.status != 200 || r.header[HeaderInstance] != lf.fleet.Instance("only").URL() {
		t.Errorf("the search after typing: %d from %q: %s", r.status, r.header[HeaderInstance], r.body)
	}
}

func TestMapMusicAndFilesTabsOnlyWhenOffered(t *testing.T) {
	if got := strings.Join(tabsOffered(func(string) bool { return false }), ","); got != "general,images,news,videos,science,it" {
		t.Errorf("tabs with nothing offered: %s", got)
	}
	offered := map[string]bool{"music": true, "files": true, "social media": true}
	if got := strings.Join(tabsOffered(func(c string) bool { return offered[c] }), ","); got != "general,images,news,videos,science,it,music,files" {
		t.Errorf("tabs with music and files offered: %s", got)
	}
	p := buildSearchPage(proxy.Request{Query: "q", Categories: []string{"music"}}, nil, nil, func(string) string { return "" }, nil,
		tabsOffered(func(c string) bool { return offered[c] }))
	if p.Category != "music" || !p.Tabs[6].Active || p.Tabs[6].Label != "Music" {
		t.Errorf("a music search's page: category %q, tabs %+v", p.Category, p.Tabs)
	}
}

func TestPagesVaryByCookie(t *testing.T) {
	_, c := serve(t, Config{Search: &fakeSearch{answer: jsonAnswer(simpleAnswer, "https://up.example/")}})
	for _, uri := range []string{"/", "/search?q=hello", "/preferences", "/about"} {
		if v := c.get(uri).header["Vary"]; !strings.Contains(v, "Cookie") {
			t.Errorf("%s: Vary %q, but the page follows the preference cookies", uri, v)
		}
	}
	if v := c.get("/opensearch.xml", "Cookie", "language=de").header["Vary"]; v != "Host, Cookie" {
		t.Errorf("/opensearch.xml with preferences: Vary %q, want \"Host, Cookie\"", v)
	}
}

func TestTheGeneralTabNamesItsCategoryOnlyWhenACookieChoosesAnother(t *testing.T) {
	_, c := serve(t, Config{Search: &fakeSearch{answer: jsonAnswer(simpleAnswer, "https://up.example/")}})
	if r := c.get("/search?q=hello&categories=images"); !strings.Contains(r.body, `<a href="/search?q=hello">General</a>`) {
		t.Error("without a cookie the general tab names a category (another cache key for the same search)")
	}
	if r := c.get("/search?q=hello&categories=images", "Cookie", "categories=news"); !strings.Contains(r.body, `<a href="/search?categories=general&amp;q=hello">General</a>`) {
		t.Error("with a categories cookie the general tab does not name its category: the cookie would choose news again")
	}
}
