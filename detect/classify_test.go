package detect

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/searxgate/searxgate/results"
)

// classifyCases are the verdicts a person reading each fixture would give,
// for the search (format, query) that could have brought it.
var classifyCases = []struct {
	file    string
	format  string
	query   string
	kind    Kind
	reason  Reason
	retry   time.Duration
	results int // results read; -1 when no Results is expected
}{
	// Captured from real SearXNG.
	{"searxng/a-404.txt", "html", "hello world", Failed, ClientError, 0, -1},
	{"searxng/a-config.txt", "json", "hello world", Failed, BadBody, 0, -1},
	{"searxng/a-config.txt", "html", "hello world", Failed, BadBody, 0, -1},
	{"searxng/a-healthz.txt", "json", "hello world", Failed, BadBody, 0, -1},
	{"searxng/a-index.html.txt", "html", "hello world", Refused, LimiterRedirect, 0, -1},
	{"searxng/a-index.html.txt", "json", "hello world", Refused, LimiterRedirect, 0, -1},
	{"searxng/a-opensearch.xml.txt", "html", "hello world", Failed, BadBody, 0, -1},
	{"searxng/a-search-html-empty-query.txt", "html", "", Failed, ClientError, 0, -1},
	{"searxng/a-search-html-empty-query.txt", "html", "hello world", Refused, LimiterRedirect, 0, -1},
	{"searxng/a-search-html-engine-http500.txt", "html", "backenderror", Soft, EnginesDown, 0, 0},
	{"searxng/a-search-html-noresults.txt", "html", "noresults", OK, "", 0, 0},
	{"searxng/a-search-html.txt", "html", "hello world", OK, "", 0, 3},
	{"searxng/a-search-html.txt", "", "Hello World", OK, "", 0, 3},
	{"searxng/a-search-html.txt", "html", "rust borrow checker", Soft, OffTopic, 0, 3},
	{"searxng/a-search-json-answer-calculator.txt", "json", "2+3", OK, "", 0, 3},
	{"searxng/a-search-json-empty-query.txt", "json", "", Failed, ClientError, 0, -1},
	{"searxng/a-search-json-empty-query.txt", "json", "hello", Failed, ClientError, 0, -1},
	{"searxng/a-search-json-engine-http500.txt", "json", "backenderror", Soft, EnginesDown, 0, 0},
	{"searxng/a-search-json-engine-suspended.txt", "json", "hello world", Soft, EnginesDown, 0, 0},
	{"searxng/a-search-json-engine-timeout.txt", "json", "slowbackend", Soft, EnginesDown, 0, 0},
	{"searxng/a-search-json-noresults.txt", "json", "noresults", OK, "", 0, 0},
	{"searxng/a-search-json-page2.txt", "json", "hello world", OK, "", 0, 3},
	{"searxng/a-search-json-post.txt", "json", "hello world", OK, "", 0, 3},
	{"searxng/a-search-json.txt", "json", "hello world", OK, "", 0, 3},
	{"searxng/a-search-json.txt", "JSON", "!ddg Hello  world :en", OK, "", 0, 3},
	{"searxng/a-search-json.txt", "json", "hello", Soft, OffTopic, 0, 3},
	{"searxng/a-search-rss-disabled.txt", "rss", "hello", Refused, FormatDisabled, 0, -1},
	{"searxng/a-search-rss-disabled.txt", "html", "hello", Refused, Forbidden, 0, -1},
	{"searxng/b-config.txt", "json", "hello world", Failed, BadBody, 0, -1},
	{"searxng/b-healthz.txt", "html", "hello world", Failed, BadBody, 0, -1},
	{"searxng/b-opensearch.xml.txt", "json", "hello world", Failed, BadBody, 0, -1},
	{"searxng/b-search-format-json-disabled.txt", "json", "hello world", Refused, FormatDisabled, 0, -1},
	{"searxng/b-search-html.txt", "html", "hello world", OK, "", 0, 3},
	{"searxng/c-botdetect-accept-json-only.txt", "json", "hello", Refused, RateLimited, 0, -1},
	{"searxng/c-botdetect-curl-ua-index.txt", "html", "hello", Refused, RateLimited, 0, -1},
	{"searxng/c-botdetect-curl-ua-search.txt", "json", "hello", Refused, RateLimited, 0, -1},
	{"searxng/c-botdetect-no-accept-encoding.txt", "html", "hello", Refused, RateLimited, 0, -1},
	{"searxng/c-botdetect-no-accept-language.txt", "html", "hello", Refused, RateLimited, 0, -1},
	{"searxng/c-config.txt", "json", "hello world", Failed, BadBody, 0, -1},
	{"searxng/c-healthz.txt", "json", "hello world", Failed, BadBody, 0, -1},
	{"searxng/c-limiter-api-window-429.txt", "json", "hello 7", Refused, RateLimited, 0, -1},
	{"searxng/c-limiter-burst-429.txt", "html", "burst 18", Refused, RateLimited, 0, -1},
	{"searxng/c-opensearch.xml.txt", "html", "hello world", Failed, BadBody, 0, -1},
	{"searxng/c-search-html-browser-headers.txt", "html", "hello world", OK, "", 0, 3},
	{"searxng/c-search-json-other-xff-ip.txt", "json", "hello world", OK, "", 0, 3},

	// Written for what the captures lack.
	{"extra/418-teapot.txt", "json", "hello", Refused, Forbidden, 0, -1},
	{"extra/429-blocklist.txt", "html", "hello", Refused, Blocklisted, 0, -1},
	{"extra/429-ratelimit-reset.txt", "html", "hello", Refused, RateLimited, 30 * time.Second, -1},
	{"extra/429-retry-after-date.txt", "json", "hello", Refused, RateLimited, 5 * time.Minute, -1},
	{"extra/429-retry-after-seconds.txt", "json", "hello", Refused, RateLimited, 2 * time.Minute, -1},
	{"extra/500-internal.txt", "html", "hello", Failed, ServerError, 0, -1},
	{"extra/502-bad-gateway.txt", "json", "hello", Failed, ServerError, 0, -1},
	{"extra/503-unavailable.txt", "json", "hello", Refused, Unavailable, time.Minute, -1},
	{"extra/anubis-200.txt", "html", "hello", Refused, BotChallenge, 0, -1},
	{"extra/anubis-200.txt", "json", "hello", Refused, BotChallenge, 0, -1},
	{"extra/anubis-403.txt", "json", "hello", Refused, BotChallenge, 0, -1},
	{"extra/cf-block-403.txt", "json", "hello", Refused, Forbidden, 0, -1},
	{"extra/cf-block-403.txt", "html", "hello", Refused, Forbidden, 0, -1},
	{"extra/cf-challenge-200.txt", "json", "hello", Refused, BotChallenge, 0, -1},
	{"extra/cf-challenge-200.txt", "html", "hello", Refused, BotChallenge, 0, -1},
	{"extra/cf-challenge-403.txt", "json", "hello world", Refused, BotChallenge, 0, -1},
	{"extra/cf-jschallenge-503.txt", "html", "hello", Refused, BotChallenge, 0, -1},
	{"extra/ddosguard-403.txt", "html", "hello", Refused, BotChallenge, 0, -1},
	{"extra/html-current.txt", "html", "Ada Lovelace", OK, "", 0, 4},
	{"extra/html-current.txt", "html", "Grace Hopper", Soft, OffTopic, 0, 4},
	{"extra/html-current-engines-down.txt", "html", "quantum chromodynamics", Soft, EnginesDown, 0, 0},
	{"extra/json-error-object.txt", "json", "hello", Failed, BadBody, 0, -1},
	{"extra/json-new-shape.txt", "json", "Zürich Öffnungszeiten :de", OK, "", 0, 3},
	{"extra/json-new-shape.txt", "json", "zurich OFFNUNGSZEITEN", OK, "", 0, 3},
	{"extra/json-offtopic-echo.txt", "json", "hello world", Soft, OffTopic, 0, 1},
	{"extra/json-offtopic-results.txt", "json", "rust borrow checker", Soft, OffTopic, 0, 8},
	{"extra/json-truncated.txt", "json", "hello world", Failed, BadBody, 0, -1},
	{"extra/nginx-welcome.txt", "html", "hello", Failed, BadBody, 0, -1},
	{"extra/redirect-302.txt", "json", "hello", Refused, LimiterRedirect, 0, -1},
	{"extra/redirect-302.txt", "html", "hello", Refused, LimiterRedirect, 0, -1},

	// Captured from real SearXNG later: edge cases of the query and format.
	{"searxng/a-search-json-bang.txt", "json", "!fb edge bang", OK, "", 0, 10},
	{"searxng/a-search-json-bang.txt", "json", "edge bang", OK, "", 0, 10},
	{"searxng/a-search-json-long-query.txt", "json", strings.Repeat("a", 3000), OK, "", 0, 10},
	{"searxng/a-search-json-long-query.txt", "json", strings.Repeat("a", 2999), Soft, OffTopic, 0, 10},
	// SearXNG matches format case-sensitively: format=JSON gets the HTML
	// page. A JSON search that gets a page is not the answer asked for.
	{"searxng/a-search-format-upper-JSON.txt", "html", "hello world", OK, "", 0, 10},
	{"searxng/a-search-format-upper-JSON.txt", "JSON", "hello world", Failed, BadBody, 0, -1},

	// Redirects that are the query's answer, in every format, only for a
	// query with bang syntax; the same redirect for a query without one
	// is the instance's (a hostile instance is no open redirect).
	{"searxng/a-search-json-external-bang.txt", "json", "!!g foo bar", Redirect, ExternalBang, 0, -1},
	{"searxng/a-search-html-external-bang.txt", "html", "!!g foo bar", Redirect, ExternalBang, 0, -1},
	{"searxng/a-search-html-external-bang.txt", "html", "foo bar", Refused, LimiterRedirect, 0, -1},
	{"searxng/a-search-html-feeling-lucky.txt", "html", "!! foo bar", Redirect, FeelingLucky, 0, -1},
	{"searxng/a-search-html-feeling-lucky.txt", "html", "foo !!ddg", Redirect, ExternalBang, 0, -1},
	// "!!important" is no bang SearXNG knows: a word, so no redirect's.
	{"searxng/a-search-html-feeling-lucky.txt", "html", "c++ !!important", Refused, LimiterRedirect, 0, -1},
	{"searxng/a-search-html-feeling-lucky.txt", "html", "foo! bar", Refused, LimiterRedirect, 0, -1},
	{"searxng/a-search-json-feeling-lucky.txt", "json", "!! foo bar", Soft, EnginesDown, 0, 0},
	{"extra/redirect-302.txt", "json", "!!g hello", Refused, LimiterRedirect, 0, -1}, // to the instance's front page
	// Engines that fail on this query: ambiguous by itself (the search
	// asks a second instance to tell the query's fault from the instance's).
	{"searxng/a-search-json-engine-error-query.txt", "json", "backenderror thing", Soft, EnginesDown, 0, 0},
}

