package reader

import (
	"bytes"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	readability "codeberg.org/readeck/go-readability/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/marker"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"github.com/searxgate/searxgate/reader/internal/mdtext"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// maxElements bounds the elements readability scores; a larger page is
// reduced by the cleaning pass alone.
const maxElements = 30_000

// minArticle is the text, in bytes, below which readability's pick is
// thought to have missed the page's content.
const minArticle = 200

// Extract reduces an HTML page to its title and its main content as
// Markdown, with links made absolute against pageURL (nil: left as they are).
func Extract(body []byte, pageURL *url.URL) (title, markdown string) {
	a := extractArticle(body, pageURL)
	return a.Title, a.Markdown
}

// article is what Extract reads of a page: its content and what an agent
// needs to cite it.
type article struct {
	Title, Byline, Published, SiteName, Canonical, Markdown string
}

func extractArticle(body []byte, pageURL *url.URL) article {
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		return article{}
	}
	a := article{Title: docTitle(doc), Canonical: canonical(doc, pageURL)}
	a.Byline, a.SiteName, a.Published = meta(doc)
	clean(doc)
	splitCode(doc)
	admonitions(doc)
	langs := markCode(doc)
	top, level := topHeading(doc, a.Title)
	markH1s(doc)
	if a.Published == "" {
		a.Published = timeOf(doc)
	}
	content := mainOf(doc)
	p := readability.NewParser()
	p.MaxElemsToParse = maxElements
	p.DisableJSONLD = true
	p.ClassesToPreserve = append(langs, h1Class)
	if art, err := p.ParseDocument(doc, pageURL); err == nil {
		if art.Node != nil && len(strings.TrimSpace(textOf(art.Node))) >= minArticle {
			content = art.Node
		}
		if t := strings.TrimSpace(art.Title()); t != "" && a.Title == "" {
			a.Title = t
		}
		if a.Byline == "" {
			a.Byline = byline(art.Byline())
		}
	}
	if content == nil {
		return a
	}
	restoreH1s(content)
	a.Markdown = toMarkdown(content, pageURL)
	if top != "" && !hasHeading(a.Markdown, top) {
		a.Markdown = strings.TrimSpace(strings.Repeat("#", level) + " " + top + "\n\n" + a.Markdown)
	}
	return a
}

// toMarkdown writes n as CommonMark (with tables), links absolute. Text
// keeps its characters: < and > are written as themselves, escaped only
// where Markdown would read them as markup (\< before a tag-like letter,
// \> at the start of a line).
func toMarkdown(n *html.Node, pageURL *url.URL) string {
	dropUnsafeLinks(n)
	conv := converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(), table.NewTablePlugin()))
	// The base plugin writes every < and > of text as &lt; and &gt;, which
	// an agent reads as noise. Before it, they become private-use runes it
	// leaves alone; after it and the escaping of Markdown characters, they
	// come back, with an escape where Markdown needs one.
	conv.Register.TextTransformer(func(_ converter.Context, s string) string {
		if !strings.ContainsAny(s, "<>\uE000\uE001") {
			return s
		}
		return angleIn.Replace(s)
	}, converter.PriorityEarly)
	conv.Register.TextTransformer(func(_ converter.Context, s string) string {
		if !strings.ContainsAny(s, "\uE000\uE001") {
			return s
		}
		return angleOut(s)
	}, converter.PriorityLate)
	var opts []converter.ConvertOptionFunc
	if pageURL != nil {
		opts = append(opts, converter.WithDomain(pageURL.String()))
	}
	md, err := conv.ConvertNode(n, opts...)
	if err != nil {
		return strings.TrimSpace(textOf(n))
	}
	return strings.TrimSpace(blankLines.ReplaceAllString(trimQuoteLines(string(md)), "\n\n"))
}

