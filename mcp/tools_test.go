package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy"
)

// scoredJSON is an answer with SearXNG's scores, best first.
const scoredJSON = `{"query":"rust vec","number_of_results":0,"results":[
 {"url":"https://doc.rust-lang.org/std/vec/struct.Vec.html","title":"Vec in std::vec","content":"A contiguous growable array type.","engine":"duckduckgo","engines":["duckduckgo","brave"],"score":4.5,"category":"it","publishedDate":"2024-05-01T00:00:00"},
 {"url":"https://doc.rust-lang.org/book/ch08-01-vectors.html","title":"Storing Lists of Values with Vectors","content":"Vectors allow you to store more than one value.","engine":"brave","score":2.25,"category":"it"},
 {"url":"https://stackoverflow.com/q/1","title":"How do I sort a Vec?","content":"Use sort or sort_by.","engine":"stackexchange","score":0.8,"category":"it"},
 {"url":"https://example.org/old","title":"Old notes","content":"Out of date.","engine":"bing","score":0.1,"category":"general"}],
 "answers":["Vec<T> is a growable array"],"corrections":[],"infoboxes":[],"suggestions":["rust vec push"],"unresponsive_engines":[]}`

// TestSearchArguments: every argument mcp-searxng's searxng_web_search
// takes is accepted with the type it gives it (safesearch as a string
// too), and each is honoured.
func TestSearchArguments(t *testing.T) {
	fs := &fakeSearch{json: scoredJSON}
	_, hs := serve(t, Config{Search: fs})
	s := connect(t, hs, nil)
	for _, tc := range []struct {
		name    string
		args    map[string]any
		safe    string   // the request's safesearch
		urls    int      // results kept
		has     []string // in the text
		hasNot  []string
		json    bool // the text is the structured answer as JSON
		compact bool
	}{
		{name: "safesearch integer", args: map[string]any{"safesearch": 1}, safe: "1", urls: 4},
		{name: "safesearch string", args: map[string]any{"safesearch": "2"}, safe: "2", urls: 4},
		{name: "safesearch string zero", args: map[string]any{"safesearch": "0"}, safe: "0", urls: 4},
		{name: "num_results", args: map[string]any{"num_results": 2}, urls: 2,
			has: []string{"1. Vec in std::vec", "2. Storing Lists"}, hasNot: []string{"3. How do I sort"}},
		{name: "num_results as mcp-searxng's number", args: map[string]any{"num_results": 1.0}, urls: 1},
		{name: "min_score", args: map[string]any{"min_score": 1}, urls: 2, hasNot: []string{"Old notes", "How do I sort"}},
		{name: "min_score then num_results", args: map[string]any{"min_score": 0.5, "num_results": 20}, urls: 3},
		{name: "full detail", args: map[string]any{"result_detail": "full"}, urls: 4,
			has: []string{"Answer: Vec<T> is a growable array", "Score: 4.50", "Engines: duckduckgo, brave", "Related searches: rust vec push"}},
		{name: "compact", args: map[string]any{"result_detail": "compact", "num_results": 2}, urls: 2, compact: true,
			has:    []string{"Title: Vec in std::vec\nDescription: A contiguous growable array type.\nURL: https://doc.rust-lang.org/std/vec/struct.Vec.html\n\nTitle: Storing"},
			hasNot: []string{"Answer:", "Score", "answered by", "Related searches"}},
		{name: "json", args: map[string]any{"response_format": "json", "num_results": 3}, urls: 3, json: true},
		{name: "json compact", args: map[string]any{"response_format": "json", "result_detail": "compact"}, urls: 4, json: true, compact: true},
		{name: "every argument", args: map[string]any{"pageno": 2, "time_range": "week", "language": "en", "safesearch": "1",
			"categories": "it", "engines": "duckduckgo,brave", "num_results": 3, "min_score": 0, "response_format": "text",
			"result_detail": "full", "fanout": 2}, safe: "1", urls: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs.mu.Lock()
			fs.reqs = nil
			fs.mu.Unlock()
			args := map[string]any{"query": "rust vec"}
			for k, v := range tc.args {
				args[k] = v
			}
			res, text := call(t, s, ToolSearch, args)
			if res.IsError {
				t.Fatal(text)
			}
			if got := fs.reqs[0].SafeSearch; got != tc.safe {
				t.Errorf("safesearch %q, want %q", got, tc.safe)
			}
			var out SearchOutput
			raw, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(raw, &out); err != nil {
				t.Fatal(err)
			}
			if len(out.Results) != tc.urls {
				t.Errorf("%d results in structuredContent, want %d", len(out.Results), tc.urls)
			}
			if tc.compact {
				for _, r := range out.Results {
					if r.Engine != "" || r.Score != 0 || r.Category != "" || r.PublishedDate != "" {
						t.Errorf("compact result carries more than title, URL and content: %+v", r)
					}
				}
				if out.Answers != nil || out.Suggestions != nil {
					t.Errorf("compact answer keeps answers or suggestions: %s", raw)
				}
			}
			if tc.json {
				var back SearchOutput
				if err := json.Unmarshal([]byte(text), &back); err != nil || len(back.Results) != tc.urls {
					t.Errorf("text is not the answer as JSON (%v):\n%s", err, text)
				}
				if !strings.Contains(text, "\n  \"query\": \"rust vec\"") {
					t.Errorf("JSON text not indented:\n%s", text)
				}
			} else if !tc.compact && strings.Count(text, "\n   https://") != tc.urls {
				t.Errorf("%d results in the text, want %d:\n%s", strings.Count(text, "\n   https://"), tc.urls, text)
			}
			for _, want := range tc.has {
				if !strings.Contains(text, want) {
					t.Errorf("text lacks %q:\n%s", want, text)
				}
			}
			for _, no := range tc.hasNot {
				if strings.Contains(text, no) {
					t.Errorf("text has %q:\n%s", no, text)
				}
			}
		})
	}
	for _, bad := range []map[string]any{
		{"safesearch": 3}, {"safesearch": "strict"}, {"safesearch": true}, {"num_results": 0}, {"num_results": 2.5},
		{"min_score": -1}, {"response_format": "xml"}, {"result_detail": "short"},
	} {
		args := map[string]any{"query": "rust vec"}
		for k, v := range bad {
			args[k] = v
		}
		if res, text := call(t, s, ToolSearch, args); !res.IsError {
			t.Errorf("%v accepted: %s", bad, text)
		}
	}
}

