package reader

import (
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/searxgate/searxgate/reader/internal/mdtext"
)

// long pads a page so that readability takes it as an article.
var long = "<p>" + strings.Repeat("Plenty of ordinary words to make this page an article. ", 8) + "</p>"

// TestExtractText: characters come through as themselves, escaped only
// where Markdown would read them as markup; ads go, look-alikes stay.
func TestExtractText(t *testing.T) {
	for _, tc := range []struct {
		name, body  string
		has, hasNot []string
	}{
		{name: "angle brackets in prose",
			body: "<article><p>if a &lt; b and b &gt; c then Vec&lt;T&gt; &amp; more</p>" + long + "</article>",
			has:  []string{"if a < b and b > c then Vec\\<T> & more"}, hasNot: []string{"&lt;", "&gt;", "&amp;"}},
		{name: "a tag-like text is escaped, not HTML",
			body: "<article><p>write &lt;script&gt; or &lt;/div&gt; or &lt;!-- x --&gt;</p>" + long + "</article>",
			has:  []string{`write \<script> or \</div> or \<!-- x -->`}},
		{name: "> at the start of a line would be a quote",
			body: "<article><p>&gt; 5 km is far</p>" + long + "</article>",
			has:  []string{"\\> 5 km is far"}},
		{name: "a code block keeps everything",
			body: `<article><pre><code class="lang-go">if a &lt; b &amp;&amp; c &gt; d {}</code></pre>` + long + "</article>",
			has:  []string{"```go\nif a < b && c > d {}\n```"}},
		{name: "a data-lang block",
			body: `<article><pre data-lang="Python">print(1 &lt; 2)</pre>` + long + "</article>",
			has:  []string{"```python\nprint(1 < 2)\n```"}},
		{name: "a plain block has no language",
			body: `<article><pre class="nohighlight">x &lt; y</pre>` + long + "</article>",
			has:  []string{"```\nx < y\n```"}},
		{name: "ads by class, attribute and label",
			body: `<article>` + long + `<div class="ad-container">AD-ONE</div><div data-ad-slot="3">AD-TWO</div>` +
				`<p>SPONSORED: AD-THREE</p><div><span>Advertisement</span></div><aside class="promo_box">AD-FOUR</aside>` +
				`<div id="taboola-below">AD-FIVE</div>` + long + `</article>`,
			hasNot: []string{"AD-ONE", "AD-TWO", "AD-THREE", "AD-FOUR", "AD-FIVE", "Advertisement"}},
		{name: "look-alikes stay",
			body: `<article><div class="shadow ads-free"><p>KEEP-ONE</p></div><p class="badge">KEEP-TWO</p>` +
				`<p>Sponsored by the city, KEEP-THREE runs every summer.</p><div class="download">KEEP-FOUR</div>` + long + `</article>`,
			has: []string{"KEEP-ONE", "KEEP-TWO", "KEEP-THREE", "KEEP-FOUR"}},
		{name: "a block named like an ad but holding an article stays",
			body: `<body><div class="ad-wrapper"><h1>Big</h1>` + long + long + long + long + `KEEP-FIVE</div></body>`,
			has:  []string{"KEEP-FIVE"}},
		{name: "the h1 of a page without article",
			body: `<body><div class="sidebar"><ul><li><a href="/a">MENU-A</a></li></ul></div><div class="content"><h1>The Title</h1>` + long + long + `</div></body>`,
			has:  []string{"# The Title\n\n"}},
		{name: "permalinks and skip links go",
			body: `<body><a class="skip-link" href="#main">Skip to content</a><article><h2>Part<a class="headerlink" href="#part">¶</a></h2>` +
				long + `<h3>Next <a href="#next">#</a></h3>` + long + `</article></body>`,
			has: []string{"## Part\n", "### Next\n"}, hasNot: []string{"Skip to content", "¶", "(#"}},
	} {
		_, md := Extract([]byte(tc.body), nil)
		for _, want := range tc.has {
			if !strings.Contains(md, want) {
				t.Errorf("%s: lacks %q:\n%s", tc.name, want, md)
			}
		}
		for _, no := range tc.hasNot {
			if strings.Contains(md, no) {
				t.Errorf("%s: keeps %q:\n%s", tc.name, no, md)
			}
		}
	}
}

