package sim

import (
	"html"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The version every simulated instance reports (/config, the generator
// meta tag, the footer, the directory), as the captures in
// shared/fixtures/searxng were made with it.
const searxngVersion = "2024.10.5+c49a2707c"

// page is one answer to a search, before it is written as JSON or HTML.
type page struct {
	Query           string // what was searched: the query without its syntax
	Typed           string // the query as typed, which the HTML page's box shows
	Syntax          string // the query's syntax, which the HTML page's suggestions keep
	PageNo          int
	HasNext         bool
	NumberOfResults int
	Results         []result
	Answers         []string
	Corrections     []string
	Infoboxes       []infobox
	Suggestions     []string
	Unresponsive    [][2]string // engine, reason
	// Raw writes titles, contents and URLs into the HTML page unescaped
	// (Hostile): the instance's own markup, not SearXNG's.
	Raw bool
	// RawBytes writes non-UTF-8 bytes into JSON strings as they are
	// (InvalidUTF8) instead of as U+FFFD.
	RawBytes bool
}

// infobox is one infobox of a page: attributes and links as label and
// value, title and URL.
type infobox struct {
	Title, Content, ImgSrc string
	Attributes, URLs       [][2]string
}

// result is one result of a page.
type result struct {
	URL           string
	Title         string
	Content       string
	Engine        string
	Engines       []string
	Position      int
	Score         float64
	Category      string
	PublishedDate string // "" = absent
	Thumbnail     string // "" = absent
	// An image result's (the images category): its image, a smaller
	// copy, its size and the site it is from; "" = absent.
	ImgSrc, ThumbnailSrc, Resolution, Source string
}

// site is what the pages of one instance need to know about it.
type site struct {
	Name         string // instance_name, the <title>
	BaseURL      string // "http://127.0.0.1:PORT/"
	JSON         bool   // JSON format enabled: the page offers the download
	TokenCSS     string // limiter's link token stylesheet path, "" = none
	LinkToken    bool
	Limiter      bool
	Public       bool
	EngineList   []string
	Categories   []string // the categories it has engines for; empty: general and images
	Autocomplete string   // the backend /config names
	// Rich: the demo's fleet (Config.LocalLinks), whose /config names
	// every category it answers apart and their engines.
	Rich bool
}

// writeJSON appends the classic SearXNG JSON answer (keys in SearXNG's
// order, Python's separators, non-ASCII as \u escapes) to b.
func writeJSON(b []byte, p *page) []byte {
	b = append(b, `{"query": `...)
	b = appendJSONString(b, p.Query, p.RawBytes)
	b = append(b, `, "number_of_results": `...)
	b = strconv.AppendInt(b, int64(p.NumberOfResults), 10)
	b = append(b, `, "results": [`...)
	for i, r := range p.Results {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, `{"url": `...)
		b = appendJSONString(b, r.URL, p.RawBytes)
		b = append(b, `, "title": `...)
		b = appendJSONString(b, r.Title, p.RawBytes)
		b = append(b, `, "content": `...)
		b = appendJSONString(b, r.Content, p.RawBytes)
		if r.PublishedDate != "" {
			b = append(b, `, "publishedDate": `...)
			b = appendJSONString(b, r.PublishedDate, false)
		}
		if r.Thumbnail != "" {
			b = append(b, `, "thumbnail": `...)
			b = appendJSONString(b, r.Thumbnail, false)
		}
		if r.ImgSrc != "" {
			b = append(b, `, "img_src": `...)
			b = appendJSONString(b, r.ImgSrc, false)
			b = append(b, `, "thumbnail_src": `...)
			b = appendJSONString(b, r.ThumbnailSrc, false)
			b = append(b, `, "resolution": `...)
			b = appendJSONString(b, r.Resolution, false)
			b = append(b, `, "source": `...)
			b = appendJSONString(b, r.Source, false)
		}
		b = append(b, `, "engine": `...)
		b = appendJSONString(b, r.Engine, false)
		b = append(b, `, "parsed_url": [`...)
		for j, part := range parsedURL(r.URL) {
			if j > 0 {
				b = append(b, ", "...)
			}
			b = appendJSONString(b, part, p.RawBytes)
		}
		b = append(b, `], "template": `...)
		if r.ImgSrc != "" {
			b = append(b, `"images.html"`...)
		} else {
			b = append(b, `"default.html"`...)
		}
		b = append(b, `, "engines": [`...)
		for j, e := range r.Engines {
			if j > 0 {
				b = append(b, ", "...)
			}
			b = appendJSONString(b, e, false)
		}
		b = append(b, `], "positions": [`...)
		b = strconv.AppendInt(b, int64(r.Position), 10)
		b = append(b, `], "score": `...)
		b = strconv.AppendFloat(b, r.Score, 'f', -1, 64)
		if r.Score == float64(int64(r.Score)) {
			b = append(b, ".0"...)
		}
		b = append(b, `, "category": `...)
		b = appendJSONString(b, r.Category, false)
		b = append(b, '}')
	}
	b = append(b, `], "answers": [`...)
	b = appendStrings(b, p.Answers, p.RawBytes)
	b = append(b, `], "corrections": [`...)
	b = appendStrings(b, p.Corrections, p.RawBytes)
	b = append(b, `], "infoboxes": [`...)
	for i, ib := range p.Infoboxes {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendInfobox(b, &ib)
	}
	b = append(b, `], "suggestions": [`...)
	b = appendStrings(b, p.Suggestions, p.RawBytes)
	b = append(b, `], "unresponsive_engines": [`...)
	for i, u := range p.Unresponsive {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, '[')
		b = appendJSONString(b, u[0], false)
		b = append(b, ", "...)
		b = appendJSONString(b, u[1], false)
		b = append(b, ']')
	}
	b = append(b, "]}"...)
	return b
}