// TestClassifyRedirectGuard: a redirect is passed on as the query's
// answer only to an absolute http(s) URL off the instance.
func TestClassifyRedirectGuard(t *testing.T) {
	cases := []struct {
		loc  string
		kind Kind
	}{
		{"https://www.google.com/search?q=foo", Redirect},
		{"http://en.wikipedia.org/wiki/Foo", Redirect},
		{"/", Refused},
		{"/search?q=foo", Refused},
		{"//www.google.com/search?q=foo", Refused}, // not absolute: resolved, it could be anything
		{"http://127.0.0.1:18881/", Refused},       // the instance itself
		{"HTTP://127.0.0.1:18881/?q=x", Refused},
		{"javascript:alert(1)", Refused},
		{"data:text/html,hi", Refused},
		{"ftp://files.example.org/x", Refused},
		{"https://user:pw@evil.example/", Refused},
		{"https://", Refused},
		{"", Refused},
	}
	for _, tc := range cases {
		v := Classify(Answer{Status: 302, Header: Headers{"Location": tc.loc}, Format: "json", Query: ParseQuery("!!g foo"),
			Instance: "http://127.0.0.1:18881/", Now: fixtureNow})
		if v.Kind != tc.kind {
			t.Errorf("Location %q: %s/%s, want %s", tc.loc, v.Kind, v.Reason, tc.kind)
		}
		if v.Kind == Redirect && v.Location != tc.loc {
			t.Errorf("Location %q passed on as %q", tc.loc, v.Location)
		}
		if v.Kind != Redirect && v.Location != "" {
			t.Errorf("Location %q: a refusal carries Location %q", tc.loc, v.Location)
		}
	}
}

