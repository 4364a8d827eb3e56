package web

import (
	"context"
	"encoding/xml"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/searxgate/searxgate/proxy"
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

// limitSearch records the timeout_limit each search was given and
// whether its context had a deadline.
type limitSearch struct {
	mu     sync.Mutex // guards limits and timed
	limits []string   // Request.TimeoutLimit of each search
	timed  int        // searches whose context had a deadline
}

func (d *limitSearch) Search(ctx context.Context, req proxy.Request) (*proxy.Response, error) {
	d.mu.Lock()
	d.limits = append(d.limits, req.TimeoutLimit)
	if _, ok := ctx.Deadline(); ok {
		d.timed++
	}
	d.mu.Unlock()
	return jsonAnswer(simpleAnswer, "https://up.example/")(req)
}

// TestTimeoutLimitParameter: timeout_limit is SearXNG's: a value that is
// no number is 400 with SearXNG's message; any other goes to the proxy as
// given, which bounds the search by it (proxy's TestTimeoutLimitBounds):
// the face adds no deadline of its own.
func TestTimeoutLimitParameter(t *testing.T) {
	ds := &limitSearch{}
	_, c := serve(t, Config{Search: ds})
	r := c.get("/search?q=x&format=json&timeout_limit=abc")
	if r.status != 400 || r.body != `{"error":"Invalid value \"abc\" for parameter timeout_limit"}` {
		t.Fatalf("timeout_limit=abc: %d %s", r.status, r.body)
	}
	given := []string{"1", "", "0", "-1", "None"}
	for _, v := range given {
		if r := c.get("/search?q=x&format=json&timeout_limit=" + v); r.status != 200 {
			t.Fatalf("timeout_limit=%s: %d %s", v, r.status, r.body)
		}
	}
	ds.mu.Lock()
	defer ds.mu.Unlock()
	want := []string{"1", "", "0", "-1", ""} // "None" is SearXNG's no limit
	if !slices.Equal(ds.limits, want) {
		t.Errorf("limits passed on %q, want %q", ds.limits, want)
	}
	if ds.timed != 0 {
		t.Errorf("%d searches had a deadline from the face", ds.timed)
	}
}

// TestBlankQuery: a q of white space is what SearXNG searches and finds
// nothing for, 200 in every format, and no instance is asked; an absent
// q is SearXNG's 400 "No query".
func TestBlankQuery(t *testing.T) {
	fs := &fakeSearch{answer: jsonAnswer(simpleAnswer, "https://up.example/")}
	_, c := serve(t, Config{Search: fs})
	r := c.get("/search?q=+++&format=json")
	if r.status != 200 || r.body != `{"query":"","number_of_results":0,"results":[],"answers":[],"corrections":[],"infoboxes":[],"suggestions":[],"unresponsive_engines":[]}` {
		t.Errorf("json: %d %s", r.status, r.body)
	}
	if r := c.get("/search?q=%20&format=csv"); r.status != 200 || r.body != "title,url,content,host,engine,score,type\r\n" {
		t.Errorf("csv: %d %q", r.status, r.body)
	}
	if r := c.get("/search?q=%20&format=rss"); r.status != 200 || !strings.Contains(r.body, "<opensearch:totalResults>0</opensearch:totalResults>") || strings.Contains(r.body, "<item>") {
		t.Errorf("rss: %d %s", r.status, r.body)
	}
	if r := c.get("/search?q=%20"); r.status != 200 {
		t.Errorf("html: %d", r.status)
	}
	if r := c.get("/search?q=&format=json"); r.status != 400 || r.body != `{"error":"No query"}` {
		t.Errorf("empty q: %d %s", r.status, r.body)
	}
	if len(fs.reqs) != 0 {
		t.Fatalf("a blank query asked %d times", len(fs.reqs))
	}
}
