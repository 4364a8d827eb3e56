package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/searxgate/searxgate/sim"
)

// TestBrowser drives a real headless Chromium against searxgate on a sim
// fleet: it opens /, types a query, submits the form, checks the results
// (also on a 375 px phone: nothing wider than the screen, the search
// button beside the box, every category tab in view), then loads /status
// with a pool of realistic size and checks the instance table (it fits
// 1280 px without scrolling). It checks the images tab (a grid of images
// through the image proxy, a detail view opened and closed by keyboard),
// saves preferences on /preferences and sees them reach the instance
// that answers, types with suggestions on, and runs axe-core on every
// page, light and dark, at 1280 and 375 px. Screenshots go to
// $SEARXGATE_E2E_OUT (or a temporary folder), named in the log.
//
// Chromium can reach nothing but 127.0.0.1: every other name resolves to
// nothing and every other address goes to a proxy that does not exist.
func TestBrowser(t *testing.T) {
	bin := findChromium()
	if bin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed, and CI=true requires the browser test (.ci/run installs Debian's chromium)")
		}
		t.Skip("chromium is not installed (apt-get install chromium): skipping the browser test")
	}
	out := os.Getenv("SEARXGATE_E2E_OUT")
	if out == "" {
		out = t.TempDir()
	} else if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	instances := []sim.InstanceConfig{
		{ID: "fast-json", Behaviour: sim.Fast, JSON: true, Latency: 30 * time.Millisecond, Autocomplete: "duckduckgo"},
		{ID: "medium-html", Behaviour: sim.Medium, Latency: 80 * time.Millisecond},
		{ID: "limited", Behaviour: sim.Limiter, Latency: 50 * time.Millisecond},
		{ID: "challenged", Behaviour: sim.CloudflareChallenge403, Latency: -1},
		{ID: "refuser", Behaviour: sim.RateLimitSeconds, RateBurst: 1, Latency: -1},
	}
	// A pool of the size searx.space gives (a few dozen), of every kind.
	for i, b := range []sim.Behaviour{sim.Fast, sim.Medium, sim.JSONDisabled, sim.OffTopic, sim.EmptyEnginesDown,
		sim.RateLimitBare, sim.Unavailable503, sim.AnubisChallenge, sim.Dead, sim.BrokenJSON, sim.InvalidUTF8, sim.DDoSGuard} {
		for j := range 2 {
			instances = append(instances, sim.InstanceConfig{ID: fmt.Sprintf("%s-%d-%d", b, i, j), Behaviour: b, Latency: time.Duration(20+10*i) * time.Millisecond})
		}
	}
	// Local links: the demo's fleet, whose pages show everything SearXNG's
	// can (a count, an answer, an infobox, corrections), all on loopback.
	fleet, dir := startFleetConfig(t, sim.Config{Instances: instances, Seed: 11, LocalLinks: true})
	dir = addLongHosts(t, dir, fleet.Instance("fast-json").URL(), longHosts)
	// Names in the list are never looked up: the long ones fail at once.
	// The sim fleet serves its images on loopback: the image proxy may fetch
	// them (its own switch, not --allow-private).
	g := startGatewayWith(t, &failResolver{}, dir, "", "--image-proxy-allow-private")
	base := "http://" + g.addr + "/"
	// A few searches first, so that the status page has something to say.
	for i := range 6 {
		g.get(t, fmt.Sprintf("/search?q=warm+up+%d&format=json", i), nil)
	}

	b := startBrowser(t, bin)
	page := b.page(t)
	page.call(t, "Page.enable", nil)
	page.call(t, "Runtime.enable", nil)
	page.call(t, "Log.enable", nil)
	page.call(t, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": false})
	axe := axeScript(t)

	page.navigate(t, base)
	if n := page.evalInt(t, `document.querySelectorAll('link[rel="search"][href="/opensearch.xml"]').length`); n != 1 {
		t.Errorf("the home page has %d OpenSearch links", n)
	}
	if title := page.evalString(t, `document.title`); title != "searxgate" {
		t.Errorf("the home page's title is %q", title)
	}
	if n := page.evalInt(t, `document.scripts.length`); n != 0 {
		t.Errorf("the home page loads %d scripts though no preference asks for one", n)
	}
	page.screenshot(t, filepath.Join(out, "home.png"))
	// Suggestions are off: the OpenSearch description offers the browser
	// no suggestions URL (SearXNG offers one only when autocomplete is
	// set), so nothing typed in the address bar leaves it.
	if osd := openSearchOf(t, page); !strings.Contains(osd, `rel="results"`) || strings.Contains(osd, `rel="suggestions"`) {
		t.Errorf("with suggestions off the OpenSearch description is:\n%s", osd)
	}

	const query = "browser privacy"
	page.eval(t, `document.querySelector('input[name="q"]').focus()`)
	page.call(t, "Input.insertText", map[string]any{"text": query})
	page.call(t, "Input.dispatchKeyEvent", map[string]any{"type": "keyDown", "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "nativeVirtualKeyCode": 13, "text": "\r"})
	page.call(t, "Input.dispatchKeyEvent", map[string]any{"type": "keyUp", "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "nativeVirtualKeyCode": 13})
	page.waitFor(t, `location.pathname === "/search" && document.readyState === "complete"`)
	if got := page.evalString(t, `new URLSearchParams(location.search).get("q")`); got != query {
		t.Fatalf("the form sent q=%q, want %q", got, query)
	}
	n := page.evalInt(t, `document.querySelectorAll('article.result h3 a').length`)
	if n == 0 {
		page.screenshot(t, filepath.Join(out, "results.png"))
		t.Fatalf("no results on the page: %s", page.evalString(t, `document.body.innerText`))
	}
	titles := page.evalString(t, `Array.from(document.querySelectorAll('article.result h3')).map(e => e.innerText).join("\n")`)
	if !strings.Contains(strings.ToLower(titles), "privacy") {
		t.Errorf("the result titles do not mention the query:\n%s", titles)
	}
	if footer := page.evalString(t, `document.querySelector('.answeredby').innerText`); !strings.Contains(footer, "Answered by 127.0.0.1:") {
		t.Errorf("the footer does not say who answered: %q", footer)
	}
	if css := page.evalString(t, `getComputedStyle(document.querySelector('.searchform input[type=search]')).borderRadius`); css == "0px" {
		t.Error("the stylesheet did not load")
	}
	page.screenshot(t, filepath.Join(out, "results.png"))
	results := page.evalString(t, `location.href`)

	// The keyboard: the first Tab reaches the skip link, which comes into
	// view with a visible focus ring; Enter on it moves to the results.
	page.key(t, "Tab")
	if got := page.evalString(t, `(() => { const a = document.activeElement, r = a.getBoundingClientRect(), st = getComputedStyle(a);
		return a.className + " " + (r.top >= 0 && r.bottom <= innerHeight) + " " + st.outlineStyle })()`); got != "skip true solid" {
		t.Errorf("the first Tab: %q, want the skip link in view with a solid outline", got)
	}
	page.key(t, "Enter")
	page.waitFor(t, `location.hash === "#main"`)
	page.key(t, "Tab")
	if got := page.evalString(t, `document.activeElement.closest("main") ? document.activeElement.closest("main").id : document.activeElement.tagName`); got != "main" {
		t.Errorf("Tab after the skip link lands on %q, not in the results", got)
	}
	if got := page.evalString(t, `getComputedStyle(document.activeElement).outlineStyle`); got == "none" {
		t.Error("a focused result link shows no focus ring")
	}

	// A right-to-left language: the results say so (lang, dir); the page's
	// own words stay English, left to right.
	page.navigate(t, base+"search?q=browser+privacy&language=ar")
	if got := page.evalString(t, `(() => { const m = document.querySelector("main.results"); return m.lang + " " + m.dir + " " + document.documentElement.lang + " " + document.documentElement.dir })()`); got != "ar rtl en ltr" {
		t.Errorf("an Arabic search: results and page lang/dir %q, want \"ar rtl en ltr\"", got)
	}
	page.screenshot(t, filepath.Join(out, "results-rtl.png"))

	// The same page on a 375 px phone (the narrowest in common use), light
	// and dark.
	page.call(t, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 375, "height": 812, "deviceScaleFactor": 2, "mobile": true})
	for _, scheme := range []string{"light", "dark"} {
		page.call(t, "Emulation.setEmulatedMedia", map[string]any{"features": []map[string]string{{"name": "prefers-color-scheme", "value": scheme}}})
		page.navigate(t, results)
		checkPhoneResults(t, page)
		page.screenshot(t, filepath.Join(out, "results-phone-"+scheme+".png"))
	}
	page.call(t, "Emulation.setEmulatedMedia", map[string]any{"features": []map[string]string{{"name": "prefers-color-scheme", "value": "light"}}})
	page.call(t, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": false})

	page.navigate(t, base+"status")
	rows := page.evalInt(t, `document.querySelectorAll('table#instances tbody tr').length`)
	if want := len(instances) + len(longHosts); rows != want {
		t.Errorf("the instance table has %d rows, want %d", rows, want)
	}
	if w, vw := page.evalInt(t, `document.documentElement.scrollWidth`), page.evalInt(t, `window.innerWidth`); w > vw {
		t.Errorf("at 1280 px the status page is %d px wide, wider than the window (%d px)", w, vw)
	}
	if w, cw := page.evalInt(t, `document.querySelector('.tablewrap').scrollWidth`), page.evalInt(t, `document.querySelector('.tablewrap').clientWidth`); w > cw {
		t.Errorf("at 1280 px the instance table is %d px wide in a %d px box: it scrolls sideways", w, cw)
	}
	if txt := page.evalString(t, `document.querySelector('dl.totals').innerText`); !strings.Contains(txt, "Failed: no answer") {
		t.Errorf("the totals do not name the failed searches:\n%s", txt)
	}
	if n := page.evalInt(t, `document.querySelectorAll('table#instances svg.spark polyline').length`); n == 0 {
		t.Error("no latency sparkline on the status page")
	}
	table := page.evalString(t, `document.querySelector('table#instances').innerText`)
	for _, want := range []string{"closed", "Health", "Latency"} {
		if !strings.Contains(table, want) {
			t.Errorf("the instance table does not show %q:\n%s", want, table)
		}
	}
	page.screenshot(t, filepath.Join(out, "status.png"))

	// And the status page on the phone: the table scrolls inside its box,
	// the page itself does not.
	page.call(t, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 375, "height": 812, "deviceScaleFactor": 2, "mobile": true})
	page.navigate(t, base+"status")
	if w := page.evalInt(t, `document.documentElement.scrollWidth`); w > 375 {
		t.Errorf("on a 375 px phone the status page is %d px wide", w)
	}
	page.screenshot(t, filepath.Join(out, "status-phone.png"))

	checkImages(t, page, base, out)
	checkPreferences(t, page, base, out, fleet, axe)

	// Every page, light and dark, through axe-core, and a screenshot of
	// each at 1280 and 375 px.
	page.call(t, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": false})
	for _, scheme := range []string{"light", "dark"} {
		page.call(t, "Emulation.setEmulatedMedia", map[string]any{"features": []map[string]string{{"name": "prefers-color-scheme", "value": scheme}}})
		for _, p := range []struct{ name, path string }{
			{"home", ""}, {"results", "search?q=browser+privacy+serach"}, {"images", "search?q=browser+privacy&categories=images"},
			{"status", "status"}, {"not-found", "nowhere"}, {"preferences", "preferences"}, {"about", "about"},
			{"image-detail", "search?q=browser+privacy&categories=images#image-1"},
		} {
			for _, w := range []int{1280, 375} {
				page.call(t, "Emulation.setDeviceMetricsOverride", map[string]any{"width": w, "height": 900, "deviceScaleFactor": 1, "mobile": w < 500})
				page.navigate(t, base+p.path)
				checkAxe(t, page, axe, fmt.Sprintf("%s (%s, %d px)", p.name, scheme, w))
				// Against the screen's width, not innerWidth: a phone's
				// viewport grows to a page that is too wide.
				if sw := page.evalInt(t, `document.documentElement.scrollWidth`); sw > w {
					t.Errorf("%s (%s) at %d px is %d px wide", p.name, scheme, w, sw)
				}
				checkLayout(t, page, p.name, w)
				page.screenshot(t, filepath.Join(out, fmt.Sprintf("all-%s-%s-%d.png", p.name, scheme, w)))
			}
		}
	}
	page.call(t, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": false})
	page.call(t, "Emulation.setEmulatedMedia", map[string]any{"features": []map[string]string{{"name": "prefers-color-scheme", "value": "light"}}})

	for _, e := range page.events() {
		if strings.Contains(e, "Content Security Policy") || strings.Contains(e, "Refused to") {
			t.Errorf("the browser reported: %s", e)
		}
	}
	t.Logf("screenshots in %s", out)
}

// checkImages checks the images tab: a grid of thumbnails, every one
// through searxgate's image proxy and loaded, and a detail view that the
// keyboard opens and closes.
func checkImages(t *testing.T, page *cdp, base, out string) {
	t.Helper()
	page.navigate(t, base+"search?q=browser+privacy&categories=images")
	n := page.evalInt(t, `document.querySelectorAll('ul.imagegrid img').length`)
	if n < 5 {
		t.Fatalf("the images tab shows %d images in its grid: %s", n, page.evalString(t, `document.body.innerText`))
	}
	if bad := page.evalString(t, `Array.from(document.querySelectorAll('main img')).map(i => i.getAttribute('src')).filter(s => !s.startsWith('/image_proxy?')).join(" ")`); bad != "" {
		t.Errorf("images not through the image proxy: %s", bad)
	}
	page.waitFor(t, `Array.from(document.querySelectorAll('ul.imagegrid img')).every(i => i.complete && i.naturalWidth > 0)`)
	if w := page.evalInt(t, `document.querySelectorAll('article.result').length`); w != 0 {
		t.Errorf("%d image results drawn as text results", w)
	}
	page.screenshot(t, filepath.Join(out, "images.png"))

	// By keyboard: Tab to the first thumbnail, Enter opens its detail
	// and the keyboard is in it, the arrow keys go to the next image and
	// back, Tab reaches its Close link, Enter closes it and the thumbnail
	// is where the keyboard is again.
	page.eval(t, `document.querySelector('a.imagelink').focus()`)
	page.key(t, "Enter")
	page.waitFor(t, `location.hash === "#image-0" && getComputedStyle(document.getElementById("image-0")).display !== "none"`)
	page.waitFor(t, `document.activeElement === document.getElementById("image-0")`)
	page.key(t, "ArrowRight")
	page.waitFor(t, `location.hash === "#image-1" && getComputedStyle(document.getElementById("image-1")).display !== "none" && document.activeElement === document.getElementById("image-1")`)
	page.key(t, "ArrowLeft")
	page.waitFor(t, `location.hash === "#image-0" && getComputedStyle(document.getElementById("image-1")).display === "none" && document.activeElement === document.getElementById("image-0")`)
	page.waitFor(t, `document.querySelector('#image-0 img').complete && document.querySelector('#image-0 img').naturalWidth > 0`)
	// (The instance answered in HTML, whose image results name no
	// resolution that searxgate reads.)
	if txt := page.evalString(t, `document.getElementById("image-0").innerText`); !strings.Contains(txt, "Source page") || !strings.Contains(txt, "Full image") {
		t.Errorf("the image's detail does not link its source and the full image: %q", txt)
	}
	page.screenshot(t, filepath.Join(out, "image-detail.png"))
	page.key(t, "Tab")
	if got := page.evalString(t, `document.activeElement.className + " " + document.activeElement.getAttribute("href")`); got != "close #i0" {
		t.Errorf("Tab from an opened image reaches %q, not its Close link", got)
	}
	page.key(t, "Enter")
	page.waitFor(t, `location.hash === "#i0" && getComputedStyle(document.getElementById("image-0")).display === "none"`)
	// In the grid, the arrow keys go from thumbnail to thumbnail.
	page.key(t, "ArrowRight")
	page.waitFor(t, `document.activeElement === document.getElementById("i1")`)

	// On a 375 px phone, the detail's Close link is not over its image.
	page.call(t, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 375, "height": 812, "deviceScaleFactor": 2, "mobile": true})
	page.navigate(t, base+"search?q=browser+privacy&categories=images#image-0")
	page.waitFor(t, `document.querySelector('#image-0 img').complete && document.querySelector('#image-0 img').naturalWidth > 0`)
	if overlap := page.evalString(t, `(() => {
		const a = document.querySelector('#image-0 a.close').getBoundingClientRect(), b = document.querySelector('#image-0 img').getBoundingClientRect();
		const over = a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
		return over ? JSON.stringify({close: a, image: b}) : "" })()`); overlap != "" {
		t.Errorf("at 375 px the Close link covers the image: %s", overlap)
	}
	page.screenshot(t, filepath.Join(out, "image-detail-phone.png"))
	page.call(t, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": false})
}

// openSearchOf is the OpenSearch description the page's browser gets,
// with its cookies, as it fetches it to add the search engine.
func openSearchOf(t *testing.T, page *cdp) string {
	t.Helper()
	var s string
	raw := page.evalAwait(t, `fetch(document.querySelector('link[rel="search"]').href, {credentials: "same-origin"}).then(r => r.text())`)
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("the OpenSearch description: %v", err)
	}
	return s
}

// checkPreferences saves preferences as a person does, on /preferences,
// and checks that a search then carries them to the instance; then turns
// suggestions on and types.
func checkPreferences(t *testing.T, page *cdp, base, out string, fleet *sim.Fleet, axe string) {
	t.Helper()
	page.navigate(t, base+"preferences")
	page.eval(t, `(() => { const set = (id, v) => { document.getElementById(id).value = v };
		set("p-language", "de"); set("p-safesearch", "2"); set("p-autocomplete", "searxgate"); set("p-hotkeys", "vim") })()`)
	page.eval(t, `document.querySelector('form[action="/preferences"] button[type=submit]').click()`)
	page.waitFor(t, `location.search === "?saved=1" && document.readyState === "complete"`)
	if u := page.evalString(t, `document.getElementById("settingsurl").value`); !strings.Contains(u, "language=de") || !strings.Contains(u, "safesearch=2") {
		t.Errorf("the settings URL does not carry the preferences: %s", u)
	}
	page.screenshot(t, filepath.Join(out, "preferences-saved.png"))

	// Suggestions on: the OpenSearch description offers the suggestions
	// URL, with the saved language.
	if osd := openSearchOf(t, page); !strings.Contains(osd, `rel="suggestions"`) || !strings.Contains(osd, `autocompleter?q={searchTerms}&amp;language=de"`) {
		t.Errorf("with suggestions on the OpenSearch description is:\n%s", osd)
	}

	// Suggestions, now that they are on: typing "priv" quickly asks
	// /autocompleter once, after the pause; the list is keyboard-usable.
	page.navigate(t, base)
	if n := page.evalInt(t, `document.querySelectorAll('script[src="/static/searxgate.js"]').length`); n != 1 {
		t.Fatalf("the page loads searxgate.js %d times with suggestions on", n)
	}
	page.eval(t, `document.querySelector('input[name="q"]').focus()`)
	for _, r := range "privacy" {
		page.call(t, "Input.insertText", map[string]any{"text": string(r)})
	}
	page.waitFor(t, `document.querySelectorAll('#ac-list li[role=option]').length > 0`)
	// One request, after the pause; two if the machine stalled between
	// two letters longer than the pause. Without the minimum length and
	// the debounce it would be seven.
	if n := page.evalInt(t, `performance.getEntriesByType("resource").filter(e => e.name.includes("/autocompleter")).length`); n < 1 || n > 2 {
		t.Errorf("typing 7 letters asked /autocompleter %d times, want 1 (minimum length and debounce)", n)
	}
	if short := page.evalString(t, `performance.getEntriesByType("resource").filter(e => e.name.includes("/autocompleter")).map(e => new URL(e.name).searchParams.get("q")).filter(q => q.length < 3).join(" ")`); short != "" {
		t.Errorf("suggestions were asked for fewer than 3 letters: %q", short)
	}
	if lang := page.evalString(t, `performance.getEntriesByType("resource").filter(e => e.name.includes("/autocompleter")).map(e => e.name).join(" ")`); !strings.Contains(lang, "language=de") {
		t.Errorf("the suggestions were asked without the language chosen: %s", lang)
	}
	page.screenshot(t, filepath.Join(out, "suggestions.png"))
	checkAxe(t, page, axe, "suggestions open")
	page.key(t, "ArrowDown")
	chosen := page.evalString(t, `document.querySelector('#ac-list li[aria-selected=true]').textContent`)
	if got := page.evalString(t, `document.querySelector('input[name="q"]').getAttribute("aria-activedescendant")`); got != "ac-0" {
		t.Errorf("ArrowDown selects %q", got)
	}
	page.key(t, "Enter")
	page.waitFor(t, `location.pathname === "/search" && document.readyState === "complete"`)
	if got := page.evalString(t, `document.querySelector('input[name="q"]').value`); got != chosen {
		t.Errorf("Enter on the suggestion %q searched %q", chosen, got)
	}

	// The preferences reached the instance that answered.
	host := page.evalString(t, `document.querySelector('.answeredby a').textContent`)
	var truth *sim.Truth
	for _, in := range fleet.Instances() {
		if strings.Contains(in.URL(), "/"+host+"/") {
			tr := in.Truth()
			truth = &tr
		}
	}
	if truth == nil {
		t.Fatalf("no instance of the fleet is %q", host)
	}
	if truth.LastSearch["language"] != "de" || truth.LastSearch["safesearch"] != "2" || truth.LastAcceptLanguage != "de" {
		t.Errorf("the instance got language %q, safesearch %q, Accept-Language %q; want de, 2, de",
			truth.LastSearch["language"], truth.LastSearch["safesearch"], truth.LastAcceptLanguage)
	}
	if sel := page.evalString(t, `document.querySelector('select[name="language"]').value`); sel != "de" {
		t.Errorf("the results page's language menu shows %q", sel)
	}

	// Hotkeys (vim): j selects the first result, j the second.
	page.eval(t, `document.activeElement.blur()`)
	page.key(t, "j")
	page.key(t, "j")
	if n := page.evalInt(t, `Array.from(document.querySelectorAll("article.result")).indexOf(document.querySelector("article.result.hotkey-current"))`); n != 1 {
		t.Errorf("j j selects result %d, want 1", n)
	}
	page.screenshot(t, filepath.Join(out, "hotkeys.png"))
	page.key(t, "h")
	if txt := page.evalString(t, `(document.querySelector(".hotkeyhelp") || {innerText: ""}).innerText`); !strings.Contains(txt, "next / previous result") {
		t.Errorf("h shows no help: %q", txt)
	}

	// With the script, Escape closes an image's detail.
	page.navigate(t, base+"search?q=browser+privacy&categories=images#image-0")
	page.key(t, "Escape")
	page.waitFor(t, `location.hash === "#i0"`)

	// Infinite scroll, saved through a settings URL: reaching the end
	// of the page adds the next page's results.
	page.call(t, "Page.navigate", map[string]any{"url": base + "preferences?infinite_scroll=1&save=1"})
	page.waitFor(t, `location.pathname === "/" && document.readyState === "complete" && document.documentElement.dataset.infiniteScroll === "1"`)
	page.navigate(t, base+"search?q=infinite+scroll")
	first := page.evalInt(t, `document.querySelectorAll("article.result").length`)
	page.eval(t, `window.scrollTo(0, document.documentElement.scrollHeight)`)
	page.waitFor(t, fmt.Sprintf(`document.querySelectorAll("article.result").length > %d`, first))
	if got := page.evalString(t, `document.querySelector("nav.pages span").textContent`); got != "Page 2" {
		t.Errorf("after scrolling to the end the page links say %q, want Page 2", got)
	}

	// Back to the defaults, for the pages that follow.
	page.navigate(t, base+"preferences")
	page.eval(t, `document.querySelector('button[name="reset"]').click()`)
	page.waitFor(t, `location.search === "?reset=1" && document.readyState === "complete"`)
	if n := page.evalInt(t, `document.scripts.length`); n != 0 {
		t.Errorf("after a reset the page still loads %d scripts", n)
	}
}

// longHosts are instances with names as long as real ones get; they never
// answer (no name is resolved here), so they stay at the bottom.
var longHosts = []string{
	"https://searxng.volunteer-search-collective.example.org/",
	"https://search.projectsegfau-like-mirror.example.net/",
	"https://metasearch.privacy-first.example.com/searxng/",
	"https://sx.example.dev/",
}

// addLongHosts writes a copy of the directory at path with hosts added,
// each a copy of the entry of like (one the list keeps) claiming a slow
// median.
func addLongHosts(t *testing.T, path, like string, hosts []string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var file map[string]any
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	inst := file["instances"].(map[string]any)
	model, ok := inst[like]
	if !ok {
		t.Fatalf("%s is not in the directory", like)
	}
	for _, h := range hosts {
		var e map[string]any
		c, _ := json.Marshal(model)
		_ = json.Unmarshal(c, &e)
		e["timing"].(map[string]any)["search"].(map[string]any)["all"].(map[string]any)["median"] = 3.5
		e["alternativeUrls"] = map[string]any{} // else it would be one instance with like
		inst[h] = e
	}
	if b, err = json.Marshal(file); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "instances.json")
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkPhoneResults checks a results page on a phone: nothing is wider
// than the screen, the search button sits on one line beside the box, and
// the category tabs stay inside the page, every one of them in view.
func checkPhoneResults(t *testing.T, page *cdp) {
	t.Helper()
	vw := page.evalInt(t, `window.innerWidth`)
	if w := page.evalInt(t, `document.documentElement.scrollWidth`); w > vw {
		t.Errorf("on a %d px phone the results page is %d px wide", vw, w)
	}
	if d := page.evalInt(t, `(() => { const b = document.querySelector('.searchform button').getBoundingClientRect(), q = document.querySelector('.searchform input[type=search]').getBoundingClientRect(); return Math.round(Math.abs(b.top - q.top) + Math.abs(b.height - q.height)) })()`); d != 0 {
		t.Errorf("on a %d px phone the search button is not beside the search box (%d px off)", vw, d)
	}
	if lines := page.evalInt(t, `(() => { const b = document.querySelector('.searchform button'), r = document.createRange(); r.selectNodeContents(b); return r.getClientRects().length })()`); lines != 1 {
		t.Errorf("on a %d px phone the search button's label takes %d lines", vw, lines)
	}
	if n := page.evalInt(t, `document.querySelectorAll('nav.tabs a').length`); n < 5 {
		t.Fatalf("%d category tabs", n)
	}
	// The tabs are one row, as SearXNG's: when they do not fit, the row
	// scrolls sideways (never the page), and the current tab is in view.
	if rows := page.evalInt(t, `new Set([...document.querySelectorAll('nav.tabs a')].map(a => a.offsetTop)).size`); rows != 1 {
		t.Errorf("on a %d px phone the category tabs take %d rows", vw, rows)
	}
	if w, cw := page.evalInt(t, `document.querySelector('nav.tabs').scrollWidth`), page.evalInt(t, `document.querySelector('nav.tabs').clientWidth`); w > cw {
		if ov := page.evalString(t, `getComputedStyle(document.querySelector('nav.tabs')).overflowX`); ov != "auto" && ov != "scroll" {
			t.Errorf("on a %d px phone the category tabs are %d px wide in %d px and do not scroll (overflow-x %s)", vw, w, cw, ov)
		}
	}
	if out := page.evalString(t, `(() => { const nav = document.querySelector('nav.tabs').getBoundingClientRect(), a = document.querySelector('nav.tabs a.active').getBoundingClientRect(); return a.left < nav.left || a.right > nav.right ? "out" : "" })()`); out != "" {
		t.Errorf("on a %d px phone the current category tab is out of view", vw)
	}
}

func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	return ""
}

type browser struct {
	devtools string // http://127.0.0.1:port
}

var devtoolsLine = regexp.MustCompile(`DevTools listening on (ws://127\.0\.0\.1:(\d+)/\S+)`)

func startBrowser(t *testing.T, bin string) *browser {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--no-default-browser-check",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-default-apps",
		"--disable-extensions", "--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication",
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--proxy-server=127.0.0.1:9",
		"--hide-scrollbars", "--user-data-dir="+t.TempDir(), "--remote-debugging-port=0", "about:blank")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := devtoolsLine.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[2]:
				default:
				}
			}
		}
	}()
	select {
	case port := <-found:
		return &browser{devtools: "http://127.0.0.1:" + port}
	case <-time.After(30 * time.Second):
		t.Fatal("chromium did not print its DevTools address within 30 s")
	}
	return nil
}