// TestBangRedirectNotToTheInstance: a bang's redirect to the instance
// under any of its names (case, port, trailing dot, a subdomain) is its
// limiter's, never passed on.
func TestBangRedirectNotToTheInstance(t *testing.T) {
	for loc, want := range map[string]Kind{
		"https://www.google.com/search?q=foo":   Redirect,
		"https://searx.example.org/":            Refused,
		"https://SEARX.example.org:8443/?q=foo": Refused,
		"http://searx.example.org./search":      Refused,
		"https://www.searx.example.org/":        Refused,
		"https://example.org/":                  Refused, // its parent domain
		"https://notsearx.example.org/":         Redirect,
	} {
		v := Classify(Answer{Status: 302, Header: Headers{"Location": loc}, Format: "json", Query: ParseQuery("!!g foo"),
			Instance: "https://searx.example.org/", Now: fixtureNow})
		if v.Kind != want {
			t.Errorf("Location %q: %s/%s, want %s", loc, v.Kind, v.Reason, want)
		}
	}
}

func TestClassifyFixtures(t *testing.T) {
	for _, tc := range classifyCases {
		name := fmt.Sprintf("%s/%s/%q", tc.file, tc.format, tc.query)
		t.Run(name, func(t *testing.T) {
			c := loadCapture(t, tc.file)
			v := Classify(answerOf(c, tc.format, tc.query))
			if v.Kind != tc.kind || v.Reason != tc.reason {
				t.Fatalf("verdict %s/%s, want %s/%s", v.Kind, v.Reason, tc.kind, tc.reason)
			}
			if v.RetryAfter != tc.retry {
				t.Errorf("RetryAfter %v, want %v", v.RetryAfter, tc.retry)
			}
			switch {
			case tc.results < 0 && v.Results != nil:
				t.Errorf("Results set (%d results), want none", len(v.Results.Results))
			case tc.results >= 0 && v.Results == nil:
				t.Errorf("no Results, want %d results", tc.results)
			case tc.results >= 0 && len(v.Results.Results) != tc.results:
				t.Errorf("%d results, want %d", len(v.Results.Results), tc.results)
			}
			if v.Reason.Kind() != v.Kind && v.Kind != OK {
				t.Errorf("reason %s belongs to %s, verdict is %s", v.Reason, v.Reason.Kind(), v.Kind)
			}
		})
	}
}

