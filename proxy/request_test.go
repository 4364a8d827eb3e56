package proxy

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/sim"
	"github.com/valyala/fasthttp"
)

type mapParams map[string]string

func (m mapParams) Get(k string) (string, bool) { v, ok := m[k]; return v, ok }

func TestParseRequest(t *testing.T) {
	cases := []struct {
		name    string
		in      mapParams
		want    Request
		wantErr string
	}{
		{"defaults", mapParams{"q": " hello "}, Request{Query: "hello", PageNo: 1, Format: "html"}, ""},
		{"all", mapParams{"q": "go", "format": "json", "pageno": "3", "language": "de-CH", "safesearch": "2",
			"time_range": "week", "categories": "News, general,news", "engines": "ddg"},
			Request{Query: "go", Format: "json", PageNo: 3, Language: "de-CH", SafeSearch: "2", TimeRange: "week",
				Categories: []string{"general", "news"}, Engines: []string{"ddg"}}, ""},
		{"no query json", mapParams{"format": "json"}, Request{}, "No query"},
		// SearXNG searches a blank q (its check is for absent or empty).
		{"blank query", mapParams{"q": "   "}, Request{}, "blank query"},
		// SearXNG's parse_timeout: a float, or nothing.
		{"timeout_limit text", mapParams{"q": "x", "timeout_limit": "abc"}, Request{}, `Invalid value "abc" for parameter timeout_limit`},
		{"timeout_limit", mapParams{"q": "x", "timeout_limit": "1.5"}, Request{Query: "x", PageNo: 1, Format: "html", TimeoutLimit: "1.5"}, ""},
		{"timeout_limit None", mapParams{"q": "x", "timeout_limit": "None"}, Request{Query: "x", PageNo: 1, Format: "html"}, ""},
		{"timeout_limit empty", mapParams{"q": "x", "timeout_limit": ""}, Request{Query: "x", PageNo: 1, Format: "html"}, ""},
		// SearXNG answers a format it does not know with the HTML page
		// (fixtures a-search-format-xml.txt, a-search-format-upper-JSON.txt).
		{"unknown format", mapParams{"q": "x", "format": "xml"}, Request{Query: "x", PageNo: 1, Format: "html"}, ""},
		{"upper-case format", mapParams{"q": "x", "format": "JSON"}, Request{Query: "x", PageNo: 1, Format: "html"}, ""},
		{"empty format", mapParams{"q": "x", "format": ""}, Request{Query: "x", PageNo: 1, Format: "html"}, ""},
		// SearXNG has no cap (a-search-json-long-query.txt answers 2,500
		// bytes); searxgate's is MaxQueryLen.
		{"past 2 KiB", mapParams{"q": strings.Repeat("a", 2500)}, Request{Query: strings.Repeat("a", 2500), PageNo: 1, Format: "html"}, ""},
		{"at the cap", mapParams{"q": strings.Repeat("a", MaxQueryLen)}, Request{Query: strings.Repeat("a", MaxQueryLen), PageNo: 1, Format: "html"}, ""},
		{"pageno zero", mapParams{"q": "x", "pageno": "0"}, Request{}, `Invalid value "0" for parameter pageno`},
		{"pageno text", mapParams{"q": "x", "pageno": "two"}, Request{}, `Invalid value "two" for parameter pageno`},
		{"pageno signed", mapParams{"q": "x", "pageno": "+2"}, Request{}, `Invalid value "+2" for parameter pageno`},
		{"pageno empty", mapParams{"q": "x", "pageno": ""}, Request{}, `Empty pageno parameter`},
		{"fanout", mapParams{"q": "x", "fanout": "3"}, Request{Query: "x", PageNo: 1, Format: "html", Fanout: 3}, ""},
		{"fanout zero", mapParams{"q": "x", "fanout": "0"}, Request{}, `Invalid value "0" for parameter fanout`},
		{"fanout text", mapParams{"q": "x", "fanout": "all"}, Request{}, `Invalid value "all" for parameter fanout`},
		{"language", mapParams{"q": "x", "language": "english"}, Request{}, `Invalid value "english" for parameter language`},
		{"language auto", mapParams{"q": "x", "language": "auto"}, Request{Query: "x", PageNo: 1, Format: "html", Language: "auto"}, ""},
		{"safesearch", mapParams{"q": "x", "safesearch": "3"}, Request{}, `Invalid value "3" for parameter safesearch`},
		{"time_range", mapParams{"q": "x", "time_range": "decade"}, Request{}, `Invalid value "decade" for parameter time_range`},
		{"time_range None", mapParams{"q": "x", "time_range": "None"}, Request{Query: "x", PageNo: 1, Format: "html"}, ""},
		{"too long", mapParams{"q": strings.Repeat("a", MaxQueryLen+1)}, Request{}, "parameter q"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseRequest(c.in)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Key() != c.want.Key() || got.Format != c.want.Format {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
	if _, err := ParseRequest(mapParams{}); !errors.Is(err, ErrNoQuery) {
		t.Fatalf("empty request: %v, want ErrNoQuery", err)
	}
	if r, err := ParseRequest(mapParams{"q": " \t ", "format": "json"}); !errors.Is(err, ErrBlankQuery) || r.Format != "json" {
		t.Fatalf("blank query: %v %q, want ErrBlankQuery with the format read", err, r.Format)
	}
}

// TestTimeoutLimit: timeout_limit is forwarded as given and bounds the
// search only when it is a positive number of seconds.
func TestTimeoutLimit(t *testing.T) {
	for _, c := range []struct {
		v    string
		want time.Duration
		ok   bool
	}{{"1", time.Second, true}, {"0.25", 250 * time.Millisecond, true}, {"0", 0, false}, {"-3", 0, false}, {"inf", 0, false}, {"nan", 0, false}} {
		r, err := ParseRequest(mapParams{"q": "x", "timeout_limit": c.v})
		if err != nil {
			t.Fatalf("%s: %v", c.v, err)
		}
		d, ok := r.TimeoutLimitDuration()
		if d != c.want || ok != c.ok {
			t.Errorf("%s: %v %v, want %v %v", c.v, d, ok, c.want, c.ok)
		}
		got := ""
		r.Each(1, func(k, v string) {
			if k == "timeout_limit" {
				got = v
			}
		})
		if got != c.v {
			t.Errorf("%s: forwarded %q", c.v, got)
		}
	}
}

func TestKeyIgnoresFormatAndOrder(t *testing.T) {
	a, _ := ParseRequest(mapParams{"q": "x", "format": "json", "categories": "news,general"})
	b, _ := ParseRequest(mapParams{"q": "x", "format": "html", "categories": "general,news"})
	if a.Key() != b.Key() {
		t.Fatal("format or category order changed the key")
	}
	c, _ := ParseRequest(mapParams{"q": "x", "pageno": "2"})
	if a.Key() == c.Key() {
		t.Fatal("pageno does not change the key")
	}
}

func TestQueryCapIsSixteenKiB(t *testing.T) {
	if MaxQueryLen != 16384 {
		t.Fatalf("MaxQueryLen = %d; the documented cap is 16 KiB", MaxQueryLen)
	}
	// SearXNG answers a 9,000-character query.
	if _, err := ParseRequest(mapParams{"q": strings.Repeat("a", 9000)}); err != nil {
		t.Fatalf("a 9,000-byte query: %v", err)
	}
	_, err := ParseRequest(mapParams{"q": strings.Repeat("é", MaxQueryLen)})
	var pe *ParamError
	if !errors.As(err, &pe) || pe.Name != "q" || !utf8.ValidString(pe.Error()) {
		t.Fatalf("a query past the cap: %v", err)
	}
}

func TestEcho(t *testing.T) {
	cases := []struct{ asked, upstream, want string }{
		// a-search-json-bang.txt: SearXNG echoes a bang query without its bang.
		{"!fb edge bang", "edge bang", "edge bang"},
		{"edge bang", "edge bang", "edge bang"},
		{":de !ddg <3 hallo welt", "hallo welt", "hallo welt"},
		{"!!g go", "go", "go"},
		{"!fb edge bang", "!fb edge bang", "!fb edge bang"},
		// Anything that is not the query with syntax left out is not echoed.
		{"!fb edge bang", "", "!fb edge bang"},
		{"!fb edge bang", "edge", "!fb edge bang"},
		{"!fb edge bang", "bang edge", "!fb edge bang"},
		{"!fb edge bang", "buy pills", "!fb edge bang"},
		{"!fb edge bang", "EDGE bang", "!fb edge bang"},
		{"hello world", "hello", "hello world"},
		{"a ! b", "a b", "a ! b"},
		{"<6s foo", "foo", "<6s foo"}, // not a timeout: SearXNG searches the word
		{"<6 foo", "foo", "foo"},
	}
	for _, c := range cases {
		r, err := ParseRequest(mapParams{"q": c.asked})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Echo(c.upstream); got != c.want {
			t.Errorf("Echo(%q) of %q = %q, want %q", c.upstream, c.asked, got, c.want)
		}
	}
}

func TestAcceptLanguage(t *testing.T) {
	for lang, want := range map[string]string{"": "en-US,en;q=0.9", "auto": "en-US,en;q=0.9", "all": "en-US,en;q=0.9", "de": "de", "pt-BR": "pt-BR,pt;q=0.9"} {
		r := Request{Language: lang}
		if got := r.acceptLanguage(); got != want {
			t.Errorf("acceptLanguage(%q) = %q, want %q", lang, got, want)
		}
	}
}

func FuzzParseRequest(f *testing.F) {
	f.Add("hello", "json", "1", "en", "0", "day", "general")
	f.Add("", "html", "-1", "xx-YYY", "9", "None", ",,")
	f.Fuzz(func(t *testing.T, q, format, pageno, lang, safe, tr, cats string) {
		r, err := ParseRequest(mapParams{"q": q, "format": format, "pageno": pageno, "language": lang,
			"safesearch": safe, "time_range": tr, "categories": cats})
		if err != nil {
			return
		}
		if r.Query == "" || r.PageNo < 1 || len(r.Query) > MaxQueryLen {
			t.Fatalf("accepted an invalid request: %+v", r)
		}
		if r.Syntax != detect.ParseQuery(r.Query) {
			t.Fatalf("the query's syntax %+v is not its own %q's", r.Syntax, r.Query)
		}
		_ = r.Key()
	})
}

// TestUpstreamArgsFeelingLucky: an HTML page is asked a feeling-lucky
// search without its "!!" (the page would be a redirect, SearXNG's JSON
// has the results); JSON is asked it as it came.
func TestUpstreamArgsFeelingLucky(t *testing.T) {
	for _, c := range []struct{ q, format, want string }{
		{"!! foo bar", FormatHTML, "foo bar"},
		{"foo !! bar", FormatHTML, "foo bar"},
		{"!! foo bar", FormatJSON, "!! foo bar"},
		{"!!g foo", FormatHTML, "!!g foo"},
		{"!!", FormatHTML, "!!"},
		{"!! !!g foo", FormatHTML, "!! !!g foo"}, // the external bang wins: its redirect is the answer
	} {
		args := fasthttp.AcquireArgs()
		r, err := ParseRequest(mapParams{"q": c.q})
		if err != nil {
			t.Fatal(err)
		}
		upstreamArgs(args, &r, c.format)
		if got := string(args.Peek("q")); got != c.want {
			t.Errorf("%q as %s: q=%q, want %q", c.q, c.format, got, c.want)
		}
		fasthttp.ReleaseArgs(args)
	}
}

// TestTimeoutLimitBounds: a search with a positive timeout_limit runs on
// a context that ends at most the limit and timeoutGrace later; one with
// none, 0 or a negative limit keeps the caller's context (and its
// deadline, which a limit never lengthens).
func TestTimeoutLimitBounds(t *testing.T) {
	r, err := ParseRequest(mapParams{"q": "x", "timeout_limit": "1"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := r.withTimeoutLimit(context.Background())
	dl, ok := ctx.Deadline()
	cancel()
	if left := time.Until(dl); !ok || left <= 0 || left > time.Second+timeoutGrace {
		t.Errorf("timeout_limit=1: deadline %v (%v left), want at most %v", ok, left, time.Second+timeoutGrace)
	}
	if ctx.Err() == nil {
		t.Error("the limit's context outlives its cancel")
	}
	parent, stop := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer stop()
	ctx, cancel = r.withTimeoutLimit(parent)
	dl, _ = ctx.Deadline()
	cancel()
	if pdl, _ := parent.Deadline(); !dl.Equal(pdl) {
		t.Errorf("timeout_limit=1 under a 100ms deadline: %v, want the caller's %v", dl, pdl)
	}
	for _, v := range []string{"", "0", "-1", "None"} {
		r, err := ParseRequest(mapParams{"q": "x", "timeout_limit": v})
		if err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		ctx, cancel := r.withTimeoutLimit(context.Background())
		if _, ok := ctx.Deadline(); ok || ctx != context.Background() {
			t.Errorf("timeout_limit=%q: a deadline, or not the caller's context", v)
		}
		cancel()
	}
}

// TestSearchTakesTimeoutLimit: Search itself applies a request's
// timeout_limit: the search's deadline timer is set within the limit and
// its grace, where without one it is the proxy's own deadline. The caller
// passes a context with no deadline, as every face does.
func TestSearchTakesTimeoutLimit(t *testing.T) {
	var mu sync.Mutex // guards longest
	var longest time.Duration
	tc := timersOf(func(d time.Duration) (<-chan time.Time, func()) {
		mu.Lock()
		longest = max(longest, d)
		mu.Unlock()
		return make(chan time.Time), func() {} // never fires: the answer comes first
	})
	e := newEnv(t, Config{Clock: tc, Deadline: 20 * time.Second, NoCache: true}, sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	for _, c := range []struct {
		limit    string
		min, max time.Duration
	}{{"1", time.Millisecond, time.Second + timeoutGrace}, {"", 20 * time.Second, 20 * time.Second}} {
		mu.Lock()
		longest = 0
		mu.Unlock()
		req, err := ParseRequest(mapParams{"q": "limit " + c.limit, "format": FormatJSON, "timeout_limit": c.limit})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.proxy.Search(context.Background(), req); err != nil {
			t.Fatalf("timeout_limit=%q: %v", c.limit, err)
		}
		mu.Lock()
		got := longest
		mu.Unlock()
		if got < c.min || got > c.max {
			t.Errorf("timeout_limit=%q: the search's deadline timer was %v, want %v to %v", c.limit, got, c.min, c.max)
		}
	}
}