// TestSafeSearchJSON: both forms read; the integer is what is written
// (what the stdio bridge forwards).
func TestSafeSearchJSON(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{{`0`, 0, true}, {`2`, 2, true}, {`"1"`, 1, true}, {` "2" `, 2, true}, {`3`, 0, false}, {`"x"`, 0, false}, {`-1`, 0, false}, {`1.5`, 0, false}} {
		var a SearchArgs
		err := json.Unmarshal([]byte(`{"query":"q","safesearch":`+tc.in+`}`), &a)
		if (err == nil) != tc.ok || (tc.ok && int(*a.SafeSearch) != tc.want) {
			t.Errorf("%s: %v %v", tc.in, a.SafeSearch, err)
		}
		if tc.ok {
			if b, _ := json.Marshal(a); !strings.Contains(string(b), `"safesearch":`+string(rune('0'+tc.want))) {
				t.Errorf("%s written as %s", tc.in, b)
			}
		}
	}
}

type fakeSuggest struct {
	mu    sync.Mutex // guards asked
	asked []string
	out   []string
	err   error
}

func (f *fakeSuggest) Autocomplete(_ context.Context, q, lang string) ([]string, error) {
	f.mu.Lock()
	f.asked = append(f.asked, q+"|"+lang)
	f.mu.Unlock()
	return f.out, f.err
}

func TestSuggestionsTool(t *testing.T) {
	fsg := &fakeSuggest{out: []string{"rust vec push", "rust vec sort"}}
	admitted := 0
	_, hs := serve(t, Config{Search: &fakeSearch{}, Suggest: fsg, Client: func(*http.Request) string { return "c1" },
		Admit: func(client string, _ time.Time) (bool, time.Duration) {
			admitted++
			return admitted <= 3 && client == "c1", 2 * time.Second
		}})
	s := connect(t, hs, nil)
	for _, tc := range []struct {
		args  map[string]any
		err   error
		says  string
		isErr bool
	}{
		{args: map[string]any{"query": " rust vec "}, says: "Suggestions for \"rust vec\":\n- rust vec push\n- rust vec sort"},
		{args: map[string]any{"query": "rust vec", "language": "all"}, err: proxy.ErrNoAutocomplete, isErr: true, says: "searxng_web_search instead"},
		{args: map[string]any{"query": "rust vec", "language": "de"}, err: errors.New("https://x/: refused"), isErr: true, says: "no instance gave suggestions"},
		{args: map[string]any{"query": "rust"}, isErr: true, says: "retry in 2 s"},
	} {
		fsg.err = tc.err
		res, text := call(t, s, ToolSuggestions, tc.args)
		if res.IsError != tc.isErr || !strings.Contains(text, tc.says) {
			t.Errorf("%v: %v %q", tc.args, res.IsError, text)
		}
	}
	if want := []string{"rust vec|", "rust vec|", "rust vec|de"}; !slices.Equal(fsg.asked, want) {
		t.Errorf("asked %q, want %q", fsg.asked, want)
	}
}

