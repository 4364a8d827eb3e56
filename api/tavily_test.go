package api

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/reader"
	"github.com/searxgate/searxgate/results"
)

type tavilyOut struct {
	Query   string  `json:"query"`
	Answer  *string `json:"answer"`
	Images  []any
	Results []struct {
		Title, URL, Content string
		Score               float64
		RawContent          *string `json:"raw_content"`
		PublishedDate       string  `json:"published_date"`
	}
	ResponseTime *float64 `json:"response_time"`
}

type tavilyErr struct {
	Detail struct {
		Error string `json:"error"`
	} `json:"detail"`
}

// TestTavilySearch: the answer has Tavily's shape, max_results results
// with scores in 0..1, raw content read through the reader (as Markdown
// or text), images from the results, the query echoed as asked, unknown
// fields ignored, and what the proxy was asked says what the body said.
func TestTavilySearch(t *testing.T) {
	fs := &fakeSearch{perPage: 10, pages: 3, dates: []string{"2025-03-14T15:09:26+00:00"}}
	fr := &fakeRead{fail: map[string]error{"https://example.org/2": reader.ErrTimeout}}
	s := newTest(fs, fr)
	status, body, _ := do(t, s, "POST", PathTavilySearch, `{"query":"tidal locking","max_results":5,"include_raw_content":"text",
		"include_images":true,"search_depth":"advanced","topic":"news","time_range":"w","country":"germany","something_new":{"x":1},"api_key":null}`, nil)
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	var out tavilyOut
	decode(t, body, &out)
	if out.Query != "tidal locking" || len(out.Results) != 5 || out.Answer != nil || out.ResponseTime == nil || len(out.Images) != maxImages || out.Images[0] != "https://img.example.org/1.png" {
		t.Fatalf("answer %s", body)
	}
	if r := out.Results[0]; r.Score != 1 || r.URL != "https://example.org/1" || r.PublishedDate != "2025-03-14T15:09:26+00:00" ||
		r.RawContent == nil || *r.RawContent != "page https://example.org/1\n\nSee the docs." {
		t.Errorf("first result %+v", r)
	}
	if out.Results[1].RawContent != nil {
		t.Errorf("a page that failed to read has raw content %q", *out.Results[1].RawContent)
	}
	for _, r := range out.Results {
		if r.Score <= 0 || r.Score > 1 {
			t.Errorf("score %v", r.Score)
		}
	}
	var asked, images []proxy.Request
	for _, r := range fs.requests() {
		if slices.Equal(r.Categories, []string{"images"}) {
			images = append(images, r)
		} else {
			asked = append(asked, r)
		}
	}
	if len(asked) != 1 || len(images) != 1 || images[0].Query != "tidal locking" || images[0].Fanout != 0 || images[0].Client != "127.0.0.1" {
		t.Fatalf("searches %+v, image searches %+v", asked, images)
	}
	a := asked[0]
	if a.Query != "tidal locking" || a.Fanout != 2 || a.TimeRange != "week" || a.Language != "de-DE" || !slices.Equal(a.Categories, []string{"news"}) ||
		a.Client != "127.0.0.1" || a.Format != proxy.FormatJSON {
		t.Errorf("asked %+v", a)
	}
	if len(fr.clients) != 5 || fr.clients[0] != "127.0.0.1" {
		t.Errorf("reads by %v", fr.clients)
	}

	// Markdown as it is; no raw content unless asked.
	_, body, _ = do(t, s, "POST", PathTavilySearch, `{"query":"q","max_results":1,"include_raw_content":true}`, nil)
	decode(t, body, &out)
	if *out.Results[0].RawContent != "# page https://example.org/1\n\nSee [the **docs**](https://x.example/d)." {
		t.Errorf("markdown %q", *out.Results[0].RawContent)
	}
	_, body, _ = do(t, s, "POST", PathTavilySearch, `{"query":"q"}`, nil)
	out = tavilyOut{}
	decode(t, body, &out)
	if len(out.Results) != 5 || out.Results[0].RawContent != nil || len(out.Images) != 0 || !strings.Contains(string(body), `"raw_content":null`) {
		t.Errorf("defaults: %s", body)
	}

	// Images with descriptions: {url, description}.
	_, body, _ = do(t, s, "POST", PathTavilySearch, `{"query":"q","max_results":1,"include_images":true,"include_image_descriptions":true}`, nil)
	out = tavilyOut{}
	decode(t, body, &out)
	if m, ok := out.Images[0].(map[string]any); !ok || m["url"] != "https://img.example.org/1.png" || m["description"] != "result 1" {
		t.Errorf("image descriptions: %s", body)
	}

	// An image search that fails leaves the images empty, not the answer.
	fs.imagesErr = &proxy.NoAnswerError{Why: proxy.StopDeadline}
	status, body, _ = do(t, s, "POST", PathTavilySearch, `{"query":"q","max_results":2,"include_images":true}`, nil)
	out = tavilyOut{}
	decode(t, body, &out)
	if status != 200 || len(out.Results) != 2 || out.Images == nil || len(out.Images) != 0 {
		t.Errorf("failed image search: %d %s", status, body)
	}
}