// appendStrings appends list as the items of a JSON array.
func appendStrings(b []byte, list []string, raw bool) []byte {
	for i, v := range list {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendJSONString(b, v, raw)
	}
	return b
}

// appendInfobox appends one infobox as SearXNG's JSON has it
// (shared/fixtures/searxng-2026/json-search-rich-infobox-answer-correction.txt).
func appendInfobox(b []byte, ib *infobox) []byte {
	b = append(b, `{"infobox": `...)
	b = appendJSONString(b, ib.Title, false)
	b = append(b, `, "content": `...)
	b = appendJSONString(b, ib.Content, false)
	b = append(b, `, "img_src": `...)
	b = appendJSONString(b, ib.ImgSrc, false)
	pairs := func(b []byte, key1, key2 string, list [][2]string) []byte {
		for i, kv := range list {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = append(b, `{"`+key1+`": `...)
			b = appendJSONString(b, kv[0], false)
			b = append(b, `, "`+key2+`": `...)
			b = appendJSONString(b, kv[1], false)
			b = append(b, '}')
		}
		return b
	}
	b = append(b, `, "urls": [`...)
	b = pairs(b, "title", "url", ib.URLs)
	b = append(b, `], "attributes": [`...)
	b = pairs(b, "label", "value", ib.Attributes)
	b = append(b, `], "engine": "wikidata", "engines": ["wikidata"], "template": "default.html"}`...)
	return b
}

// appendJSONString appends s as a JSON string the way Python's json.dumps
// writes it (ensure_ascii): non-ASCII runes as \u escapes. With raw, bytes
// that are not UTF-8 are copied as they are; without, they become \ufffd.
func appendJSONString(b []byte, s string, raw bool) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"':
				b = append(b, '\\', '"')
			case c == '\\':
				b = append(b, '\\', '\\')
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			if raw {
				b = append(b, c)
			} else {
				b = append(b, `\ufffd`...)
			}
			i++
			continue
		}
		appendU := func(v rune) {
			b = append(b, '\\', 'u', hex[v>>12&0xf], hex[v>>8&0xf], hex[v>>4&0xf], hex[v&0xf])
		}
		if r >= 0x10000 {
			v := r - 0x10000
			appendU(0xd800 + (v>>10)&0x3ff)
			appendU(0xdc00 + v&0x3ff)
		} else {
			appendU(r)
		}
		i += size
	}
	return append(b, '"')
}

// parsedURL splits u the way Python's urllib.parse.urlparse does for
// SearXNG's parsed_url: scheme, netloc, path, params, query, fragment.
func parsedURL(u string) [6]string {
	var out [6]string
	rest := u
	if i := strings.Index(rest, ":"); i > 0 && !strings.ContainsAny(rest[:i], "/?#") {
		out[0], rest = rest[:i], rest[i+1:]
	}
	if strings.HasPrefix(rest, "//") {
		rest = rest[2:]
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		out[1], rest = rest[:end], rest[end:]
	}
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		out[5], rest = rest[i+1:], rest[:i]
	}
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		out[4], rest = rest[i+1:], rest[:i]
	}
	if i := strings.LastIndexByte(rest, ';'); i >= 0 && !strings.Contains(rest[i:], "/") {
		out[3], rest = rest[i+1:], rest[:i]
	}
	out[2] = rest
	return out
}

// qesc escapes s for a URL's query as SearXNG's links do (space as %20).
func qesc(s string) string { return strings.ReplaceAll(url.QueryEscape(s), "+", "%20") }

// esc escapes s for HTML text and attribute values, as Jinja does.
func esc(s string) string { return html.EscapeString(s) }

// highlight escapes text for HTML and wraps every case-insensitive
// occurrence of a word of query in <span class="highlight">, as SearXNG's
// highlight_content does. Matches are found on the raw text, so markup
// characters in the query cannot break the page.
func highlight(text, query string) string {
	// Each word once: a long query repeats its words (a 9,000-byte one,
	// 1,800 times), and each is tried at every position of the text.
	var words []string
	seen := map[string]bool{}
	for _, w := range strings.Fields(query) {
		if k := strings.ToLower(w); !seen[k] {
			seen[k] = true
			words = append(words, w)
		}
	}
	var sb strings.Builder
	last := 0
	for i := 0; i < len(text); {
		if !utf8.RuneStart(text[i]) {
			i++
			continue
		}
		n := 0
		for _, w := range words {
			if len(w) > n && i+len(w) <= len(text) && strings.EqualFold(text[i:i+len(w)], w) {
				n = len(w)
			}
		}
		if n == 0 {
			i++
			continue
		}
		sb.WriteString(esc(text[last:i]))
		sb.WriteString(`<span class="highlight">`)
		sb.WriteString(esc(text[i : i+n]))
		sb.WriteString(`</span>`)
		i += n
		last = i
	}
	sb.WriteString(esc(text[last:]))
	return sb.String()
}