type fakePool []proxy.Instance

func (f fakePool) Instances(time.Time) []proxy.Instance { return f }

func inst(url string, tier pool.Tier, whyNot proxy.Why, ac string, engines ...proxy.Engine) proxy.Instance {
	x := proxy.Instance{WhyNot: whyNot}
	x.URL, x.Tier = url, tier
	x.Caps.ConfigOK = len(engines) > 0
	x.Caps.Engines = engines
	x.Caps.Autocomplete = ac
	return x
}

func TestInstanceInfoTool(t *testing.T) {
	ddg := proxy.Engine{Name: "duckduckgo", Categories: []string{"general", "web"}}
	wiki := proxy.Engine{Name: "wikipedia", Categories: []string{"general"}}
	gh := proxy.Engine{Name: "github", Categories: []string{"it", "repos"}}
	arxiv := proxy.Engine{Name: "arxiv", Categories: []string{"science"}}
	pl := fakePool{
		inst("https://own.example/", pool.Own, proxy.Ready, "duckduckgo", ddg, wiki, gh),
		inst("https://a.example/", pool.Public, proxy.Ready, "", ddg, wiki, arxiv),
		inst("https://b.example/", pool.Public, proxy.WhyCircuitOpen, "google", ddg, gh),
		inst("https://new.example/", pool.Public, proxy.Ready, ""), // /config not read yet
	}
	_, hs := serve(t, Config{Search: &fakeSearch{}, Pool: pl})
	s := connect(t, hs, nil)
	for _, tc := range []struct {
		args                map[string]any
		common, avail       string
		engCommon, engAvail string
		notes               int
		noEngines           bool
	}{
		{args: map[string]any{}, common: "general,web", avail: "general,it,repos,science,web", noEngines: true},
		{args: map[string]any{"includeEngines": true}, common: "general,web", avail: "general,it,repos,science,web",
			engCommon: "duckduckgo", engAvail: "arxiv,duckduckgo,github,wikipedia"},
		{args: map[string]any{"includeEngines": true, "category": "IT"}, common: "", avail: "it",
			engCommon: "", engAvail: "github"},
		{args: map[string]any{"includeEngines": true, "category": "general", "includeDisabled": true, "refresh": true},
			common: "general", avail: "general", engCommon: "duckduckgo", engAvail: "duckduckgo,wikipedia", notes: 2},
	} {
		res, text := call(t, s, ToolInfo, tc.args)
		if res.IsError {
			t.Fatal(text)
		}
		var out InfoOutput
		if err := json.Unmarshal([]byte(text), &out); err != nil {
			t.Fatalf("text is not JSON: %v\n%s", err, text)
		}
		if j := strings.Join(out.Categories.Common, ","); j != tc.common {
			t.Errorf("%v: common categories %q, want %q", tc.args, j, tc.common)
		}
		if j := strings.Join(out.Categories.Available, ","); j != tc.avail {
			t.Errorf("%v: available categories %q, want %q", tc.args, j, tc.avail)
		}
		if tc.noEngines != (out.Engines == nil) {
			t.Fatalf("%v: engines %v", tc.args, out.Engines)
		}
		if out.Engines != nil {
			if j := strings.Join(out.Engines.Common.Enabled, ","); j != tc.engCommon {
				t.Errorf("%v: common engines %q, want %q", tc.args, j, tc.engCommon)
			}
			if j := strings.Join(out.Engines.Available.Enabled, ","); j != tc.engAvail {
				t.Errorf("%v: available engines %q, want %q", tc.args, j, tc.engAvail)
			}
		}
		if want := (PoolBrief{Instances: 4, UsableNow: 3, Own: 1, CircuitOpen: 1, WithConfig: 3, Autocomplete: 2}); out.Pool != want {
			t.Errorf("pool %+v, want %+v", out.Pool, want)
		}
		if len(out.Notes) != tc.notes {
			t.Errorf("%v: notes %q", tc.args, out.Notes)
		}
	}
}

// TestToolList: the four tools, with input and output schemas.
func TestToolList(t *testing.T) {
	_, hs := serve(t, Config{Search: &fakeSearch{}, Read: fakeRead{}, Suggest: &fakeSuggest{}, Pool: fakePool{}})
	s := connect(t, hs, nil)
	res, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.OutputSchema == nil || tool.Description == "" {
			t.Errorf("%s: no output schema or description", tool.Name)
		}
	}
	slices.Sort(names)
	if want := []string{ToolInfo, ToolSuggestions, ToolSearch, ToolRead}; !slices.Equal(names, want) {
		t.Errorf("tools %q, want %q", names, want)
	}
}