// TestEveryFixtureClassified keeps the table honest: every capture in
// testdata has at least one verdict.
func TestEveryFixtureClassified(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range classifyCases {
		covered[tc.file] = true
	}
	names := fixtureNames(t)
	if len(names) < 50 {
		t.Fatalf("only %d fixtures found", len(names))
	}
	for _, name := range names {
		if !covered[name] {
			t.Errorf("fixture %s has no case in classifyCases", name)
		}
	}
}

func TestClassifyFormats(t *testing.T) {
	tests := []struct {
		file  string
		query string
		want  []string
	}{
		{"searxng/a-search-html.txt", "hello world", []string{"json"}},
		{"searxng/b-search-html.txt", "hello world", nil},
		{"extra/html-current.txt", "Ada Lovelace", []string{"csv", "json", "rss"}},
	}
	for _, tc := range tests {
		v := Classify(answerOf(loadCapture(t, tc.file), "html", tc.query))
		if strings.Join(v.Formats, ",") != strings.Join(tc.want, ",") || (tc.want == nil) != (v.Formats == nil) {
			t.Errorf("%s: Formats %q, want %q", tc.file, v.Formats, tc.want)
		}
	}
}

func TestClassifyTooLarge(t *testing.T) {
	c := loadCapture(t, "searxng/a-search-json.txt")
	a := answerOf(c, "json", "hello world")
	a.MaxBody = len(c.body)
	if v := Classify(a); v.Kind != OK {
		t.Fatalf("body of exactly MaxBody: %s/%s, want ok", v.Kind, v.Reason)
	}
	a.MaxBody = len(c.body) - 1
	if v := Classify(a); v.Kind != Failed || v.Reason != TooLarge || v.Results != nil {
		t.Fatalf("body over MaxBody: %s/%s, want failed/too_large", v.Kind, v.Reason)
	}
}