// writeHead appends the simple theme's <head> and the opening of <body>.
func writeHead(sb *strings.Builder, s *site, query, endpoint string) {
	sb.WriteString(`<!DOCTYPE html>
<html class="no-js theme-auto center-aligment-no" lang="en-EN" >
<head>
  <meta charset="UTF-8">
  <meta name="description" content="SearXNG — a privacy-respecting, open metasearch engine">
  <meta name="keywords" content="SearXNG, search, search engine, metasearch, meta search">
  <meta name="generator" content="searxng/` + searxngVersion + `">
  <meta name="referrer" content="no-referrer">
  <meta name="robots" content="noarchive">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="HandheldFriendly" content="True">
  <meta http-equiv="X-UA-Compatible" content="IE=edge, chrome=1">
  <title>`)
	sb.WriteString(esc(s.Name))
	sb.WriteString("</title>\n")
	if endpoint == "results" {
		sb.WriteString(`<link rel="alternate" type="application/rss+xml" title="Searx search: `)
		sb.WriteString(esc(query))
		sb.WriteString(`" href="`)
		sb.WriteString(esc(s.BaseURL + "search?q=" + qesc(query) + "&categories=general&pageno=1&time_range=&language=auto&safesearch=0&format=rss"))
		sb.WriteString(`">`)
	}
	sb.WriteString(`  <link rel="stylesheet" href="/static/themes/simple/css/searxng.min.css" type="text/css" media="screen">
`)
	if s.TokenCSS != "" {
		sb.WriteString(`  <link rel="stylesheet" href="` + s.TokenCSS + `" type="text/css">
`)
	}
	sb.WriteString(`  <!--[if gte IE 9]>-->
  <script src="/static/themes/simple/js/searxng.head.min.js" client_settings="eyJhdXRvY29tcGxldGVfcHJvdmlkZXIiOiAiIiwgImF1dG9jb21wbGV0ZV9taW4iOiA0LCAiaHR0cF9tZXRob2QiOiAiUE9TVCJ9"></script>
  <!--<![endif]-->
  <link title="`)
	sb.WriteString(esc(s.Name))
	sb.WriteString(`" type="application/opensearchdescription+xml" rel="search" href="/opensearch.xml?method=POST&amp;autocomplete=">
  <link rel="icon" href="/static/themes/simple/img/favicon.png" sizes="any">
  <link rel="icon" href="/static/themes/simple/img/favicon.svg" type="image/svg+xml">
  <link rel="apple-touch-icon" href="/static/themes/simple/img/favicon.png">
</head>
<body class="`)
	switch endpoint {
	case "results":
		sb.WriteString("results_endpoint")
	case "index":
		sb.WriteString("index_endpoint")
	default:
		sb.WriteString("None_endpoint")
	}
	sb.WriteString(`" >
  <main id="main_`)
	if endpoint == "results" || endpoint == "index" {
		sb.WriteString(endpoint)
	} else {
		sb.WriteString("404")
	}
	sb.WriteString(`" class="">

    <nav id="links_on_top"><a href="/info/en/about" class="link_on_top_about"><span>About</span></a><a href="/preferences" class="link_on_top_preferences"><span>Preferences</span></a></nav>
`)
}

// writeFoot appends the footer and closes the page.
func writeFoot(sb *strings.Builder) {
	sb.WriteString(`  </main>
  <footer>
    <p>
    Powered by <a href="/info/en/about">searxng</a> - ` + searxngVersion + ` — a privacy-respecting, open metasearch engine<br>
        <a href="https://github.com/searxng/searxng">Source code</a>
        | <a href="https://github.com/searxng/searxng/issues">Issue tracker</a>
| <a href="/stats">Engine stats</a>        | <a href="https://searx.space">Public instances</a>
    </p>
  </footer>
  <!--[if gte IE 9]>-->
  <script src="/static/themes/simple/js/searxng.min.js"></script>
  <!--<![endif]-->
</body>
</html>`)
}

// hiddenInputs are the form fields SearXNG repeats in every form of the
// results page.
func hiddenInputs(sb *strings.Builder, query string, pageno int, indent string) {
	sb.WriteString(indent + `<input type="hidden" name="q" value="` + esc(query) + `" >
` + indent + `<input type="hidden" name="category_general" value="1" >
` + indent + `<input type="hidden" name="pageno" value="` + strconv.Itoa(pageno) + `" >
` + indent + `<input type="hidden" name="language" value="auto" >
` + indent + `<input type="hidden" name="time_range" value="" >
` + indent + `<input type="hidden" name="safesearch" value="0" >
` + indent + `<input type="hidden" name="theme" value="simple" >
`)
}