// trimQuoteLines drops the space the converter leaves at the end of a
// blockquote's blank lines ("> "), outside code blocks.
func trimQuoteLines(md string) string {
	if !strings.Contains(md, "> \n") {
		return md
	}
	var b strings.Builder
	fence := ""
	for line := range strings.Lines(md) {
		t := strings.TrimRight(line, "\n")
		inner := strings.TrimLeft(t, "> ")
		if f := mdtext.FenceOf(inner); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(inner, fence):
				fence = ""
			}
		}
		if fence == "" && strings.TrimSpace(strings.ReplaceAll(t, ">", "")) == "" && strings.HasSuffix(t, " ") {
			b.WriteString(strings.TrimRight(t, " "))
			b.WriteString(line[len(t):])
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}

// dropUnsafeLinks takes out of n every link and image an agent must not
// be handed, and the links that lead nowhere: a URL whose scheme is not
// http, https or mailto (javascript:, data:, file:, ftp:, …), however it
// is spelt, loses its link (the text stays) or its image (it goes); an
// anchor without an href (a DocBook or groff target) leaves its text in
// place; a link with neither text nor image goes.
func dropUnsafeLinks(n *html.Node) {
	var drop, unwrap []*html.Node
	walk(n, func(c *html.Node) bool {
		if c.Type != html.ElementNode {
			return true
		}
		for i := 0; i < len(c.Attr); i++ {
			a := c.Attr[i]
			if a.Namespace == "" && (a.Key == "href" || a.Key == "src" || a.Key == "srcset") && !linkable(a.Val) {
				if c.DataAtom == atom.Img || c.DataAtom == atom.Source {
					drop = append(drop, c)
					break
				}
				c.Attr = append(c.Attr[:i], c.Attr[i+1:]...)
				i--
			}
		}
		if c.DataAtom == atom.A {
			switch {
			case !hasAttr(c, "href"):
				unwrap = append(unwrap, c)
			case strings.TrimSpace(textOf(c)) == "" && !hasImage(c):
				drop = append(drop, c)
			}
		}
		return true
	})
	for _, d := range drop {
		if d.Parent != nil {
			d.Parent.RemoveChild(d)
		}
	}
	for _, a := range unwrap {
		if a.Parent == nil {
			continue
		}
		for c := a.FirstChild; c != nil; c = a.FirstChild {
			a.RemoveChild(c)
			a.Parent.InsertBefore(c, a)
		}
		a.Parent.RemoveChild(a)
	}
}

func hasImage(n *html.Node) bool {
	found := false
	walk(n, func(c *html.Node) bool {
		if c.Type == html.ElementNode && c.DataAtom == atom.Img && attr(c, "src") != "" && linkable(attr(c, "src")) {
			found = true
		}
		return !found
	})
	return found
}

// linkable reports whether u may reach the Markdown: a relative URL, or
// an http, https or mailto one (for srcset, each candidate's).
func linkable(u string) bool {
	switch schemeOf(u) {
	case "", "http", "https", "mailto":
		return true
	}
	return false
}

// schemeOf is u's scheme in lower case, read as browsers forgive it
// (white space and control characters inside it skipped); "" for a
// relative URL.
func schemeOf(u string) string {
	var b strings.Builder
	for _, r := range u {
		switch {
		case r == ':':
			return b.String()
		case r <= ' ' || r == 0x7f:
			continue
		case r < 0x80 && (unicode.IsLetter(r) || b.Len() > 0 && (unicode.IsDigit(r) || r == '+' || r == '-' || r == '.')):
			b.WriteRune(unicode.ToLower(r))
			if b.Len() > 32 {
				return ""
			}
		default:
			return "" // a path, a query or a fragment comes first: relative
		}
	}
	return ""
}

// angleIn hides < and > from the base plugin's entity replacement (and
// drops private-use runes that were in the text already).
var angleIn = strings.NewReplacer("\uE000", "", "\uE001", "", "<", "\uE000", ">", "\uE001")

