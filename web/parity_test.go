package web

import (
	"encoding/xml"
	"strings"
	"testing"
)

// TestIndexRedirectsSearch: "/" with a q answers as SearXNG's index does,
// 308 to /search with the same query string (under the public URL's
// path), and searches nothing itself.
func TestIndexRedirectsSearch(t *testing.T) {
	fs := &fakeSearch{answer: jsonAnswer(simpleAnswer, "https://up.example/")}
	_, c := serve(t, Config{Search: fs})
	r := c.get("/?q=hello+world&format=json")
	if r.status != 308 || r.header["Location"] != "/search?q=hello+world&format=json" {
		t.Fatalf("GET /?q=: %d Location %q", r.status, r.header["Location"])
	}
	r = c.do("POST", "/", "q=hello&format=json", "Content-Type", "application/x-www-form-urlencoded")
	if r.status != 308 || r.header["Location"] != "/search" {
		t.Fatalf("POST / with q: %d Location %q", r.status, r.header["Location"])
	}
	if r := c.get("/"); r.status != 200 {
		t.Fatalf("GET / without q: %d", r.status)
	}
	_, c = serve(t, Config{Search: fs, PublicURL: "https://gate.example/sx/"})
	if r := c.get("/?q=x"); r.status != 308 || r.header["Location"] != "/sx/search?q=x" {
		t.Fatalf("under a public path: %d Location %q", r.status, r.header["Location"])
	}
	if len(fs.reqs) != 0 {
		t.Fatalf("the redirect searched %d times", len(fs.reqs))
	}
}

// TestFeelingLuckyRSS: SearXNG sends a feeling-lucky RSS search to its
// first result, as it does the HTML page; CSV and JSON get the results.
func TestFeelingLuckyRSS(t *testing.T) {
	fs := &fakeSearch{answer: jsonAnswer(simpleAnswer, "https://up.example/")}
	_, c := serve(t, Config{Search: fs})
	for format, status := range map[string]int{"rss": 302, "html": 302, "csv": 200, "json": 200} {
		r := c.get("/search?q=%21%21+hello&format=" + format)
		if r.status != status {
			t.Errorf("%s: status %d, want %d", format, r.status, status)
		}
		if status == 302 && r.header["Location"] != "https://example.org/hello" {
			t.Errorf("%s: Location %q", format, r.header["Location"])
		}
	}
}

// TestParameterErrorsInFormat: a parameter SearXNG refuses is answered
// 400 in the client's format as SearXNG's index_error writes it: JSON's
// error object, an empty CSV named searx.csv, a feed whose one item is
// the error.
func TestParameterErrorsInFormat(t *testing.T) {
	fs := &fakeSearch{answer: jsonAnswer(simpleAnswer, "https://up.example/")}
	_, c := serve(t, Config{Search: fs})
	const msg = `Invalid value "abc" for parameter pageno`
	r := c.get("/search?q=x&pageno=abc&format=json")
	if r.status != 400 || r.body != `{"error":"`+strings.ReplaceAll(msg, `"`, `\"`)+`"}` {
		t.Errorf("json: %d %s", r.status, r.body)
	}
	r = c.get("/search?q=x&pageno=abc&format=csv")
	if r.status != 400 || r.body != "" || r.header["Content-Type"] != "application/csv" ||
		r.header["Content-Disposition"] != "attachment;Filename=searx.csv" {
		t.Errorf("csv: %d %q %q %q", r.status, r.header["Content-Type"], r.header["Content-Disposition"], r.body)
	}
	r = c.get("/search?q=x&pageno=abc&format=rss")
	var doc struct {
		Items []struct {
			Title       string `xml:"title"`
			Description string `xml:"description"`
		} `xml:"channel>item"`
		Total string `xml:"channel>totalResults"`
	}
	if err := xml.Unmarshal([]byte(r.body), &doc); err != nil {
		t.Fatalf("rss: %v\n%s", err, r.body)
	}
	if r.status != 400 || !strings.HasPrefix(r.header["Content-Type"], "text/xml") || len(doc.Items) != 1 ||
		doc.Items[0].Title != "Error" || doc.Items[0].Description != msg || doc.Total != "0" {
		t.Errorf("rss: %d %q %+v", r.status, r.header["Content-Type"], doc)
	}
	if len(fs.reqs) != 0 {
		t.Fatalf("a refused parameter searched %d times", len(fs.reqs))
	}
}