// writeHTML renders p as the simple theme's results page, modelled on
// SearXNG 2024.10.5 (shared/fixtures/searxng/a-search-html.txt): the same
// elements, ids and classes (#urls > article.result with h3 > a,
// a.url_wrapper, p.content, div.engines > span; #sidebar with
// #suggestions, #engines_msg, #search_url, #apis; #pagination).
func writeHTML(s *site, p *page) string {
	var sb strings.Builder
	sb.Grow(8192 + 1024*len(p.Results))
	writeHead(&sb, s, p.Typed, "results")
	sb.WriteString(`<form id="search" method="POST" action="/search" role="search">
  <div id="search_header">
    <a id="search_logo" href="/" tabindex="0" title="Display the front page">
      <span hidden>SearXNG</span>
    </a>
    <div id="search_view">
      <div class="search_box">
        <input id="q" name="q" type="text" placeholder="Search for..." tabindex="1" autocomplete="off" autocapitalize="none" spellcheck="false" autocorrect="off" dir="auto" value="`)
	sb.WriteString(esc(p.Typed))
	sb.WriteString(`">
        <button id="clear_search" type="reset" aria-label="clear" class="hide_if_nojs"><span class="show_if_nojs">clear</span></button>
        <button id="send_search" type="submit"name="category_general"aria-label="search"><span class="show_if_nojs">search</span></button>
      </div>
    </div>
<div id="categories" class="search_categories"><div id="categories_container">
<button type="submit" name="category_general" class="category category_button selected"><div class="category_name">general</div></button>
</div></div>  </div>
  <div class="search_filters">
<select class="language" id="language" name="language" aria-label="Search language"><option value="all">Default language [all]</option><option value="auto" selected="selected">Auto-detect (auto)</option><option value="de">
            Deutsch [de] 🌐</option><option value="en">
            English [en] 🌐</option><option value="en-US">
            English-United States [en-US] 🇺🇸</option><option value="fr">
            Français [fr] 🌐</option></select><select name="time_range" id="time_range" class="time_range" aria-label="Time range"><option id="time-range-anytime" value="" selected>Anytime</option><option id="time-range-day" value="day" >Last day</option><option id="time-range-week" value="week" >Last week</option><option id="time-range-month" value="month" >Last month</option><option id="time-range-year" value="year" >Last year</option></select><select  name="safesearch" id="safesearch" class="safesearch" aria-label="SafeSearch">
    <option value="2"  aria-label="Strict">SafeSearch: Strict</option>
    <option value="1"  aria-label="Moderate">SafeSearch: Moderate</option>
    <option value="0" selected="selected" aria-label="None">SafeSearch: None</option>
</select>  </div>
  <input type="hidden" name="theme" value="simple" >
</form>

<div id="results" class="`)
	if len(p.Results) > 0 {
		sb.WriteString("only_template_default")
	}
	sb.WriteString(`">
`)
	writeAnswers(&sb, p)
	sb.WriteString(`
    <div id="sidebar">`)
	writeInfoboxes(&sb, p)
	if len(p.Suggestions) > 0 {
		sb.WriteString(`<div id="suggestions" role="complementary" aria-labelledby="suggestions-title">
  <details class="sidebar-collapsable">
    <summary class="title" id="suggestions-title">Suggestions</summary>
    <div class="wrapper">`)
		for _, sug := range p.Suggestions {
			typed := sug // SearXNG's form asks the suggestion with the query's syntax
			if p.Syntax != "" {
				typed = p.Syntax + " " + sug
			}
			sb.WriteString(`<form method="POST" action="/search">
          <input type="hidden" name="q" value="` + esc(typed) + `"><input type="hidden" name="category_general" value="1"><input type="hidden" name="language" value="auto">
          <input type="hidden" name="time_range" value="">
          <input type="hidden" name="safesearch" value="0">
          <input type="hidden" name="theme" value="simple"><input type="submit" class="suggestion" role="link" value="&bull; ` + esc(sug) + `">
        </form>`)
		}
		sb.WriteString(`</div>
  </details>
</div>`)
	}
	if len(p.Unresponsive) > 0 {
		sb.WriteString(`<div id="engines_msg">
  <details class="sidebar-collapsable" open>
    <summary class="title" id="engines_msg-title">Messages from the search engines</summary>
    <table class="engine-stats" id="engines_msg-table">`)
		for _, u := range p.Unresponsive {
			sb.WriteString(`<tr>
        <td class="engine-name">
          <a href="/stats?engine=` + url.QueryEscape(u[0]) + `"
             title="View error logs and submit a bug report">` + esc(u[0]) + `</a>
        </td>
        <td class="response-error">` + esc(u[1]) + `</td>
      </tr>`)
		}
		sb.WriteString(`</table>
  </details>
</div>`)
	} else {
		// The engines' response times; SearXNG opens the box and titles it
		// as messages when nothing was found (a-search-html-noresults.txt).
		if len(p.Results) > 0 {
			sb.WriteString(`<div id="engines_msg">
  <details class="sidebar-collapsable">
    <summary class="title" id="engines_msg-title">Response time: 0.2 seconds</summary>
    <table class="engine-stats" id="engines_msg-table">`)
		} else {
			sb.WriteString(`<div id="engines_msg">
  <details class="sidebar-collapsable" open>
    <summary class="title" id="engines_msg-title">Messages from the search engines</summary>
    <table class="engine-stats" id="engines_msg-table">`)
		}
		for _, e := range s.EngineList {
			sb.WriteString(`<tr>
        <td class="engine-name"><a href="/stats?engine=` + e + `">` + e + `</a></td>
        <td class="response-time">
          <div class="bar-chart-value">0.2</div>
          <div class="bar-chart-graph" aria-labelledby="` + e + `_time" aria-hidden="true">
            <div class="bar-chart-bar bar100"></div>
          </div>
        </td>
      </tr>`)
		}
		sb.WriteString(`</table>
  </details>
</div>`)
	}
	sb.WriteString(`<div id="search_url" role="complementary" aria-labelledby="search_url-title">
  <details class="sidebar-collapsable">
    <summary class="title" id="search_url-title">Search URL</summary>
    <button id="copy_url" type="submit" data-copied-text="Copied">Copy</button>
    <div class="selectable_url">
      <pre>`)
	sb.WriteString(esc(s.BaseURL + "search?q=" + qesc(p.Typed) + "&language=auto&time_range=&safesearch=0&categories=general"))
	sb.WriteString(`</pre>
    </div>
  </details>
</div>`)
	if s.JSON {
		sb.WriteString(`<div id="apis" role="complementary" aria-labelledby="apis-title">
  <details class="sidebar-collapsable">
    <summary class="title" id="apis-title">Download results</summary>
    <div class="wrapper"><div class="left">
          <form method="POST" action="/search">
            <input type="hidden" name="q" value="` + esc(p.Typed) + `"><input type="hidden" name="category_general" value="1"><input type="hidden" name="pageno" value="` + strconv.Itoa(p.PageNo) + `">
            <input type="hidden" name="language" value="auto">
            <input type="hidden" name="time_range" value="">
            <input type="hidden" name="safesearch" value="0">
            <input type="hidden" name="format" value="json"><input type="submit" role="link" value="json">
          </form>
        </div></div>
  </details>
</div>`)
	}
	sb.WriteString(`<div id="sidebar-end-collapsable"></div>
    </div>
`)
	writeCorrections(&sb, p)
	sb.WriteString(`

    <div id="urls" role="main">
`)
	if p.NumberOfResults > 0 {
		sb.WriteString(`<div id="result_count"><small>Number of results: ` + groupDigits(p.NumberOfResults) + "</small></div>\n")
	}
	if len(p.Results) == 0 {
		sb.WriteString(`<div class="dialog-error-block" role="alert"><p><strong>Sorry!</strong></p><p>No results were found. You can try to:</p><ul><li>Refresh the page.</li><li>Search for another query or select another category (above).</li><li>Change the search engine used in the preferences: <a href="/preferences">/preferences</a></li><li>Switch to another instance: <a href="https://searx.space">https://searx.space</a></li></ul>
</div>`)
	}
	for _, r := range p.Results {
		writeArticle(&sb, p, &r)
	}
	sb.WriteString(`    </div>
    <div id="backToTop">
      <a href="#" aria-label="Back to top"></a>
    </div>
`)
	// SearXNG leaves the pagination out only when engines failed.
	if len(p.Results) > 0 || p.PageNo > 1 || len(p.Unresponsive) == 0 {
		writePagination(&sb, p)
	}
	sb.WriteString("</div>\n")
	writeFoot(&sb)
	return sb.String()
}