// angleOut brings < and > back: > behind the converter's escape marker, so
// that its unescaping keeps \> only at the start of a line (a
// blockquote); < escaped where it could open an HTML tag or an autolink.
func angleOut(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\uE001':
			b.WriteRune(marker.MarkerEscaping)
			b.WriteByte('>')
		case '\uE000':
			// (past the escape markers the converter put before Markdown
			// characters such as !)
			if next := strings.TrimLeft(s[i+size:], string(marker.MarkerEscaping)); next != "" && tagStart(next[0]) {
				b.WriteString(`\<`)
			} else {
				b.WriteByte('<')
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func tagStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '/' || c == '!' || c == '?'
}

// hasHeading reports whether md has a heading that reads text.
func hasHeading(md, text string) bool {
	for _, h := range Headings(md) {
		if plainHeading.Replace(mdtext.OneLine(h.Text)) == plainHeading.Replace(text) {
			return true
		}
	}
	return false
}

// plainHeading drops the Markdown a heading's text may carry.
var plainHeading = strings.NewReplacer("\\", "", "`", "", "*", "", "_", "")

// h1Class marks the page's own <h1>s, which readability turns into <h2>s
// (it keeps h1 for the title it shows apart): restoreH1s turns them back,
// so that an article's headings keep their levels.
const h1Class = "searxgate-h1"

func markH1s(doc *html.Node) {
	walk(doc, func(n *html.Node) bool {
		if n.Type == html.ElementNode && n.DataAtom == atom.H1 {
			setAttr(n, "class", strings.TrimSpace(attr(n, "class")+" "+h1Class))
		}
		return true
	})
}

func restoreH1s(n *html.Node) {
	walk(n, func(c *html.Node) bool {
		if c.Type != html.ElementNode {
			return true
		}
		for i, a := range c.Attr {
			if a.Namespace == "" && a.Key == "class" && hasToken(a.Val, h1Class) {
				c.Data, c.DataAtom = "h1", atom.H1
				c.Attr = append(c.Attr[:i], c.Attr[i+1:]...)
				break
			}
		}
		return true
	})
}

// splitCode gives each <code> of a <pre> that holds several (Node.js's
// paired ES-module and CommonJS examples, shown one at a time) a <pre> of
// its own, so that each is a code block and not one line of both.
func splitCode(doc *html.Node) {
	var pres []*html.Node
	walk(doc, func(n *html.Node) bool {
		if n.Type == html.ElementNode && n.DataAtom == atom.Pre {
			pres = append(pres, n)
			return false
		}
		return true
	})
	for _, pre := range pres {
		codes := 0
		other := false
		for c := pre.FirstChild; c != nil; c = c.NextSibling {
			switch {
			case c.Type == html.ElementNode && c.DataAtom == atom.Code:
				codes++
			case c.Type == html.TextNode && strings.TrimSpace(c.Data) == "":
			case c.Type == html.CommentNode:
			default:
				other = true
			}
		}
		if codes < 2 || other || pre.Parent == nil {
			continue
		}
		for c := pre.FirstChild; c != nil; c = pre.FirstChild {
			pre.RemoveChild(c)
			if c.Type != html.ElementNode {
				continue
			}
			one := &html.Node{Type: html.ElementNode, Data: "pre", DataAtom: atom.Pre, Attr: slices.Clone(pre.Attr)}
			one.AppendChild(c)
			pre.Parent.InsertBefore(one, pre)
		}
		pre.Parent.RemoveChild(pre)
	}
}

var blankLines = regexp.MustCompile(`\n{3,}`)

// docTitle is the text of the first <title>.
func docTitle(doc *html.Node) string {
	var t string
	walk(doc, func(n *html.Node) bool {
		if t != "" {
			return false
		}
		if n.Type == html.ElementNode && n.DataAtom == atom.Title {
			t = strings.Join(strings.Fields(textOf(n)), " ")
			return false
		}
		return n.Type != html.ElementNode || n.DataAtom != atom.Body
	})
	return t
}

// dropTags are never content.
var dropTags = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Nav: true, atom.Aside: true, atom.Form: true, atom.Iframe: true,
	atom.Svg: true, atom.Canvas: true, atom.Button: true, atom.Dialog: true,
	atom.Object: true, atom.Embed: true, atom.Link: true, atom.Meta: true,
	atom.Select: true, atom.Input: true, atom.Textarea: true,
}