// TestClassifyHugePages reads pages far larger than any public instance
// sends: it keeps MaxResults of them, and refuses them under a cap.
func TestClassifyHugePages(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"query": "hello world", "results": [`)
	const n = 3000
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"url": "https://example.org/%d", "title": "hello world %d", "content": "%s", "engines": ["e"], "positions": [%d], "score": 1}`,
			i, i, strings.Repeat("lorem ipsum ", 20), i+1)
	}
	b.WriteString(`], "answers": [], "suggestions": [], "unresponsive_engines": []}`)
	body := []byte(b.String())

	v := Classify(Answer{Status: 200, Body: body, Format: "json", Query: ParseQuery("hello world")})
	if v.Kind != OK || len(v.Results.Results) != results.MaxResults || v.Results.Dropped != n-results.MaxResults {
		t.Fatalf("huge JSON: %s/%s with %v", v.Kind, v.Reason, v.Results != nil)
	}
	v = Classify(Answer{Status: 200, Body: body, Format: "json", Query: ParseQuery("hello world"), MaxBody: 1 << 20})
	if v.Kind != Failed || v.Reason != TooLarge {
		t.Fatalf("huge JSON over cap: %s/%s", v.Kind, v.Reason)
	}

	page := grownHTML(t, 1000)
	v = Classify(Answer{Status: 200, Body: page, Format: "html", Query: ParseQuery("hello world")})
	if v.Kind != OK || len(v.Results.Results) != results.MaxResults || v.Results.Dropped != 1000-results.MaxResults {
		t.Fatalf("huge HTML: %s/%s", v.Kind, v.Reason)
	}
}

// TestClassifyChallengeWordsInResults: a good answer that merely talks
// about challenges stays good; Cloudflare's header is believed anyway.
func TestClassifyChallengeWordsInResults(t *testing.T) {
	body := []byte(`{"query": "cloudflare just a moment", "results": [` +
		`{"url": "https://blog.example/cf", "title": "Why Cloudflare says Just a moment...", "content": "The page loads /cdn-cgi/challenge-platform/ and sets _cf_chl_opt; Anubis shows Making sure you're not a bot! DDoS-Guard too.", "engines": ["x"]},` +
		`{"url": "https://blog.example/cf2", "title": "cloudflare moment", "content": "", "engines": ["x"]},` +
		`{"url": "https://blog.example/cf3", "title": "cloudflare again", "content": "", "engines": ["x"]}]}`)
	a := Answer{Status: 200, Body: body, Format: "json", Query: ParseQuery("cloudflare just a moment"), Header: Headers{"Server": "ddos-guard"}}
	if v := Classify(a); v.Kind != OK {
		t.Fatalf("results about challenges: %s/%s, want ok", v.Kind, v.Reason)
	}
	a.Header = Headers{"CF-Mitigated": "challenge"}
	if v := Classify(a); v.Kind != Refused || v.Reason != BotChallenge {
		t.Fatalf("cf-mitigated: challenge: %s/%s, want refused/bot_challenge", v.Kind, v.Reason)
	}
}