// writeAnswers, writeInfoboxes and writeCorrections append a page's
// answers, infoboxes and corrections in SearXNG's markup
// (shared/fixtures/searxng-2026/html-search-rich-infobox-answer-correction.txt).
func writeAnswers(sb *strings.Builder, p *page) {
	if len(p.Answers) == 0 {
		return
	}
	sb.WriteString(`    <div id="answers" role="complementary" aria-labelledby="answers-title">
      <h4 class="title" id="answers-title">Answers : </h4>`)
	for _, a := range p.Answers {
		sb.WriteString(`<div class="answer"><span>` + esc(a) + "</span>\n</div>")
	}
	sb.WriteString("</div>\n")
}

func writeInfoboxes(sb *strings.Builder, p *page) {
	if len(p.Infoboxes) == 0 {
		return
	}
	sb.WriteString(`<div id="infoboxes">
            <details open class="sidebar-collapsible">
              <summary class="title">Info</summary>`)
	for _, ib := range p.Infoboxes {
		t := esc(ib.Title)
		sb.WriteString(`<aside class="infobox" aria-label="` + t + `">
  <h2 class="title"><bdi>` + t + `</bdi></h2>`)
		if ib.ImgSrc != "" {
			sb.WriteString(`<img src="` + esc(ib.ImgSrc) + `" title="` + t + `" alt="` + t + `">`)
		}
		sb.WriteString(`<p><bdi>` + esc(ib.Content) + `</bdi></p><div class="attributes">`)
		for _, a := range ib.Attributes {
			sb.WriteString(`<dl>
          <dt><bdi>` + esc(a[0]) + ` :</bdi></dt><dd><bdi>` + esc(a[1]) + `</bdi></dd></dl>`)
		}
		sb.WriteString(`</div><div class="urls">
      <ul>`)
		for _, u := range ib.URLs {
			sb.WriteString(`<li class="url"><bdi><a href="` + esc(u[1]) + `" rel="noreferrer">` + esc(u[0]) + `</a></bdi></li>`)
		}
		sb.WriteString("</ul>\n    </div></aside>")
	}
	sb.WriteString("</details>\n          </div>")
}

func writeCorrections(sb *strings.Builder, p *page) {
	if len(p.Corrections) == 0 {
		return
	}
	sb.WriteString(`    <div id="corrections" role="complementary" aria-labelledby="corrections-title">
      <h4 id="corrections-title">Try searching for:</h4>`)
	for _, c := range p.Corrections {
		sb.WriteString(`
      <div class="left">
	      <form method="GET" action="/search" role="navigation">
          <input type="hidden" name="category_general" value="1">
          <input type="hidden" name="q" value="` + esc(c) + `">
          <input type="submit" role="link" value="` + esc(c) + `">
	      </form>
      </div>`)
	}
	sb.WriteString("\n    </div>")
}