// dropRoles are ARIA landmarks that are not the content.
var dropRoles = map[string]bool{
	"navigation": true, "complementary": true, "search": true, "dialog": true,
	"alertdialog": true, "menu": true, "menubar": true, "toolbar": true,
}

// banner marks cookie and consent banners by their id or class.
var banner = regexp.MustCompile(`(?i)cookie|consent|gdpr|onetrust|cc-window|cmp-`)

// clean removes from doc what is never the content: scripts, styles,
// navigation, asides, forms, cookie banners, hidden elements, and the
// page's own header and footer (those outside any article or main).
func clean(doc *html.Node) {
	var drop []*html.Node
	var visit func(n *html.Node, inMain bool)
	visit = func(n *html.Node, inMain bool) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch c.Type {
			case html.CommentNode:
				drop = append(drop, c)
				continue
			case html.ElementNode:
			default:
				continue
			}
			if junk(c, inMain) {
				drop = append(drop, c)
				continue
			}
			visit(c, inMain || c.DataAtom == atom.Main || c.DataAtom == atom.Article || attr(c, "role") == "main")
		}
	}
	visit(doc, false)
	for _, n := range drop {
		if n.Parent != nil {
			n.Parent.RemoveChild(n)
		}
	}
}

func junk(n *html.Node, inMain bool) bool {
	if n.DataAtom == atom.Aside && isAdmonition(n) {
		return false
	}
	if dropTags[n.DataAtom] {
		return true
	}
	if !inMain && (n.DataAtom == atom.Header || n.DataAtom == atom.Footer) {
		return true
	}
	role := strings.ToLower(attr(n, "role"))
	if dropRoles[role] || (!inMain && (role == "banner" || role == "contentinfo")) {
		return true
	}
	if hasAttr(n, "hidden") || attr(n, "aria-hidden") == "true" || attr(n, "aria-modal") == "true" {
		return true
	}
	if isAd(n) || n.DataAtom == atom.Img && isPixel(n) {
		return true
	}
	if st := strings.ReplaceAll(strings.ToLower(attr(n, "style")), " ", ""); strings.Contains(st, "display:none") || strings.Contains(st, "visibility:hidden") {
		return true
	}
	if n.DataAtom != atom.Body && n.DataAtom != atom.Html && n.DataAtom != atom.Main && n.DataAtom != atom.Article &&
		(banner.MatchString(attr(n, "id")) || banner.MatchString(attr(n, "class"))) {
		return true
	}
	return false
}

// admonitionWords are the class names (or their parts, split at - and _)
// of notes, warnings and their kin: Sphinx and docutils (admonition,
// note, seealso, versionadded, deprecated), DocBook (note, important,
// caution, tip, warning), MkDocs, Docusaurus (theme-admonition), GitHub
// (markdown-alert), MDN (notecard), Node.js (api_stability).
var admonitionWords = map[string]bool{
	"admonition": true, "note": true, "warning": true, "tip": true, "important": true, "caution": true, "danger": true,
	"attention": true, "hint": true, "seealso": true, "callout": true, "notecard": true, "versionadded": true,
	"versionchanged": true, "deprecated": true, "stability": true,
}

// maxAdmonition is the most text a block may hold and still be taken for
// an admonition (a larger one is a section that a class name misleads).
const maxAdmonition = 4000

// isAdmonition reports whether n is a note, a warning or their kin (by
// its classes or role=note) of no more than maxAdmonition bytes of text.
func isAdmonition(n *html.Node) bool {
	switch n.DataAtom {
	case atom.Div, atom.Aside, atom.Section, atom.P:
	default:
		return false
	}
	named := strings.EqualFold(attr(n, "role"), "note")
	for _, c := range strings.Fields(strings.ToLower(attr(n, "class"))) {
		if admonitionWords[c] {
			named = true
			break
		}
		parts := strings.FieldsFunc(c, func(r rune) bool { return r == '-' || r == '_' })
		if len(parts) > 1 && (parts[0] == "admonition" || parts[0] == "theme" && parts[1] == "admonition" ||
			parts[0] == "markdown" && parts[1] == "alert" || parts[0] == "api" && parts[1] == "stability") {
			named = true
			break
		}
	}
	if !named {
		return false
	}
	_, small := leadText(n, maxAdmonition)
	return small
}

