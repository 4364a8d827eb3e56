package reader

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/searxgate/searxgate/reader/internal/mdtext"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// canonical is the page's canonical URL (<link rel=canonical>, else
// og:url), absolute, http(s) only; "" when it has none.
func canonical(doc *html.Node, pageURL *url.URL) string {
	var link, og string
	walk(doc, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		switch n.DataAtom {
		case atom.Body:
			return false
		case atom.Link:
			if link == "" && hasToken(attr(n, "rel"), "canonical") {
				link = attr(n, "href")
			}
		case atom.Meta:
			if og == "" && attr(n, "property") == "og:url" {
				og = attr(n, "content")
			}
		}
		return true
	})
	for _, raw := range []string{link, og} {
		if u := absolute(raw, pageURL); u != "" {
			return u
		}
	}
	return ""
}

func absolute(raw string, base *url.URL) string {
	raw = strings.TrimSpace(raw)
	if raw == "" || len(raw) > 2048 {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return ""
	}
	return u.String()
}

func hasToken(list, tok string) bool {
	for _, f := range strings.Fields(strings.ToLower(list)) {
		if f == tok {
			return true
		}
	}
	return false
}

// meta reads the page's metadata (<meta> in its head, before the cleaning
// drops them): its author, its site's name and its publication date.
func meta(doc *html.Node) (author, site, published string) {
	walk(doc, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		if n.DataAtom == atom.Body {
			return false
		}
		if n.DataAtom != atom.Meta {
			return true
		}
		key := strings.ToLower(attr(n, "property"))
		if key == "" {
			key = strings.ToLower(attr(n, "name"))
		}
		v := mdtext.OneLine(attr(n, "content"))
		if v == "" || len(v) > 300 {
			return true
		}
		switch key {
		case "author", "article:author", "dc.creator", "parsely-author", "sailthru.author":
			if author == "" && !strings.Contains(v, "://") {
				author = v
			}
		case "og:site_name", "application-name":
			if site == "" {
				site = v
			}
		case "article:published_time", "og:published_time", "datepublished", "dc.date", "dc.date.issued",
			"date", "parsely-pub-date", "sailthru.date", "citation_publication_date":
			if published == "" {
				published = dateOf(v)
			}
		}
		return true
	})
	return author, site, published
}

// timeOf is the date of the first <time datetime> (or itemprop
// datePublished) in the page's content, as YYYY-MM-DD; "" when there is
// none. The page's metadata, when it has a date, wins over it.
func timeOf(doc *html.Node) string {
	var out string
	walk(doc, func(n *html.Node) bool {
		if out != "" {
			return false
		}
		if n.Type != html.ElementNode {
			return true
		}
		v := ""
		if n.DataAtom == atom.Time {
			v = attr(n, "datetime")
		} else if attr(n, "itemprop") == "datePublished" {
			v = attr(n, "content")
		}
		if v != "" {
			out = dateOf(v)
		}
		return true
	})
	return out
}

// dateOf reads an ISO 8601 date or time and returns its date.
func dateOf(v string) string {
	v = strings.TrimSpace(v)
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05Z0700", "2006-01-02T15:04:05", "2006-01-02T15:04",
		"2006-01-02", "2006/01/02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.Format("2006-01-02")
		}
	}
	return ""
}

// topHeading is the page's own title heading: its first <h1>, else
// (a page whose h1 is its site's name, dropped with its header, or a
// chapter's page that starts at a lower level) its first heading that the
// page's <title> names; with its level, 0 when none.
func topHeading(doc *html.Node, title string) (string, int) {
	var h1, sub string
	level := 0
	walk(doc, func(n *html.Node) bool {
		if h1 != "" {
			return false
		}
		if n.Type != html.ElementNode {
			return true
		}
		switch n.DataAtom {
		case atom.H1:
			h1 = mdtext.OneLine(textOf(n))
			return false
		case atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
			if sub == "" {
				if t := mdtext.OneLine(textOf(n)); namedBy(t, title) {
					sub, level = t, int(n.Data[1]-'0')
				}
			}
			return false
		}
		return true
	})
	switch {
	case h1 != "":
		return h1, 1
	case sub != "":
		return sub, level
	}
	return "", 0
}

// namedBy reports whether every word of heading (numbers aside: "2.2")
// is a word of title.
func namedBy(heading, title string) bool {
	notWord := func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }
	in := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(title), notWord) {
		in[w] = true
	}
	words := 0
	for _, w := range strings.FieldsFunc(strings.ToLower(heading), notWord) {
		if strings.IndexFunc(w, unicode.IsLetter) < 0 {
			continue
		}
		if !in[w] {
			return false
		}
		words++
	}
	return words > 0
}

// codeLang finds a code block's language in the class names highlighters
// use: language-x and lang-x (Prism, highlight.js, Hugo's Chroma),
// highlight-x (Sphinx, on a wrapper), brush: x (SyntaxHighlighter), and
// data-lang.
var codeLang = regexp.MustCompile(`(?:^|\s)(?:language-|lang-|highlight-source-|highlight-)([A-Za-z0-9_+#.-]{1,30})(?:\s|$)`)

var brush = regexp.MustCompile(`brush:\s*([A-Za-z0-9_+#.-]{1,30})`)

