package detect

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/searxgate/searxgate/results"
)

// seedBodies adds the body of every fixture, and a few edge cases, to f.
func seedBodies(f *testing.F) {
	for _, name := range fixtureNames(f) {
		f.Add(loadCapture(f, name).body)
	}
	f.Add(tenResultsJSON())
	// SearXNG 2026: its captures, and every answer type in JSON and HTML.
	for _, name := range captures2026 {
		f.Add(loadCapture(f, "searxng-2026/json-"+name+".txt").body)
		f.Add(loadCapture(f, "searxng-2026/html-"+name+".txt").body)
	}
	for _, name := range []string{"answers.json", "answers.html"} {
		b, err := os.ReadFile(filepath.Join("testdata", "answers-2026", name))
		if err != nil {
			f.Fatal(err)
		}
		if strings.HasSuffix(name, ".json") {
			b = []byte(`{"query": "q", "results": [], "answers": ` + string(b) + `}`)
		} else {
			b = []byte(`<input id="q" value="q"><div id="results">` + string(b) + `<div id="urls"></div></div>`)
		}
		f.Add(b)
	}
	for _, s := range []string{"", "{}", "[]", "null", `{"results": [{"url": "http://x"}]}`, "<html>", `<div id="results"><div id="urls">`, `id="q" id="results"`} {
		f.Add([]byte(s))
	}
	// Attacks: hostile fields, bidi controls, deep and large unknown
	// fields, a spoofed parsed_url, a document nested too deep.
	f.Add([]byte(hostileJSON))
	f.Add([]byte(hostileHTML))
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, s := range []string{
		`{"query": "q", "results": [{"url": "https://a.example/", "x": ` + nest(MaxExtraDepth+1) + `, "y": ` + nest(MaxExtraDepth) + `}]}`,
		`{"query": "q", "results": [{"url": "https://a.example/", "x": ` + nest(maxJSONDepth+1) + `}]}`,
		`{"query": "q", "results": [{"url": "https://a.example/", "x": "` + strings.Repeat("<", MaxExtraBytes) + `"}]}`,
		`{"query": "q", "results": [{"url": "https://a.example/", "parsed_url": ["javascript", "", "alert(1)", "", "", ""], "thumbnail_src": "javascript:alert(1)", "icon": {"src": "data:,x", "url": "vbscript:x"}}]}`,
		`{"query": "q\u202e", "results": [{"url": "https://a.example/\u202e", "title": "t"}, {"url": "https://b.example/", "title": "\u2066t\u2069", "img_src": "//x", "iframe_src": " https://a.example/"}]}`,
		`{"query": "q", "results": [], "infoboxes": [{"infobox": "b", "img_src": "javascript:x", "urls": [{"url": "data:,x"}], "attributes": [{"label": "l", "value": "v", "image": {"src": "javascript:x"}}]}]}`,
	} {
		f.Add([]byte(s))
	}
}

// FuzzParseJSON: never panics; what it reads, AppendJSON writes as valid
// JSON that reads back the same, with only http(s) result URLs.
func FuzzParseJSON(f *testing.F) {
	seedBodies(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := ParseJSON(body)
		if err != nil {
			if r != nil {
				t.Fatalf("results with an error")
			}
			return
		}
		checkResults(t, r, len(body))
	})
}

// FuzzParseHTML: never panics; what it reads is well formed and writes as
// valid JSON; ParseFormats agrees with itself.
func FuzzParseHTML(f *testing.F) {
	seedBodies(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := ParseHTML(body)
		if err == nil {
			checkResults(t, r, len(body))
		} else if r != nil {
			t.Fatalf("results with an error")
		}
		for _, format := range ParseFormats(body) {
			if format == "" || format == "html" || strings.ToLower(format) != format {
				t.Fatalf("format %q", format)
			}
		}
	})
}