// admonitions rewrites each note, warning and their kin as a blockquote
// that starts with its label in bold (the block's title: Sphinx's
// admonition-title, DocBook's h3 or table heading), so that readability,
// which drops short link-heavy divs and every aside, keeps them, and the
// Markdown shows them as asides (> **Note** …) rather than as headings of
// the page.
func admonitions(doc *html.Node) {
	var found []*html.Node
	walk(doc, func(n *html.Node) bool {
		if n.Type == html.ElementNode && isAdmonition(n) {
			found = append(found, n)
			return false
		}
		return true
	})
	for _, n := range found {
		if n.Parent == nil {
			continue
		}
		label, body := admonitionParts(n)
		q := &html.Node{Type: html.ElementNode, Data: "blockquote", DataAtom: atom.Blockquote}
		for _, c := range body {
			if c.Parent != nil {
				c.Parent.RemoveChild(c)
			}
			q.AppendChild(c)
		}
		if label != "" {
			// The label opens the first paragraph (> **Note:** text), or
			// is a paragraph of its own.
			strong := &html.Node{Type: html.ElementNode, Data: "strong", DataAtom: atom.Strong}
			strong.AppendChild(&html.Node{Type: html.TextNode, Data: label + ":"})
			first := q.FirstChild
			for first != nil && first.Type == html.TextNode && strings.TrimSpace(first.Data) == "" {
				first = first.NextSibling
			}
			if first != nil && first.Type == html.ElementNode && first.DataAtom == atom.P {
				first.InsertBefore(&html.Node{Type: html.TextNode, Data: " "}, first.FirstChild)
				first.InsertBefore(strong, first.FirstChild)
			} else {
				p := &html.Node{Type: html.ElementNode, Data: "p", DataAtom: atom.P}
				p.AppendChild(strong)
				q.InsertBefore(p, q.FirstChild)
			}
		}
		if n.DataAtom == atom.P {
			// A <p> cannot hold a blockquote's paragraphs: its text
			// becomes one.
			p := &html.Node{Type: html.ElementNode, Data: "p", DataAtom: atom.P}
			for c := q.FirstChild; c != nil; c = q.FirstChild {
				q.RemoveChild(c)
				p.AppendChild(c)
			}
			q.AppendChild(p)
		}
		n.Parent.InsertBefore(q, n)
		n.Parent.RemoveChild(n)
	}
}

// admonitionParts splits an admonition into its label (its title, one
// line; "" when it has none) and the nodes of its text.
func admonitionParts(n *html.Node) (string, []*html.Node) {
	// DocBook with admonition graphics: a table of an icon, a heading
	// and the text in the last cell.
	if t := onlyElement(n); t != nil && t.DataAtom == atom.Table {
		var th, last *html.Node
		walk(t, func(c *html.Node) bool {
			if c.Type == html.ElementNode {
				switch c.DataAtom {
				case atom.Th:
					if th == nil {
						th = c
					}
				case atom.Td:
					if strings.TrimSpace(textOf(c)) != "" {
						last = c
					}
				}
			}
			return true
		})
		if last != nil {
			label := ""
			if th != nil {
				label = mdtext.OneLine(textOf(th))
			}
			return label, children(unwrapDivs(last))
		}
	}
	box := unwrapDivs(n)
	var label string
	var body []*html.Node
	for c := box.FirstChild; c != nil; c = c.NextSibling {
		if label == "" && body == nil && c.Type == html.ElementNode && isAdmonitionTitle(c) {
			label = strings.TrimSuffix(mdtext.OneLine(textOf(c)), ":")
			continue
		}
		if label == "" && body == nil && c.Type == html.TextNode && strings.TrimSpace(c.Data) == "" {
			continue
		}
		body = append(body, c)
	}
	// (the text's own wrapper, as Docusaurus writes it, is taken apart)
	var flat []*html.Node
	for _, c := range body {
		if c.Type == html.ElementNode && c.DataAtom == atom.Div {
			flat = append(flat, children(c)...)
		} else {
			flat = append(flat, c)
		}
	}
	return label, flat
}