func TestKinds(t *testing.T) {
	for _, tc := range []struct{ mt, kind, lang string }{
		{"text/html", kindHTML, ""}, {"application/json", kindJSON, ""}, {"application/ld+json", kindJSON, ""},
		{"text/plain", kindPlain, ""}, {"application/yaml", kindPlain, "yaml"}, {"application/rss+xml", kindPlain, "xml"},
		{"application/pdf", kindPDF, ""}, {"application/x-pdf", kindPDF, ""}, {"image/png", "", ""},
		{"application/octet-stream", "", ""},
	} {
		if k, l := kindOf(tc.mt); k != tc.kind || l != tc.lang {
			t.Errorf("%s: %q %q, want %q %q", tc.mt, k, l, tc.kind, tc.lang)
		}
	}
	if got := mdtext.Fenced("json", "{\"a\": \"```\"}"); got != "````json\n{\"a\": \"```\"}\n````" {
		t.Errorf("fence %q", got)
	}
	if got := prettyJSON([]byte("not json {")); got != "not json {" {
		t.Errorf("bad JSON %q", got)
	}
}

// TestExtractLinks: links that lead nowhere an agent can go (file:, ftp:,
// tel:, javascript: …) keep their text and lose their URL; anchors
// without an href and links without text leave no empty [](url); mailto
// stays; tracking pixels go, real images stay.
func TestExtractLinks(t *testing.T) {
	page := `<html><body><article><h2><a name="intro"></a>Intro</h2>` +
		`<h2><a name="S2" id="S2">Directory layout</a></h2>` +
		`<p>See <a href="file:///etc/passwd">the local file</a>, <a href="FILE:/c:/x">another</a>, ` +
		`<a href="ftp://ftp.example.org/pub">the mirror</a>, <a href="tel:+331234">call us</a>, ` +
		`<a href=" fi&#x09;le:///x">spaced</a>, <a href="mailto:a@example.org">write</a>, ` +
		`<a href="/rel/page">a relative page</a>, <a href="https://example.org/ok">a fine one</a>` +
		`<a href="https://example.org/empty"></a><a href="https://example.org/icon"><span class="icon"></span></a>.</p>` +
		`<p>Pixels: <img src="https://example.org/t.gif" width="1" height="1" alt="px1">` +
		`<img src="https://example.org/t2.gif" width="0" height="0" alt="px0">` +
		`<img src="https://example.org/t3.gif" style="width:1px;height:1px" alt="px-style">` +
		`<img src="https://www.facebook.com/tr?id=1&ev=PageView" alt="px-fb">` +
		`<img src="https://stats.example.org/images/pixel.gif?u=1" alt="px-named">` +
		`<img src="file:///home/u/pic.png" alt="px-file">` +
		`<img src="https://example.org/photo.jpg" width="640" height="480" alt="a real photo">` +
		`<a href="https://example.org/big"><img src="https://example.org/thumb.jpg" width="120" alt="thumb"></a></p>` +
		long + `</article></body></html>`
	u, _ := url.Parse("https://docs.example.org/guide/")
	_, md := Extract([]byte(page), u)
	for _, want := range []string{"## Intro\n", "## Directory layout\n", "See the local file, another, the mirror, call us, spaced, ",
		"[write](mailto:a@example.org)", "[a relative page](https://docs.example.org/rel/page)", "[a fine one](https://example.org/ok)",
		"![a real photo](https://example.org/photo.jpg)", "[![thumb](https://example.org/thumb.jpg)](https://example.org/big)"} {
		if !strings.Contains(md, want) {
			t.Errorf("lacks %q:\n%s", want, md)
		}
	}
	for _, no := range []string{"[](", "file:", "FILE:", "ftp:", "tel:", "px1", "px0", "px-style", "px-fb", "px-named", "px-file",
		"example.org/empty", "example.org/icon", "(https://docs.example.org/guide/)"} {
		if strings.Contains(md, no) {
			t.Errorf("keeps %q:\n%s", no, md)
		}
	}
}