// groupDigits writes n with commas between thousands, as SearXNG's
// English pages do.
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// writeArticle appends one article.result.
func writeArticle(sb *strings.Builder, p *page, r *result) {
	href, title, content := esc(r.URL), highlight(r.Title, p.Query), highlight(r.Content, p.Query)
	if p.Raw {
		href, title, content = r.URL, r.Title, r.Content
	}
	if r.ImgSrc != "" {
		// SearXNG's images.html, as its simple theme writes it (trimmed).
		sb.WriteString(`<article class="result result-images category-images"><a href="` + href + `" rel="noreferrer"><img class="image_thumbnail" src="` + esc(r.ThumbnailSrc) + `" title="` + esc(r.Title) + `" alt="` + esc(r.Title) + `" loading="lazy"></a>` +
			`<span class="title">` + esc(r.Title) + `</span><span class="source">` + esc(r.Source) + `</span><div class="detail"><p class="result-content">` + content + `</p>` +
			`<p class="result-resolution">` + esc(r.Resolution) + `</p><p class="result-engine"><span>` + esc(r.Engine) + `</span></p>` +
			`<a class="result-images-source" href="` + esc(r.ImgSrc) + `" rel="noreferrer">View source</a></div></article>
`)
		return
	}
	parts := parsedURL(r.URL)
	origin := parts[0] + "://" + parts[1]
	crumbs := strings.ReplaceAll(strings.Trim(parts[2], "/"), "/", " › ")
	sb.WriteString(`<article class="result result-default category-` + esc(r.Category) + ` ` + esc(r.Engine) + `"><a href="` + href + `" class="url_wrapper" rel="noreferrer"><span class="url_o1"><span class="url_i1">` + esc(origin) + `</span></span><span class="url_o2"><span class="url_i2"> › ` + esc(crumbs) + `</span></span></a>`)
	if r.Thumbnail != "" {
		sb.WriteString(`<a href="` + href + `" rel="noreferrer"><img class="thumbnail" src="` + esc(r.Thumbnail) + `" title="` + esc(r.Title) + `" alt="` + esc(r.Title) + `" loading="lazy"></a>`)
	}
	sb.WriteString(`<h3><a href="` + href + `" rel="noreferrer">` + title + `</a></h3>`)
	if r.PublishedDate != "" {
		sb.WriteString(`<time class="published_date" datetime="` + esc(r.PublishedDate) + `" >` + esc(r.PublishedDate[:min(10, len(r.PublishedDate))]) + `</time>`)
	}
	sb.WriteString(`  <p class="content">
    ` + content + `
  </p><div class="engines">
`)
	for _, e := range r.Engines {
		sb.WriteString(`<span>` + esc(e) + `</span>`)
	}
	sb.WriteString(`<a href="https://web.archive.org/web/` + href + `" class="cache_link" rel="noreferrer">cached</a>&lrm; </div><div class="break"></div></article>
`)
}

// writePagination appends nav#pagination: previous and next page forms
// and the numbered pages.
func writePagination(sb *strings.Builder, p *page) {
	sb.WriteString(`    <nav id="pagination" role="navigation">
`)
	if p.PageNo > 1 {
		sb.WriteString(`<form method="POST" action="/search" class="previous_page">
              <div class="left">
`)
		hiddenInputs(sb, p.Typed, p.PageNo-1, "                ")
		sb.WriteString(`<button role="link" type="submit">Previous page</button>
              </div>
          </form>
`)
	}
	if p.HasNext {
		sb.WriteString(`<form method="POST" action="/search" class="next_page">
              <div class="right">
`)
		hiddenInputs(sb, p.Typed, p.PageNo+1, "                ")
		sb.WriteString(`<button role="link"  type="submit">Next page</button>
              </div>
          </form>
`)
	}
	sb.WriteString(`        <div class="numbered_pagination">
`)
	first := max(1, p.PageNo-4)
	for n := first; n < first+10; n++ {
		sb.WriteString(`            <form method="POST" action="/search" class="page_number">
`)
		hiddenInputs(sb, p.Typed, n, "                ")
		if n == p.PageNo {
			sb.WriteString(`                <input role="link" class="page_number_current" type="button" value="` + strconv.Itoa(n) + `">
`)
		} else {
			sb.WriteString(`                <input role="link" class="page_number" type="submit" value="` + strconv.Itoa(n) + `">
`)
		}
		sb.WriteString("            </form>\n")
	}
	sb.WriteString(`        </div>
    </nav>
`)
}

// writeIndex renders the front page (also SearXNG's answer to an HTML
// search with an empty query).
func writeIndex(s *site) string {
	var sb strings.Builder
	writeHead(&sb, s, "", "index")
	sb.WriteString(`<div class="index">
    <div class="title"><h1>SearXNG</h1></div>
<form id="search" method="POST" action="/search" role="search">
  <div id="search_header">
    <div id="search_view">
      <div class="search_box">
        <input id="q" name="q" type="text" placeholder="Search for..." autocomplete="off" autocapitalize="none" spellcheck="false" autocorrect="off" dir="auto" value="">
        <button id="clear_search" type="reset" aria-label="clear"><span class="show_if_nojs">clear</span></button>
        <button id="send_search" type="submit" aria-label="search"><span class="show_if_nojs">search</span></button>
      </div>
    </div>
  </div>
  <input type="hidden" name="category_general" value="1" >
  <input type="hidden" name="language" value="auto" >
  <input type="hidden" name="time_range" value="" >
  <input type="hidden" name="safesearch" value="0" >
  <input type="hidden" name="theme" value="simple" >
</form></div>
`)
	writeFoot(&sb)
	return sb.String()
}