// isAdmonitionTitle reports whether c is an admonition's title: a heading,
// or an element whose class says title or heading.
func isAdmonitionTitle(c *html.Node) bool {
	switch c.DataAtom {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		return true
	}
	cls := strings.ToLower(attr(c, "class"))
	return strings.Contains(cls, "title") || strings.Contains(cls, "heading")
}

// unwrapDivs is n, or the one <div> n holds alone (and so on down).
func unwrapDivs(n *html.Node) *html.Node {
	for {
		c := onlyElement(n)
		if c == nil || c.DataAtom != atom.Div || isAdmonitionTitle(c) {
			return n
		}
		n = c
	}
}

// onlyElement is n's one element child when n holds nothing else but
// white space; nil otherwise.
func onlyElement(n *html.Node) *html.Node {
	var one *html.Node
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch {
		case c.Type == html.ElementNode:
			if one != nil {
				return nil
			}
			one = c
		case c.Type == html.TextNode && strings.TrimSpace(c.Data) != "":
			return nil
		}
	}
	return one
}

func children(n *html.Node) []*html.Node {
	var out []*html.Node
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		out = append(out, c)
	}
	return out
}

// isPixel reports whether img is a tracking pixel: 0 or 1 pixel wide or
// high (by its attributes or its style), or its source one of the
// well-known beacons.
func isPixel(img *html.Node) bool {
	for _, k := range []string{"width", "height"} {
		if v := strings.TrimSuffix(strings.TrimSpace(attr(img, k)), "px"); v == "0" || v == "1" {
			return true
		}
	}
	st := strings.ReplaceAll(strings.ToLower(attr(img, "style")), " ", "")
	for _, p := range []string{"width:0", "width:1px", "height:0", "height:1px"} {
		if i := strings.Index(st, p); i >= 0 && (i == 0 || st[i-1] == ';') && (len(st) == i+len(p) || strings.ContainsRune(";!p", rune(st[i+len(p)]))) {
			return true
		}
	}
	return pixelSrc.MatchString(attr(img, "src"))
}

// pixelSrc matches the sources of tracking pixels and beacons.
var pixelSrc = regexp.MustCompile(`(?i)^(?:https?:)?//(?:[a-z0-9-]+\.)*(?:facebook\.com/tr\b|google-analytics\.com/|googletagmanager\.com/|doubleclick\.net/|` +
	`scorecardresearch\.com/|quantserve\.com/|bat\.bing\.com/|pixel\.|px\.ads\.|analytics\.twitter\.com/|ct\.pinterest\.com/|` +
	`sb\.scorecardresearch\.com/)|[/._-](?:pixel|tracking[-_]?pixel|spacer|1x1|beacon)(?:\.gif|\.png)?(?:[?#]|$)|/__utm\.gif|/b/ss/`)

// mainOf is the page's main content element: <main>, role=main,
// <article>, else <body> (else the document).
func mainOf(doc *html.Node) *html.Node {
	var byTag = map[string]*html.Node{}
	walk(doc, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		key := ""
		switch {
		case n.DataAtom == atom.Main:
			key = "main"
		case attr(n, "role") == "main":
			key = "role"
		case n.DataAtom == atom.Article:
			key = "article"
		case n.DataAtom == atom.Body:
			key = "body"
		}
		if key != "" && byTag[key] == nil {
			byTag[key] = n
		}
		return true
	})
	for _, k := range []string{"main", "role", "article", "body"} {
		if n := byTag[k]; n != nil {
			return n
		}
	}
	return doc
}

// walk visits n and its descendants in document order; f returns false
// to skip a node's children.
func walk(n *html.Node, f func(*html.Node) bool) {
	if !f(n) {
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func textOf(n *html.Node) string {
	var b strings.Builder
	walk(n, func(c *html.Node) bool {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
		return true
	})
	return b.String()
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return true
		}
	}
	return false
}