// TestTavilyPages: max_results past one page walks the next pages, and
// stops when a page brings nothing new.
func TestTavilyPages(t *testing.T) {
	fs := &fakeSearch{perPage: 8, pages: 2}
	_, body, _ := do(t, newTest(fs, nil), "POST", PathTavilySearch, `{"query":"q","max_results":20}`, nil)
	var out tavilyOut
	decode(t, body, &out)
	if len(out.Results) != 16 || len(fs.requests()) != 3 {
		t.Errorf("%d results in %d searches", len(out.Results), len(fs.requests()))
	}
}

// TestTavilyAnswer: the answer is SearXNG's first answer, else the first
// infobox's text, else null even when asked; never made up.
func TestTavilyAnswer(t *testing.T) {
	for _, c := range []struct {
		answers []string
		boxes   []results.Infobox
		body    string
		want    string // "" = null
	}{
		{[]string{"42"}, nil, `{"query":"q","include_answer":true}`, "42"},
		{[]string{"42"}, nil, `{"query":"q","include_answer":"advanced"}`, "42"},
		{[]string{"42"}, nil, `{"query":"q"}`, ""},
		{nil, []results.Infobox{{Infobox: "Moon", Content: "Earth's satellite."}}, `{"query":"q","include_answer":"basic"}`, "Moon: Earth's satellite."},
		{nil, nil, `{"query":"q","include_answer":true}`, ""},
		{[]string{"42"}, nil, `{"query":"q","include_answer":true,"max_results":0}`, "42"},
	} {
		fs := &fakeSearch{perPage: 3, pages: 1, answers: c.answers, boxes: c.boxes}
		_, body, _ := do(t, newTest(fs, nil), "POST", PathTavilySearch, c.body, nil)
		var out tavilyOut
		decode(t, body, &out)
		got := ""
		if out.Answer != nil {
			got = *out.Answer
		}
		if got != c.want || (c.want == "" && !strings.Contains(string(body), `"answer":null`)) {
			t.Errorf("%s with %v %v: answer %q, want %q", c.body, c.answers, c.boxes, got, c.want)
		}
	}
}

// TestTavilyDomains: one domain to keep is asked as site:, and every
// result outside include_domains or inside exclude_domains is dropped.
func TestTavilyDomains(t *testing.T) {
	fs := &fakeSearch{perPage: 9, pages: 1, hosts: []string{"a.example", "docs.b.example", "www.c.example"}}
	s := newTest(fs, nil)
	_, body, _ := do(t, s, "POST", PathTavilySearch, `{"query":"q","include_domains":["b.example"],"max_results":10}`, nil)
	var out tavilyOut
	decode(t, body, &out)
	if len(out.Results) != 3 || !strings.Contains(out.Results[0].URL, "docs.b.example") || fs.requests()[0].Query != "q site:b.example" || out.Query != "q" {
		t.Errorf("include: %s (asked %q)", body, fs.requests()[0].Query)
	}
	out = tavilyOut{}
	_, body, _ = do(t, s, "POST", PathTavilySearch, `{"query":"q","exclude_domains":["c.example","a.example"],"include_domains":[],"max_results":10}`, nil)
	decode(t, body, &out)
	if len(out.Results) != 3 || fs.last().Query != "q" {
		t.Errorf("exclude: %s", body)
	}
	out = tavilyOut{}
	_, body, _ = do(t, s, "POST", PathTavilySearch, `{"query":"q","include_domains":["a.example","c.example"],"max_results":10}`, nil)
	decode(t, body, &out)
	if len(out.Results) != 6 || fs.last().Query != "q" {
		t.Errorf("two domains: %s", body)
	}
}

// TestTavilyDates: days and start_date pick SearXNG's narrowest time
// range; dated results outside start_date..end_date are dropped, undated
// ones kept.
func TestTavilyDates(t *testing.T) {
	fs := &fakeSearch{perPage: 4, pages: 1, dates: []string{"2026-03-01T10:00:00", "2026-03-18 09:00:00", "", "2026-03-19"}}
	s := newTest(fs, nil)
	_, body, _ := do(t, s, "POST", PathTavilySearch, `{"query":"q","start_date":"2026-03-15","end_date":"2026-03-18"}`, nil)
	var out tavilyOut
	decode(t, body, &out)
	var urls []string
	for _, r := range out.Results {
		urls = append(urls, r.URL)
	}
	if strings.Join(urls, " ") != "https://example.org/2 https://example.org/3" || fs.requests()[0].TimeRange != "week" {
		t.Errorf("kept %v, time range %q", urls, fs.requests()[0].TimeRange)
	}
	do(t, s, "POST", PathTavilySearch, `{"query":"q","days":30}`, nil)
	if got := fs.last().TimeRange; got != "month" {
		t.Errorf("30 days: %q", got)
	}
	do(t, s, "POST", PathTavilySearch, `{"query":"q","days":3000}`, nil)
	if got := fs.last().TimeRange; got != "" {
		t.Errorf("3000 days: %q", got)
	}
}