// write404 renders SearXNG's "Page not found".
func write404(s *site) string {
	var sb strings.Builder
	writeHead(&sb, s, "", "404")
	sb.WriteString(`<div class="center">
    <h1>Page not found</h1>
    <p>Go to <a href="/">search page</a>.</p>
</div>
`)
	writeFoot(&sb)
	return sb.String()
}

// writeConfig renders /config the way SearXNG 2024.10.5 does (keys
// sorted, compact), with the instance's limiter settings.
func writeConfig(s *site) []byte {
	b := make([]byte, 0, 2048)
	b = append(b, `{"autocomplete":`...)
	b = appendJSONString(b, s.Autocomplete, false)
	b = append(b, `,"brand":{"CONTACT_URL":false,"DOCS_URL":"https://docs.searxng.org/","GIT_BRANCH":"master","GIT_URL":"https://github.com/searxng/searxng","PRIVACYPOLICY_URL":false},"categories":[`...)
	cats := s.categories()
	for i, c := range cats {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, c, false)
	}
	b = append(b, `],"default_doi_resolver":"oadoi.org","default_locale":"","default_theme":"simple","doi_resolvers":["oadoi.org","doi.org","doai.io","sci-hub.se","sci-hub.st","sci-hub.ru"],"engines":[`...)
	n := 0
	for _, c := range cats {
		list := s.EngineList
		switch c {
		case "general":
		case "images":
			// Each general engine's image search, as SearXNG names them
			// ("bing images", "qwant images"): /config tells a client
			// that this instance answers image searches.
			list = make([]string, len(s.EngineList))
			for i, e := range s.EngineList {
				list[i] = e + " images"
			}
		default:
			list = categoryEngines[c]
		}
		for _, e := range list {
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = appendConfigEngine(b, e, c)
		}
	}
	b = append(b, `],"instance_name":`...)
	b = appendJSONString(b, s.Name, false)
	b = append(b, `,"limiter":{"botdetection.ip_limit.link_token":`...)
	b = strconv.AppendBool(b, s.LinkToken)
	b = append(b, `,"botdetection.ip_lists.pass_searxng_org":true,"enabled":`...)
	b = strconv.AppendBool(b, s.Limiter)
	b = append(b, `},"locales":{"de":"Deutsch (German)","en":"English","fr":"Fran\u00e7ais (French)"},"plugins":[{"enabled":true,"name":"Basic Calculator"},{"enabled":true,"name":"Hash plugin"},{"enabled":true,"name":"Self Information"},{"enabled":true,"name":"Tracker URL remover"}],"public_instance":`...)
	b = strconv.AppendBool(b, s.Public)
	b = append(b, `,"safe_search":0,"version":"`+searxngVersion+`"}`...)
	return b
}

// appendConfigEngine appends one engine of /config's list.
func appendConfigEngine(b []byte, name, category string) []byte {
	b = append(b, `{"categories":[`...)
	b = appendJSONString(b, category, false)
	b = append(b, `],"enabled":true,"language_support":true,"languages":[],"name":`...)
	b = appendJSONString(b, name, false)
	b = append(b, `,"paging":true,"regions":[],"safesearch":true,"shortcut":`...)
	b = appendJSONString(b, name[:min(2, len(name))], false)
	return append(b, `,"time_range_support":true,"timeout":3.0}`...)
}

// writeOpenSearch renders /opensearch.xml.
func writeOpenSearch(s *site) string {
	base := esc(s.BaseURL)
	return `<?xml version="1.0" encoding="utf-8"?>
<OpenSearchDescription xmlns="http://a9.com/-/spec/opensearch/1.1/" xmlns:moz="http://www.mozilla.org/2006/browser/search/">
  <ShortName>` + esc(s.Name) + `</ShortName>
  <LongName>SearXNG metasearch</LongName>
  <Description>SearXNG is a metasearch engine that respects your privacy.</Description>
  <InputEncoding>UTF-8</InputEncoding>
  <Image type="image/png">` + base + `static/themes/simple/img/favicon.png</Image>
  <Url rel="results" type="text/html" method="POST" template="` + base + `search">
    <Param name="q" value="{searchTerms}" />
  </Url>
  <Url rel="suggestions" type="application/x-suggestions+json" method="POST" template="` + base + `autocompleter">
    <Param name="q" value="{searchTerms}" />
  </Url>
  <Url rel="self" type="application/opensearchdescription+xml"  method="POST" template="` + base + `opensearch.xml" />
  <Query role="example" searchTerms="SearXNG" />
  <moz:SearchForm>` + base + `search</moz:SearchForm>
</OpenSearchDescription>`
}