// markCode gives every <pre> whose language its highlighter named the
// class language-<name> (the one class readability is told to keep, and
// the one the Markdown converter reads), and returns those classes.
func markCode(doc *html.Node) []string {
	seen := map[string]bool{}
	var out []string
	walk(doc, func(n *html.Node) bool {
		if n.Type != html.ElementNode || n.DataAtom != atom.Pre {
			return true
		}
		lang := langOf(n)
		for c := n.FirstChild; lang == "" && c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && c.DataAtom == atom.Code {
				lang = langOf(c)
			}
		}
		for a, i := n.Parent, 0; lang == "" && a != nil && i < 3; a, i = a.Parent, i+1 {
			if a.Type == html.ElementNode && a.DataAtom == atom.Div {
				lang = langOf(a)
			}
		}
		lang = strings.ToLower(lang)
		switch lang {
		case "", "none", "nohighlight", "default", "plain", "plaintext", "text", "source":
			return false
		}
		cls := "language-" + lang
		setAttr(n, "class", cls)
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && c.DataAtom == atom.Code {
				setAttr(c, "class", cls)
			}
		}
		if !seen[cls] {
			seen[cls] = true
			out = append(out, cls)
		}
		return false
	})
	return out
}

func langOf(n *html.Node) string {
	if l := attr(n, "data-lang"); l != "" && !strings.ContainsAny(l, " \t\n") && len(l) <= 30 {
		return l
	}
	cls := attr(n, "class")
	if m := codeLang.FindStringSubmatch(cls); m != nil {
		return m[1]
	}
	if m := brush.FindStringSubmatch(cls); m != nil {
		return m[1]
	}
	return ""
}

func setAttr(n *html.Node, key, val string) {
	for i, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			n.Attr[i].Val = val
			return
		}
	}
	n.Attr = append(n.Attr, html.Attribute{Key: key, Val: val})
}

// adWords are the parts of class names and ids (split at - and _) that
// mark an advertisement, a sponsored block, a newsletter box or a
// screen-reader-only label.
var adWords = map[string]bool{
	"ad": true, "ads": true, "adv": true, "advert": true, "adverts": true, "advertisement": true,
	"advertising": true, "adslot": true, "adunit": true, "adsbygoogle": true, "dfp": true,
	"sponsor": true, "sponsored": true, "sponsors": true, "promoted": true, "promo": true, "outbrain": true, "taboola": true,
	"newsletter": true, "skip": true, "sr": true, "screen": true,
}

// adAttrs mark an ad slot whatever its classes.
var adAttrs = []string{"data-ad-slot", "data-ad-unit", "data-ad-client", "data-google-query-id"}

// adLabel is the text of a block that is only an ad's label, or an ad
// that says it is one.
var adLabel = regexp.MustCompile(`(?i)^\s*(?:advertisement|advertising|anzeige|publicité|sponsored|promoted|paid content|sponsored content|partner content)\s*(?:$|[:|–—-])`)

// isAd reports whether n is an advertisement, a sponsored or promoted
// block, a newsletter box, a "skip to content" link or a label for screen
// readers only.
func isAd(n *html.Node) bool {
	switch n.DataAtom {
	case atom.Html, atom.Body, atom.Main, atom.Article:
		return false
	}
	for _, a := range adAttrs {
		if hasAttr(n, a) {
			return true
		}
	}
	if l := strings.ToLower(attr(n, "aria-label")); l == "advertisement" || l == "sponsored" {
		return true
	}
	if adNamed(n) {
		// A name can mislead (a wrapper called "ads-free"): a block that
		// holds more text than an ad does is kept.
		if _, small := leadText(n, 1500); small {
			return true
		}
	}
	switch n.DataAtom {
	case atom.Div, atom.P, atom.Section, atom.Aside, atom.Figure, atom.Span:
		if t, whole := leadText(n, 400); whole && adLabel.MatchString(t) {
			return true
		}
	case atom.A:
		// A heading's permalink (Sphinx's ¶, GitHub's #): not content.
		if h := attr(n, "href"); strings.HasPrefix(h, "#") {
			switch strings.TrimSpace(textOf(n)) {
			case "¶", "#", "§", "🔗", "":
				return true
			}
		}
	}
	return false
}

// adNamed reports whether n's classes or id name an ad, a sponsored or
// promoted block, a newsletter box, a skip link or a screen-reader label.
func adNamed(n *html.Node) bool {
	for _, name := range append(strings.Fields(attr(n, "class")), attr(n, "id")) {
		name = strings.ToLower(name)
		parts := strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '_' })
		if slices.Contains(parts, "free") || slices.Contains(parts, "no") {
			continue // ad-free, no-ads
		}
		for i, p := range parts {
			if !adWords[p] {
				continue
			}
			switch p {
			case "skip": // skip-link, skip-to-content
				if i+1 < len(parts) && (parts[i+1] == "link" || parts[i+1] == "to") {
					return true
				}
			case "sr": // sr-only
				if i+1 < len(parts) && parts[i+1] == "only" {
					return true
				}
			case "screen": // screen-reader-text
				if i+1 < len(parts) && parts[i+1] == "reader" {
					return true
				}
			default:
				return true
			}
		}
		if name == "visually-hidden" || name == "visuallyhidden" {
			return true
		}
	}
	return false
}

// leadText is the text of n up to limit bytes, and whether that is all of
// it (it stops reading there: a page's large blocks cost no more than
// their start).
func leadText(n *html.Node, limit int) (string, bool) {
	var b strings.Builder
	var visit func(*html.Node) bool
	visit = func(n *html.Node) bool {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
			return b.Len() < limit
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if !visit(c) {
				return false
			}
		}
		return true
	}
	whole := visit(n)
	return b.String(), whole && b.Len() < limit
}

// byline is readability's byline (the text of the page's author element)
// without its "By".
func byline(s string) string {
	s = mdtext.OneLine(s)
	if len(s) > 3 && strings.EqualFold(s[:3], "by ") {
		s = s[3:]
	}
	if len(s) > 200 {
		return ""
	}
	return s
}