// checkResults asserts what every parser promises of what it read from
// inLen bytes: only http(s) links, no bidi controls, bounded depth and
// size (checkBounded), and a faithful round trip.
func checkResults(t *testing.T, r *results.Page, inLen int) {
	t.Helper()
	for _, x := range r.Results {
		if !httpURL(x.URL) {
			t.Fatalf("result URL %q passed on", x.URL)
		}
		for _, u := range []string{x.Thumbnail, x.ImgSrc, x.IframeSrc} {
			if u != "" && !httpURL(u) {
				t.Fatalf("link %q passed on", u)
			}
		}
	}
	for _, b := range r.Infoboxes {
		if b.ImgSrc != "" && !httpURL(b.ImgSrc) {
			t.Fatalf("infobox image %q passed on", b.ImgSrc)
		}
	}
	for _, a := range r.Answers {
		if a.URL != "" && !httpURL(a.URL) {
			t.Fatalf("answer link %q passed on", a.URL)
		}
	}
	for _, shape := range []results.Shape{results.Classic, results.Current} {
		if js := r.AppendJSONAs(nil, shape); !json.Valid(js) {
			t.Fatalf("the %s shape is not valid JSON: %s", shape, js)
		}
	}
	out := r.AppendJSON(nil)
	checkBounded(t, out, inLen)
	back, err := ParseJSON(out)
	if err != nil {
		t.Fatalf("reading back: %v", err)
	}
	// Invalid UTF-8 is written as \ufffd, as encoding/json does, and reads
	// back as a real U+FFFD; only valid text must come back the same.
	if !allValidUTF8(r) {
		return
	}
	if !reflect.DeepEqual(normalize(r), normalize(back)) {
		t.Fatalf("round trip differs:\n got %#v\nwant %#v", back, r)
	}
	if again := back.AppendJSON(nil); string(again) != string(out) {
		t.Fatalf("second write differs:\n%s\n%s", again, out)
	}
}

// allValidUTF8 reports whether every string of r is valid UTF-8 without
// U+FFFD (encoding/json writes both as \ufffd).
func allValidUTF8(r *results.Page) bool {
	b, err := json.Marshal(r)
	return err == nil && utf8.Valid(b) && !strings.Contains(string(b), `\ufffd`) && !strings.Contains(string(b), "\uFFFD")
}

// FuzzParseConfig: never panics; an error wraps ErrNotConfig and returns
// the zero Terms.
func FuzzParseConfig(f *testing.F) {
	seedBodies(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		terms, err := ParseConfig(body)
		if err != nil && !reflect.DeepEqual(terms, Terms{}) {
			t.Fatalf("terms with an error: %#v", terms)
		}
		if terms.Limiter && !terms.LimiterKnown {
			t.Fatalf("limiter on but not known")
		}
	})
}

// FuzzParseRetryAfter: never panics, never negative, never above
// MaxRetryAfter.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"120", "1.5", "0", "-1", "Sun, 29 Nov 2026 13:30:00 GMT", "1700000000", "99999999999999999999", "NaN", "1e9", "reset=5", `"p";r=0;t=3`, ""} {
		f.Add(s, s, s)
	}
	f.Fuzz(func(t *testing.T, retryAfter, reset, structured string) {
		h := Headers{"Retry-After": retryAfter, "RateLimit-Reset": reset, "RateLimit": structured}
		d := ParseRetryAfter(h, fixtureNow)
		if d < 0 || d > MaxRetryAfter {
			t.Fatalf("ParseRetryAfter(%q, %q, %q) = %v", retryAfter, reset, structured, d)
		}
	})
}

// FuzzClassify: never panics; the verdict is consistent with itself; the
// results it carries are bounded and sanitised (checkBounded).
func FuzzClassify(f *testing.F) {
	for _, name := range fixtureNames(f) {
		c := loadCapture(f, name)
		f.Add(c.status, c.body, "json", "hello world", c.header.Peek("Retry-After"))
		f.Add(c.status, c.body, "html", "hello world", []byte(nil))
	}
	f.Add(200, []byte(hostileJSON), "json", "hello world", []byte(nil))
	f.Add(200, []byte(hostileHTML), "html", "hello world", []byte(nil))
	f.Fuzz(func(t *testing.T, status int, body []byte, format, query string, retryAfter []byte) {
		v := Classify(Answer{Status: status, Body: body, Format: format, Query: ParseQuery(query), Now: fixtureNow,
			Header: Headers{"Retry-After": string(retryAfter)}})
		switch v.Kind {
		case OK:
			if v.Reason != "" || v.Results == nil {
				t.Fatalf("ok verdict with reason %q, results %v", v.Reason, v.Results != nil)
			}
		case Soft, Refused, Failed:
			if v.Reason.Kind() != v.Kind {
				t.Fatalf("%s verdict with reason %q", v.Kind, v.Reason)
			}
		default:
			t.Fatalf("kind %d", v.Kind)
		}
		if v.RetryAfter < 0 || v.RetryAfter > MaxRetryAfter {
			t.Fatalf("RetryAfter %v", v.RetryAfter)
		}
		if v.Results != nil && (v.Kind == Refused || v.Kind == Failed) {
			t.Fatalf("%s verdict with results", v.Kind)
		}
		if v.Results != nil {
			checkBounded(t, v.Results.AppendJSON(nil), len(body))
		}
	})
}