func TestClassifyStatuses(t *testing.T) {
	tests := []struct {
		status int
		format string
		kind   Kind
		reason Reason
	}{
		{301, "json", Refused, LimiterRedirect},
		{303, "html", Refused, LimiterRedirect},
		{307, "html", Refused, LimiterRedirect},
		{400, "json", Failed, ClientError},
		{404, "html", Failed, ClientError},
		{405, "html", Failed, ClientError},
		{403, "csv", Refused, FormatDisabled},
		{403, "html", Refused, Forbidden},
		{418, "html", Refused, Forbidden},
		{429, "json", Refused, RateLimited},
		{500, "json", Failed, ServerError},
		{502, "html", Failed, ServerError},
		{503, "html", Refused, Unavailable},
		{504, "json", Failed, ServerError},
		{599, "json", Failed, ServerError},
		{100, "json", Failed, BadBody},
		{0, "json", Failed, BadBody},
		{600, "json", Failed, BadBody},
	}
	for _, tc := range tests {
		v := Classify(Answer{Status: tc.status, Format: tc.format, Query: ParseQuery("q"), Body: []byte("nope")})
		if v.Kind != tc.kind || v.Reason != tc.reason {
			t.Errorf("status %d (%s): %s/%s, want %s/%s", tc.status, tc.format, v.Kind, v.Reason, tc.kind, tc.reason)
		}
	}
}