// TestTavilyBadRequests: a wrong type, a missing query or a value out of
// range is a 400 in Tavily's shape, naming the field; the search is not
// made.
func TestTavilyBadRequests(t *testing.T) {
	fs := &fakeSearch{perPage: 3, pages: 1}
	s := newTest(fs, nil)
	for body, want := range map[string]string{
		``:                                      "JSON object",
		`[]`:                                    "JSON object",
		`{"query":`:                             "not valid JSON",
		`{}`:                                    "query is missing",
		`{"query":"  "}`:                        "query is missing",
		`{"query":7}`:                           "query must be a string",
		`{"query":"q","max_results":"5"}`:       "max_results must be a whole number",
		`{"query":"q","max_results":2.5}`:       "max_results must be a whole number",
		`{"query":"q","max_results":21}`:        "between 0 and 20",
		`{"query":"q","search_depth":"deep"}`:   "search_depth must be one of",
		`{"query":"q","topic":1}`:               "topic must be a string",
		`{"query":"q","include_domains":"a,b"}`: "",
		`{"query":"q","include_domains":[1]}`:   "include_domains must be a list of strings",
		`{"query":"q","include_raw_content":"html"}`: "include_raw_content must be true, false or one of",
		`{"query":"q","include_answer":1}`:           "include_answer must be",
		`{"query":"q","include_images":"yes"}`:       "include_images must be true or false",
		`{"query":"q","start_date":"2026-3-1"}`:      "start_date must be a date",
		`{"query":"q","time_range":"decade"}`:        "time_range must be one of",
		`{"query":"q","chunks_per_source":9}`:        "chunks_per_source must be between",
	} {
		status, out, _ := do(t, s, "POST", PathTavilySearch, body, nil)
		if want == "" {
			if status != 200 {
				t.Errorf("%s: status %d: %s", body, status, out)
			}
			continue
		}
		var e tavilyErr
		decode(t, out, &e)
		if status != 400 || !strings.Contains(e.Detail.Error, want) {
			t.Errorf("%s: %d %s, want 400 saying %q", body, status, out, want)
		}
	}
	if n := len(fs.requests()); n != 1 {
		t.Errorf("%d searches made for bad requests", n)
	}
	if status, _, h := do(t, s, "GET", PathTavilySearch, "", nil); status != 405 || string(h.Peek("Allow")) != "POST" {
		t.Errorf("GET: %d", status)
	}
}

// TestTavilyFailures: a search without an answer is worded by the one
// table, with Tavily's statuses: 429 over the client's own limit or
// share (with Retry-After), 432 over its share of the extra budget, 400
// for a query that fails everywhere, 503 otherwise.
func TestTavilyFailures(t *testing.T) {
	for _, c := range []struct {
		err    error
		status int
		retry  string
		words  string
	}{
		{&proxy.LimitedError{RetryAfter: 1500 * time.Millisecond}, 429, "2", "too many searches"},
		{&proxy.NoAnswerError{Why: proxy.StopShare, RetryAfter: 10 * time.Second}, 429, "10", "your share"},
		{&proxy.NoAnswerError{Why: proxy.StopBudget}, 432, "", "retries and second opinions"},
		{&proxy.NoAnswerError{Why: proxy.StopQuery}, 400, "", "rephrase"},
		{&proxy.NoAnswerError{Why: proxy.StopDeadline}, 503, "", "in time"},
		{errors.New("boom"), 500, "", "failed"},
	} {
		s := newTest(&fakeSearch{err: c.err}, nil)
		status, body, h := do(t, s, "POST", PathTavilySearch, `{"query":"q"}`, nil)
		var e tavilyErr
		decode(t, body, &e)
		if status != c.status || string(h.Peek("Retry-After")) != c.retry || !strings.Contains(e.Detail.Error, c.words) {
			t.Errorf("%v: %d %q %s", c.err, status, h.Peek("Retry-After"), body)
		}
	}
}

// TestStopTable: every reason the proxy gives has its words and statuses
// in the doors' one table.
func TestStopTable(t *testing.T) {
	for _, why := range proxy.Stops {
		f, ok := stopTable[why]
		if !ok || f.text == "" || f.tavily == 0 || f.brave == 0 || f.openWebUI == 0 || f.braveCode == "" {
			t.Errorf("%s: %+v", why, f)
		}
	}
	if len(stopTable) != len(proxy.Stops) {
		t.Errorf("the table words %d reasons, the proxy has %d", len(stopTable), len(proxy.Stops))
	}
}