// page returns a connection to the browser's first page.
func (b *browser) page(t *testing.T) *cdp {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(b.devtools + "/json/list")
		if err == nil {
			var targets []struct{ Type, WebSocketDebuggerURL string }
			err = json.NewDecoder(resp.Body).Decode(&targets)
			resp.Body.Close()
			for _, tg := range targets {
				if tg.Type == "page" && tg.WebSocketDebuggerURL != "" {
					return dialCDP(t, tg.WebSocketDebuggerURL)
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no page target: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// cdp is a minimal Chrome DevTools Protocol client over a websocket.
type cdp struct {
	conn net.Conn
	r    *bufio.Reader
	next int

	mu  sync.Mutex // guards log
	log []string   // console and log messages seen
}

func dialCDP(t *testing.T, wsURL string) *cdp {
	t.Helper()
	u, err := url.Parse(wsURL)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n",
		u.RequestURI(), u.Host, base64.StdEncoding.EncodeToString(key))
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("websocket handshake: %s", resp.Status)
	}
	return &cdp{conn: conn, r: r}
}

// writeText sends one masked text frame, as a client must.
func (c *cdp) writeText(p []byte) error {
	var h []byte
	h = append(h, 0x81)
	switch n := len(p); {
	case n < 126:
		h = append(h, 0x80|byte(n))
	case n < 1<<16:
		h = append(h, 0x80|126, byte(n>>8), byte(n))
	default:
		h = append(h, 0x80|127)
		h = binary.BigEndian.AppendUint64(h, uint64(n))
	}
	mask := make([]byte, 4)
	_, _ = rand.Read(mask)
	h = append(h, mask...)
	masked := make([]byte, len(p))
	for i := range p {
		masked[i] = p[i] ^ mask[i%4]
	}
	_, err := c.conn.Write(append(h, masked...))
	return err
}

// readMessage reads one whole message, joining fragments and skipping
// control frames.
func (c *cdp) readMessage() ([]byte, error) {
	var msg []byte
	for {
		var h [2]byte
		if _, err := io.ReadFull(c.r, h[:]); err != nil {
			return nil, err
		}
		fin, op := h[0]&0x80 != 0, h[0]&0x0f
		n := uint64(h[1] & 0x7f)
		switch n {
		case 126:
			var b [2]byte
			if _, err := io.ReadFull(c.r, b[:]); err != nil {
				return nil, err
			}
			n = uint64(binary.BigEndian.Uint16(b[:]))
		case 127:
			var b [8]byte
			if _, err := io.ReadFull(c.r, b[:]); err != nil {
				return nil, err
			}
			n = binary.BigEndian.Uint64(b[:])
		}
		if h[1]&0x80 != 0 {
			return nil, errors.New("the server masked a frame")
		}
		if n > 256<<20 {
			return nil, fmt.Errorf("frame of %d bytes", n)
		}
		p := make([]byte, n)
		if _, err := io.ReadFull(c.r, p); err != nil {
			return nil, err
		}
		switch op {
		case 0x8:
			return nil, errors.New("the browser closed the connection")
		case 0x9, 0xA:
			continue
		}
		msg = append(msg, p...)
		if fin {
			return msg, nil
		}
	}
}

// call sends one command and waits for its answer, keeping the console
// and log events that arrive meanwhile.
func (c *cdp) call(t *testing.T, method string, params any) json.RawMessage {
	t.Helper()
	c.next++
	id := c.next
	req, _ := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	_ = c.conn.SetDeadline(time.Now().Add(30 * time.Second))
	if err := c.writeText(req); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	for {
		raw, err := c.readMessage()
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		var m struct {
			ID     int             `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		switch {
		case m.ID == id && m.Error != nil:
			t.Fatalf("%s: %s", method, m.Error.Message)
		case m.ID == id:
			return m.Result
		case m.Method == "Log.entryAdded" || m.Method == "Runtime.consoleAPICalled" || m.Method == "Runtime.exceptionThrown":
			c.mu.Lock()
			c.log = append(c.log, m.Method+": "+string(m.Params))
			c.mu.Unlock()
		}
	}
}

func (c *cdp) events() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.log...)
}

func (c *cdp) eval(t *testing.T, expr string) json.RawMessage {
	t.Helper()
	return c.evaluate(t, expr, false)
}

func (c *cdp) evalString(t *testing.T, expr string) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(c.eval(t, expr), &s); err != nil {
		t.Fatalf("%s: not a string: %v", expr, err)
	}
	return s
}

func (c *cdp) evalInt(t *testing.T, expr string) int {
	t.Helper()
	var n int
	if err := json.Unmarshal(c.eval(t, expr), &n); err != nil {
		t.Fatalf("%s: not a number: %v", expr, err)
	}
	return n
}

// waitFor polls a condition (the browser has its own clock; this is an
// end-to-end test, not a unit test).
func (c *cdp) waitFor(t *testing.T, cond string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for string(c.eval(t, "Boolean("+cond+")")) != "true" {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s (at %s)", cond, c.evalString(t, "location.href"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *cdp) navigate(t *testing.T, u string) {
	t.Helper()
	c.call(t, "Page.navigate", map[string]any{"url": u})
	c.waitFor(t, fmt.Sprintf(`location.href === %q && document.readyState === "complete"`, u))
}

// key presses and releases one key (Enter, Tab, ArrowDown, Escape or a
// letter) on the focused element.
func (c *cdp) key(t *testing.T, key string) {
	t.Helper()
	codes := map[string][2]any{"Enter": {"Enter", 13}, "Tab": {"Tab", 9}, "ArrowDown": {"ArrowDown", 40}, "ArrowUp": {"ArrowUp", 38}, "ArrowRight": {"ArrowRight", 39}, "ArrowLeft": {"ArrowLeft", 37}, "Escape": {"Escape", 27}}
	code, vk := "Key"+strings.ToUpper(key), int(strings.ToUpper(key)[0])
	text := key
	if k, ok := codes[key]; ok {
		code, vk, text = k[0].(string), k[1].(int), ""
		if key == "Enter" {
			text = "\r"
		}
	}
	down := map[string]any{"type": "keyDown", "key": key, "code": code, "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk}
	if text != "" {
		down["text"] = text
	}
	c.call(t, "Input.dispatchKeyEvent", down)
	c.call(t, "Input.dispatchKeyEvent", map[string]any{"type": "keyUp", "key": key, "code": code, "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk})
}

// screenshot saves the whole page as a PNG.
func (c *cdp) screenshot(t *testing.T, path string) {
	t.Helper()
	var m struct {
		CSSContentSize struct{ Width, Height float64 } `json:"cssContentSize"`
	}
	_ = json.Unmarshal(c.call(t, "Page.getLayoutMetrics", nil), &m)
	params := map[string]any{"format": "png", "captureBeyondViewport": true}
	if m.CSSContentSize.Width > 0 && m.CSSContentSize.Height > 0 {
		params["clip"] = map[string]any{"x": 0, "y": 0, "width": m.CSSContentSize.Width, "height": min(m.CSSContentSize.Height, 4000), "scale": 1}
	}
	var shot struct{ Data string }
	if err := json.Unmarshal(c.call(t, "Page.captureScreenshot", params), &shot); err != nil {
		t.Fatal(err)
	}
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// axeScript is axe-core's source, installed by npm from
// testdata/axe/package.json (.ci/run runs npm ci there). Without it the
// accessibility checks are skipped outside CI and fail under CI=true.
func axeScript(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "axe", "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("axe-core is not installed, and CI=true requires the accessibility checks (.ci/run runs npm ci in cmd/searxgate/testdata/axe): %v", err)
		}
		t.Log("SKIP: axe-core is not installed (cd cmd/searxgate/testdata/axe && npm ci): the accessibility checks are left out")
		return ""
	}
	return string(b)
}

// axeFinding is one rule axe-core found broken, with the nodes that break it.
type axeFinding struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target  []any  `json:"target"`
		Summary string `json:"failureSummary"`
	} `json:"nodes"`
}

// checkAxe runs axe-core's WCAG 2 A and AA rules on the page as it is and
// fails on every serious or critical finding; what stands is logged.
func checkAxe(t *testing.T, page *cdp, script, name string) {
	t.Helper()
	if script == "" {
		return
	}
	if string(page.eval(t, `typeof axe`)) != `"object"` {
		// Evaluated as the expression itself: an eval() inside the page
		// would meet its CSP.
		page.call(t, "Runtime.evaluate", map[string]any{"expression": script})
	}
	raw := page.evalAwait(t, `axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}, resultTypes: ["violations"]}).then(r => JSON.stringify({violations: r.violations, passes: r.passes.length}))`)
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("axe on %s: %v", name, err)
	}
	var res struct {
		Violations []axeFinding `json:"violations"`
		Passes     int          `json:"passes"`
	}
	if err := json.Unmarshal([]byte(s), &res); err != nil {
		t.Fatalf("axe on %s: %v", name, err)
	}
	if res.Passes == 0 {
		t.Errorf("axe on %s: no rule passed: axe did not run", name)
	}
	t.Logf("axe on %s: %d rules pass, %d broken", name, res.Passes, len(res.Violations))
	for _, f := range res.Violations {
		var where []string
		for i, n := range f.Nodes {
			if i == 3 {
				where = append(where, fmt.Sprintf("… %d more", len(f.Nodes)-3))
				break
			}
			where = append(where, fmt.Sprint(n.Target)+": "+strings.ReplaceAll(n.Summary, "\n", " "))
		}
		msg := fmt.Sprintf("axe on %s: %s (%s, %d nodes): %s\n\t%s", name, f.ID, f.Impact, len(f.Nodes), f.Help, strings.Join(where, "\n\t"))
		if f.Impact == "serious" || f.Impact == "critical" {
			t.Error(msg)
		} else {
			t.Log(msg)
		}
	}
}

// evalAwait evaluates an expression whose value is a promise, and returns
// what it resolves to.
func (c *cdp) evalAwait(t *testing.T, expr string) json.RawMessage {
	t.Helper()
	return c.evaluate(t, expr, true)
}

// evaluate evaluates expr in the page (awaiting its promise with await)
// and returns its value; an exception fails the test, with its text and
// description.
func (c *cdp) evaluate(t *testing.T, expr string, await bool) json.RawMessage {
	t.Helper()
	res := c.call(t, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": await})
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception *struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatal(err)
	}
	if d := r.ExceptionDetails; d != nil {
		msg := d.Text
		if d.Exception != nil {
			msg += " " + d.Exception.Description
		}
		t.Fatalf("%.80s: %s", expr, msg)
	}
	return r.Result.Value
}

// checkLayout checks the results pages as SearXNG's simple theme lays
// them out: the query's words marked, the same search linked as JSON, CSV
// and RSS, the category tabs one row; on a phone the infobox and the
// suggestions above the results; image results over the page's width,
// each with its caption.
func checkLayout(t *testing.T, page *cdp, name string, w int) {
	t.Helper()
	if name != "results" && name != "images" {
		return
	}
	if n := page.evalInt(t, `new Set([...document.querySelectorAll('.tabs a')].map(a => a.offsetTop)).size`); n != 1 {
		t.Errorf("%s at %d px: the category tabs take %d rows", name, w, n)
	}
	if n := page.evalInt(t, `document.querySelectorAll('.formats a[href*="format=json"], .formats a[href*="format=csv"], .formats a[href*="format=rss"]').length`); n != 3 {
		t.Errorf("%s at %d px: %d links to the search's formats", name, w, n)
	}
	if name == "images" {
		if n := page.evalInt(t, `document.querySelectorAll('.imagegrid .caption').length === document.querySelectorAll('.imagegrid li').length ? document.querySelectorAll('.imagegrid li').length : -1`); n < 1 {
			t.Errorf("images at %d px: the grid's pictures have no captions (%d)", w, n)
		}
		if pct := page.evalInt(t, `Math.round(100 * document.querySelector('.imagegrid').getBoundingClientRect().width / document.documentElement.clientWidth)`); pct < 90 {
			t.Errorf("images at %d px: the grid takes %d %% of the width", w, pct)
		}
		return
	}
	for _, sel := range []string{".result mark", ".answer", ".infobox", ".correction", ".count"} {
		if page.evalInt(t, `document.querySelectorAll('`+sel+`').length`) == 0 {
			t.Errorf("results at %d px: no %s", w, sel)
		}
	}
	above := page.evalInt(t, `(() => { const r = document.querySelector('.result').getBoundingClientRect().top;
		return [...document.querySelectorAll('.infobox, .suggestions')].every(e => e.getBoundingClientRect().top < r) ? 1 : 0 })()`)
	if w < 500 && above != 1 {
		t.Errorf("results at %d px: the infobox and suggestions are not above the results", w)
	}
	beside := page.evalInt(t, `document.querySelector('.infobox').getBoundingClientRect().left >= document.querySelector('.result').getBoundingClientRect().right ? 1 : 0`)
	if w >= 1000 && beside != 1 {
		t.Errorf("results at %d px: the infobox is not beside the results", w)
	}
}