// TestExtractStructure: headings keep their levels (readability's h1 to
// h2 undone, the title heading it drops put back once), and a <pre> that
// holds two examples gives two code blocks.
func TestExtractStructure(t *testing.T) {
	for _, tc := range []struct {
		name, body  string
		has, hasNot []string
		heads       string
	}{
		{name: "an article's h1 beside its h2s",
			body: `<html><head><title>Site</title></head><body><article><h1>Tides</h1>` + long + `<h2>Causes</h2>` + long +
				`<h2>Effects</h2>` + long + `</article></body></html>`,
			heads: "# Tides|## Causes|## Effects"},
		{name: "Sphinx: h1 sections, h2 subsections, no repeated Abstract",
			body: `<html><head><title>Debian Python Policy 0.12.0.0 documentation</title></head><body>` +
				`<div class="document"><div class="body" role="main"><section id="abstract"><h1>Abstract<a class="headerlink" href="#abstract">¶</a></h1>` +
				`<p>This document describes the packaging of Python within the Debian distribution.</p></section>` +
				`<section id="contents"><h1>Contents</h1><section id="copyright"><h2><span class="section-number">1. </span>Copyright</h2>` + long +
				`</section><section><h2><span class="section-number">2. </span>Packaging</h2>` + long + `</section></section></div></div></body></html>`,
			heads: "# Abstract|# Contents|## 1. Copyright|## 2. Packaging"},
		{name: "the title heading readability drops comes back once",
			body: `<html><head><title>Tidal locking explained | Example</title></head><body><article><h1>Tidal locking explained</h1>` + long +
				`<h2>How</h2>` + long + `</article></body></html>`,
			heads: "# Tidal locking explained|## How"},
		{name: "a title h2 under a site-name h1 in the page header",
			body: `<html><head><title>URL | Node.js v20 Documentation</title></head><body><header><h1>Node.js v20 documentation</h1></header>` +
				`<div role="main" id="apicontent"><h2>URL</h2>` + long + `<h3>URL strings</h3>` + long + `</div></body></html>`,
			heads: "## URL|### URL strings", hasNot: []string{"Node.js v20 documentation"}},
		{name: "Node.js paired examples",
			body: `<article>` + long + `<pre class="with-32-chars"><input class="js-flavor-toggle" type="checkbox" checked>` +
				`<code class="language-js mjs">import url from 'node:url';</code><code class="language-js cjs">const url = require('node:url');</code>` +
				`<button class="copy-button">copy</button></pre>` + long + `</article>`,
			has: []string{"```js\nimport url from 'node:url';\n```\n\n```js\nconst url = require('node:url');\n```"}, hasNot: []string{"copy"}},
		{name: "two adjacent blocks",
			body: `<article>` + long + `<pre><code>make</code></pre><pre><code>make install</code></pre>` + long + `</article>`,
			has:  []string{"```\nmake\n```\n\n```\nmake install\n```"}},
	} {
		_, md := Extract([]byte(tc.body), nil)
		for _, want := range tc.has {
			if !strings.Contains(md, want) {
				t.Errorf("%s: lacks %q:\n%s", tc.name, want, md)
			}
		}
		for _, no := range tc.hasNot {
			if strings.Contains(md, no) {
				t.Errorf("%s: keeps %q:\n%s", tc.name, no, md)
			}
		}
		if tc.heads != "" {
			var hs []string
			for _, h := range Headings(md) {
				hs = append(hs, strings.Repeat("#", h.Level)+" "+h.Text)
			}
			if got := strings.Join(hs, "|"); got != tc.heads {
				t.Errorf("%s: headings %q, want %q:\n%s", tc.name, got, tc.heads, md)
			}
		}
	}
}

// TestExtractAdmonitions: notes and warnings as each generator writes
// them reach the Markdown with their label and text, as quotations;
// a sidebar aside still goes.
func TestExtractAdmonitions(t *testing.T) {
	body, err := os.ReadFile("testdata/admonitions.html")
	if err != nil {
		t.Fatal(err)
	}
	_, md := Extract(body, nil)
	for _, want := range []string{
		"> **Note:** SPHINX-NOTE: the cache is rebuilt on start.",
		"> **Warning:** SPHINX-WARNING first paragraph.\n>\n> SPHINX-WARNING second paragraph.",
		"> New in version 3.2.",
		"> **Note:** DOCBOOK-NOTE: the given directory must exist.",
		"> **Caution:** DOCBOOK-CAUTION: do not run it as root.",
		"> [Stability: 1](documentation.html#stability-index) - Experimental",
		"> **Tip:** MKDOCS-TIP: use `--watch`.",
		"> **Important:** GITHUB-IMPORTANT: back up first.",
		"> **danger:** DOCUSAURUS-DANGER: this deletes the volume.",
		"> ASIDE-NOTE: works on Linux only.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("lacks %q:\n%s", want, md)
		}
	}
	for _, no := range []string{"SIDEBAR-LINK", "[Caution]", "caution.png"} {
		if strings.Contains(md, no) {
			t.Errorf("keeps %q:\n%s", no, md)
		}
	}
	if hs := Headings(md); len(hs) != 1 || hs[0].Text != "Admonitions" {
		t.Errorf("headings %+v: an admonition's title became a heading:\n%s", hs, md)
	}
}