// Bodies of the refusals and failures, as the servers that send them write
// them.
const (
	// Werkzeug's 403, as SearXNG answers a format it does not enable.
	forbiddenBody = `<!doctype html>
<html lang=en>
<title>403 Forbidden</title>
<h1>Forbidden</h1>
<p>You don&#39;t have the permission to access the requested resource. It is either read-protected or not readable by the server.</p>
`
	// Werkzeug's page for an exception in SearXNG.
	serverErrorBody = `<!doctype html>
<html lang=en>
<title>500 Internal Server Error</title>
<h1>Internal Server Error</h1>
<p>The server encountered an internal error and was unable to complete your request. Either the server is overloaded or there is an error in the application.</p>
`
	// SearXNG's limiter refusal (no trailing newline, 17 bytes).
	tooManyBody = "Too Many Requests"
	// Werkzeug's redirect page, as the limiter sends with its 302 to "/".
	redirectBody = `<!doctype html>
<html lang=en>
<title>Redirecting...</title>
<h1>Redirecting...</h1>
<p>You should be redirected automatically to the target URL: <a href="%s">%s</a>. If not, click the link.
`
	// Werkzeug's 400 for a JSON search without a query.
	noQueryJSON = `{"error": "No query"}`

	nginx502 = `<html>
<head><title>502 Bad Gateway</title></head>
<body>
<center><h1>502 Bad Gateway</h1></center>
<hr><center>nginx</center>
</body>
</html>
`
	nginx503 = `<html>
<head><title>503 Service Temporarily Unavailable</title></head>
<body>
<center><h1>503 Service Temporarily Unavailable</h1></center>
<hr><center>nginx</center>
</body>
</html>
`
	cloudflareBody = `<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title><meta http-equiv="Content-Type" content="text/html; charset=UTF-8"><meta http-equiv="X-UA-Compatible" content="IE=Edge"><meta name="robots" content="noindex,nofollow"><meta name="viewport" content="width=device-width,initial-scale=1"><style>*{box-sizing:border-box;margin:0;padding:0}html{line-height:1.15}</style><meta http-equiv="refresh" content="390"></head><body class="no-js"><div class="main-wrapper" role="main"><div class="main-content"><noscript><div id="challenge-error-title"><div class="h2"><span class="icon-wrapper"><div class="heading-icon warning-icon"></div></span><span id="challenge-error-text">Enable JavaScript and cookies to continue</span></div></div></noscript></div></div><script>(function(){window._cf_chl_opt={cvId: '3',cZone: "search.example",cType: 'managed',cRay: '8d2f3a1b9c0e4f21',cH: 'sim',cUPMDTk: "\/search?__cf_chl_tk=sim",cFPWv: 'b',cITimeS: '1700000000',cTplV: 5,cTplB: 'cf',cK: "",fa: "\/search?__cf_chl_f_tk=sim",md: "sim",cRq: {ru: 'sim',ra: 'sim',rm: 'R0VU',d: 'sim',t: 'MTcwMDAwMDAwMC4wMDAwMDA=',cT: Math.floor(Date.now() / 1000),m: 'sim',i1: 'sim',i2: 'sim',zh: 'sim',uh: 'sim',hh: 'sim',}};var cpo = document.createElement('script');cpo.src = '/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1?ray=8d2f3a1b9c0e4f21';window._cf_chl_opt.cOgUHash = location.hash === '' && location.href.indexOf('#') !== -1 ? '#' : location.hash;window._cf_chl_opt.cOgUQuery = location.search === '' && location.href.slice(0, location.href.length - window._cf_chl_opt.cOgUHash.length).indexOf('?') !== -1 ? '?' : location.search;if (window.history && window.history.replaceState) {var ogU = location.pathname + window._cf_chl_opt.cOgUQuery + window._cf_chl_opt.cOgUHash;history.replaceState(null, null, "\/search?__cf_chl_rt_tk=sim" + window._cf_chl_opt.cOgUHash);cpo.onload = function() {history.replaceState(null, null, ogU);}}document.getElementsByTagName('head')[0].appendChild(cpo);}());</script></body></html>`
	anubisBody     = `<!doctype html><html lang="en"><head><title>Making sure you&#39;re not a bot!</title><link rel="stylesheet" href="/.within.website/x/xess/xess.min.css"><meta name="viewport" content="width=device-width, initial-scale=1.0"><meta name="robots" content="noindex,nofollow"><script id="anubis_version" type="application/json">"v1.17.0"</script><script id="anubis_challenge" type="application/json">{"challenge":"5c1a0bd5b5d6c0e8a0f2f4e1d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0","rules":{"algorithm":"fast","difficulty":4,"report_as":4}}</script><script id="anubis_base_prefix" type="application/json">""</script></head><body id="top"><main><h1 id="title" class="centered-div">Making sure you&#39;re not a bot!</h1><div class="centered-div"><img id="image" style="width:100%;max-width:256px;" src="/.within.website/x/cmd/anubis/static/img/pensive.webp"><p id="status">Loading...</p><script async type="module" src="/.within.website/x/cmd/anubis/static/js/main.mjs"></script><div id="testarea"></div><details><summary>Why am I seeing this?</summary><p>You are seeing this because the administrator of this website has set up Anubis to protect the server against the scourge of AI companies aggressively scraping websites.</p></details><noscript><p>Sadly, you must enable JavaScript to get past this challenge. This is required because AI companies have changed the social contract around how website hosting works.</p></noscript></div><footer><div class="centered-div"><p>Protected by <a href="https://github.com/TecharoHQ/anubis">Anubis</a> From <a href="https://techaro.lol">Techaro</a>.</p></div></footer></main></body></html>`
	ddosGuardBody  = `<!DOCTYPE html><html><head><title>DDoS-Guard</title><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"></head><body><div id="ddg-l"><div class="ddg-title">Checking your browser before accessing</div><p>This process is automatic. Your browser will redirect to your requested content shortly.</p><p>Please allow up to 5 seconds&hellip;</p></div><script src="/.well-known/ddos-guard/check?context=free_splash"></script><noscript>DDoS protection by <a href="https://ddos-guard.net/">DDoS-Guard</a></noscript></body></html>`
)