// TestStatusResource: the pool in brief, as a resource, best instances
// first and at most maxStatusInstances of them.
func TestStatusResource(t *testing.T) {
	var pl fakePool
	pl = append(pl, inst("https://own.example/", pool.Own, proxy.Ready, ""))
	for i := range 30 {
		x := inst("https://p"+strings.Repeat("x", i)+".example/", pool.Public, map[bool]proxy.Why{true: proxy.Ready, false: proxy.WhyBudget}[i%2 == 0], "")
		x.Health, x.LatencyMS = 90-i, 120.4+float64(i)
		pl = append(pl, x)
	}
	_, hs := serve(t, Config{Search: &fakeSearch{}, Pool: pl})
	s := connect(t, hs, nil)
	list, err := s.ListResources(context.Background(), nil)
	if err != nil || len(list.Resources) != 1 || list.Resources[0].URI != StatusURI {
		t.Fatalf("resources %+v %v", list, err)
	}
	res, err := s.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: StatusURI})
	if err != nil || len(res.Contents) != 1 || res.Contents[0].MIMEType != "application/json" {
		t.Fatalf("%+v %v", res, err)
	}
	var b StatusBrief
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &b); err != nil {
		t.Fatal(err)
	}
	if b.Pool.Instances != 31 || b.Pool.Own != 1 || b.Pool.UsableNow != 16 || len(b.Instances) != maxStatusInstances || b.More != 6 ||
		!b.Instances[0].Own || b.Instances[1].LatencyMS != 120 || b.Instances[2].WhyNot != proxy.WhyBudget || !strings.Contains(b.Note, "stateless") ||
		!strings.Contains(res.Contents[0].Text, `"why_not": "budget"`) {
		t.Errorf("%+v", b)
	}
	// Without a pool there is nothing to show.
	_, bare := serve(t, Config{Search: &fakeSearch{}})
	if list, err := connect(t, bare, nil).ListResources(context.Background(), nil); err != nil || len(list.Resources) != 0 {
		t.Errorf("resources without a pool: %+v %v", list, err)
	}
}

// TestNoResultsText: an answer without results whose engines failed names
// them and says the query is the cause, in the full and the compact text;
// one without engine errors says nothing matched.
func TestNoResultsText(t *testing.T) {
	failed := SearchOutput{Query: "obscure thing", Instance: "https://searx.example/", UnresponsiveEngines: []string{"google: timeout", "bing: CAPTCHA"}}
	for _, detail := range []string{"full", "compact"} {
		o := shape(failed, SearchArgs{ResultDetail: detail})
		text := renderSearch(o)
		if detail == "compact" {
			text = renderCompact(o)
		}
		for _, want := range []string{`No results for "obscure thing"`, "google: timeout; bing: CAPTCHA", "The query is the cause, not the instances"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: lacks %q:\n%s", detail, want, text)
			}
		}
		if strings.Contains(text, "Try other words, another language or fewer filters") {
			t.Errorf("%s: says nothing matched:\n%s", detail, text)
		}
	}
	plain := renderSearch(SearchOutput{Query: "zzqx", Instance: "https://searx.example/"})
	if !strings.Contains(plain, `No results for "zzqx". Try other words`) || strings.Contains(plain, "engines failed") {
		t.Errorf("nothing matched:\n%s", plain)
	}
	// With results, both texts say which engines failed or were
	// suspended (compact too: the results may miss what they would have
	// found); with none failed, neither says a word of engines.
	some := []string{"google: timeout", "qwant: Suspended: too many requests"}
	for _, detail := range []string{"full", "compact"} {
		o := shape(SearchOutput{Query: "q", Instance: "i", Results: []SearchResult{{Title: "t", URL: "u"}}, UnresponsiveEngines: some},
			SearchArgs{ResultDetail: detail})
		text := renderSearch(o)
		if detail == "compact" {
			text = renderCompact(o)
		}
		for _, want := range []string{"Engines that failed on this search: google: timeout.", "Engines suspended by the instance", "qwant: Suspended: too many requests"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s with results: lacks %q:\n%s", detail, want, text)
			}
		}
		clean := shape(SearchOutput{Query: "q", Instance: "i", Results: []SearchResult{{Title: "t", URL: "u"}}}, SearchArgs{ResultDetail: detail})
		if both := renderSearch(clean) + renderCompact(clean); strings.Contains(both, "Not every engine answered") {
			t.Errorf("%s: engines said to fail when none did:\n%s", detail, both)
		}
	}
}