// TestClassifyFewResultsEdge checks FewResults: with engines unresponsive,
// FewResults-1 results are soft and FewResults are ok.
func TestClassifyFewResultsEdge(t *testing.T) {
	mk := func(n int) []byte {
		var b strings.Builder
		b.WriteString(`{"query": "go", "results": [`)
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"url": "https://go.example/%d", "title": "go %d"}`, i, i)
		}
		b.WriteString(`], "unresponsive_engines": [["google", "timeout"]]}`)
		return []byte(b.String())
	}
	v := Classify(Answer{Status: 200, Body: mk(FewResults - 1), Format: "json", Query: ParseQuery("go")})
	if v.Kind != Soft || v.Reason != EnginesDown || len(v.Results.Results) != FewResults-1 {
		t.Errorf("%d results, engines down: %s/%s", FewResults-1, v.Kind, v.Reason)
	}
	v = Classify(Answer{Status: 200, Body: mk(FewResults), Format: "json", Query: ParseQuery("go")})
	if v.Kind != OK {
		t.Errorf("%d results, engines down: %s/%s, want ok", FewResults, v.Kind, v.Reason)
	}
}

// TestClassifyAnswersOnly: an answer without results (a calculator, an
// infobox) is a good answer.
func TestClassifyAnswersOnly(t *testing.T) {
	body := []byte(`{"query": "2+3", "results": [], "answers": ["5"], "unresponsive_engines": []}`)
	if v := Classify(Answer{Status: 200, Body: body, Format: "json", Query: ParseQuery("2+3")}); v.Kind != OK || v.Results.Answers[0].Answer != "5" {
		t.Fatalf("answers only: %s/%s", v.Kind, v.Reason)
	}
}

// TestClassifyKeepsNoBody: the verdict does not point into the body the
// caller will reuse.
func TestClassifyKeepsNoBody(t *testing.T) {
	for _, file := range []string{"searxng/a-search-json.txt", "searxng/a-search-html.txt"} {
		c := loadCapture(t, file)
		format := "json"
		if strings.Contains(file, "html") {
			format = "html"
		}
		a := answerOf(c, format, "hello world")
		a.Body = bytes.Clone(c.body)
		v := Classify(a)
		before := string(v.Results.AppendJSON(nil))
		for i := range a.Body {
			a.Body[i] = 'x'
		}
		if after := string(v.Results.AppendJSON(nil)); after != before {
			t.Errorf("%s: results changed when the body was overwritten", file)
		}
	}
}

func TestKindAndReasons(t *testing.T) {
	names := map[Kind]string{OK: "ok", Soft: "soft", Refused: "refused", Failed: "failed", Redirect: "redirect", 0: "unknown", 9: "unknown"}
	for k, want := range names {
		if k.String() != want {
			t.Errorf("Kind(%d).String() = %q, want %q", k, k.String(), want)
		}
	}
	seen := map[Reason]bool{}
	for _, r := range Reasons() {
		if seen[r] {
			t.Errorf("reason %s listed twice", r)
		}
		seen[r] = true
		if k := r.Kind(); k != Soft && k != Refused && k != Failed && k != Redirect {
			t.Errorf("reason %s has no kind", r)
		}
		if strings.ToLower(string(r)) != string(r) || strings.Contains(string(r), " ") {
			t.Errorf("reason %q is not a snake_case label", r)
		}
	}
	if len(seen) != 21 {
		t.Errorf("%d reasons, want 21", len(seen))
	}
	if Reason("nonsense").Kind() != 0 {
		t.Errorf("unknown reason has a kind")
	}
	var zero Verdict
	if zero.Kind == OK {
		t.Errorf("the zero Verdict is OK")
	}
}

func TestHeadersPeek(t *testing.T) {
	h := Headers{"Retry-After": "5", "cf-mitigated": "challenge"}
	tests := map[string]string{"Retry-After": "5", "retry-after": "5", "RETRY-AFTER": "5", "CF-Mitigated": "challenge", "Server": ""}
	for k, want := range tests {
		if got := string(h.Peek(k)); got != want {
			t.Errorf("Peek(%q) = %q, want %q", k, got, want)
		}
	}
	if Headers(nil).Peek("x") != nil {
		t.Errorf("nil Headers returned a value")
	}
}

// TestClassifyConcurrent: verdicts share only read-only tables and
// compiled selectors; under -race, concurrent use must be clean and give
// the same verdicts.
func TestClassifyConcurrent(t *testing.T) {
	cases := classifyCases[:20]
	captures := make([]capture, len(cases))
	for i, tc := range cases {
		captures[i] = loadCapture(t, tc.file)
	}
	done := make(chan error)
	for g := 0; g < 4; g++ {
		go func() {
			for i, tc := range cases {
				v := Classify(answerOf(captures[i], tc.format, tc.query))
				if v.Kind != tc.kind || v.Reason != tc.reason {
					done <- fmt.Errorf("%s: %s/%s, want %s/%s", tc.file, v.Kind, v.Reason, tc.kind, tc.reason)
					return
				}
			}
			done <- nil
		}()
	}
	for g := 0; g < 4; g++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// TestBangRedirectToTheInstanceAddress: an instance on a loopback address
// that answers a bang with a redirect to itself under another spelling
// (localhost, [::1], 0.0.0.0, 127.0.0.2, the mapped form) on its own port
// is refused as its limiter's; a numeric host in a legacy form too; the
// same spellings on another port, and public hosts, are the bang's.
func TestBangRedirectToTheInstanceAddress(t *testing.T) {
	for loc, want := range map[string]Kind{
		"http://localhost:18881/":           Refused,
		"http://LOCALHOST.:18881/search":    Refused,
		"http://searx.localhost:18881/":     Refused,
		"http://[::1]:18881/":               Refused,
		"http://0.0.0.0:18881/":             Refused,
		"http://[::]:18881/":                Refused,
		"http://127.0.0.2:18881/":           Refused,
		"http://[::ffff:127.0.0.1]:18881/":  Refused,
		"http://[::ffff:7f00:1]:18881/":     Refused,
		"http://2130706433:18881/":          Refused,
		"http://0x7f.1:18881/":              Refused,
		"http://127.1/":                     Refused,
		"http://localhost:18882/":           Redirect,
		"http://localhost/":                 Redirect, // another port: another site
		"https://www.google.com/search?q=x": Redirect,
		"https://deadbeef.example/":         Redirect,
		"https://add.example/":              Redirect,
		"https://beef.cafe/":                Redirect,
		"https://1.1.1.1/":                  Redirect,
		"http://0177.0.0.1:18881/":          Refused,
	} {
		v := Classify(Answer{Status: 302, Header: Headers{"Location": loc}, Format: "html", Query: ParseQuery("!!g foo"),
			Instance: "http://127.0.0.1:18881/", Now: fixtureNow})
		if v.Kind != want {
			t.Errorf("Location %q: %s/%s, want %s", loc, v.Kind, v.Reason, want)
		}
	}
	// A named instance's own address spelled as such is refused too.
	v := Classify(Answer{Status: 302, Header: Headers{"Location": "https://[2001:db8::7]/"}, Format: "html",
		Query: ParseQuery("!!g foo"), Instance: "https://[2001:db8:0::7]:443/", Now: fixtureNow})
	if v.Kind != Refused {
		t.Errorf("the instance's own IPv6 address in another form: %s", v.Kind)
	}
}
