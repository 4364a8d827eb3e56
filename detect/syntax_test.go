package detect

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestKindOf(t *testing.T) {
	cases := map[string]WordKind{
		"hello": WordPlain, "2+3": WordPlain, "?what": WordPlain, "foo!": WordPlain, "a<6": WordPlain,
		"!": WordPlain, ":": WordPlain, "<": WordPlain,
		"!!":          WordLucky,
		"!!g":         WordExternalBang,
		"!!G":         WordExternalBang, // lowercased, as SearXNG does
		"!!ddg":       WordExternalBang,
		"!!!":         WordPlain, // searx/query.py: "!!" and a name SearXNG's bangs do not hold is a word
		"!!important": WordPlain,
		"!fb":         WordBang,
		"!wp":         WordBang,
		":de":         WordLanguage,
		":en_US":      WordLanguage,
		"<3":          WordTimeout,
		"<850":        WordTimeout,
		"<6s":         WordPlain, // not digits: SearXNG searches the word
		"<-6":         WordPlain,
		"<+6":         WordPlain,
		"<6.5":        WordPlain,
	}
	for w, want := range cases {
		if got := KindOf(w); got != want {
			t.Errorf("KindOf(%q) = %d, want %d", w, got, want)
		}
	}
}

func TestQueryTimeout(t *testing.T) {
	cases := map[string]time.Duration{
		"plain words":         0,
		"<6 slowbackend":      6 * time.Second,
		"slowbackend <3":      3 * time.Second,
		"<850 fast":           850 * time.Millisecond,
		"<99 x":               99 * time.Second,
		"<100 x":              100 * time.Millisecond,
		"<6 <2 last wins":     2 * time.Second,
		"<0 x":                0,
		"< 6 not syntax":      0,
		"<6s not syntax":      0,
		"<-6 not syntax":      0,
		"a<6 not at the word": 0,
		"<":                   0,
		"<999999999 x":        999999999 * time.Millisecond,
		"<1000000001 x":       MaxQueryTimeout,
		"<99999999999999999999999 too long to read": MaxQueryTimeout,
		"<00000000000000000000000000000000000005 x": 5 * time.Second,
	}
	for q, want := range cases {
		if got := ParseQuery(q).Timeout(); got != want {
			t.Errorf("ParseQuery(%q).Timeout() = %v, want %v", q, got, want)
		}
	}
}

func TestQueryBang(t *testing.T) {
	cases := []struct {
		q        string
		reason   Reason
		external string
		lucky    bool
	}{
		{"foo bar", "", "", false},
		{"!!g foo bar", ExternalBang, "g", false},
		{"foo !!w", ExternalBang, "w", false},
		{"c++ !!important", "", "", false},
		{"!!g !!important foo", ExternalBang, "g", false},
		{"!!important !! foo", FeelingLucky, "", true},
		{"!! foo bar", FeelingLucky, "", true},
		{"foo !!", FeelingLucky, "", true},
		{"foo! bar", "", "", false},
		{"!fb edge bang", "", "", false}, // an engine bang: SearXNG answers with results
		{"a!!b", "", "", false},
		// SearXNG tries the external bang before anything else, wherever
		// the words stand; the last one counts.
		{"!! !!g foo", ExternalBang, "g", true},
		{"!!g !! foo", ExternalBang, "g", true},
		{"!!g !!ddg foo", ExternalBang, "ddg", false},
	}
	for _, tc := range cases {
		q := ParseQuery(tc.q)
		reason, ok := q.Bang()
		if reason != tc.reason || ok != (tc.reason != "") || q.ExternalBang() != tc.external || q.Lucky() != tc.lucky {
			t.Errorf("ParseQuery(%q): Bang() = %q, %v; ExternalBang() = %q; Lucky() = %v; want %q, %q, %v",
				tc.q, reason, ok, q.ExternalBang(), q.Lucky(), tc.reason, tc.external, tc.lucky)
		}
	}
}

func TestQueryParts(t *testing.T) {
	cases := []struct {
		q, terms, lang string
		syntax         bool
	}{
		{"hello world", "hello world", "", false},
		{"  a   b ", "a b", "", false},
		{":de hello world", "hello world", "de", true},
		{"Zürich Öffnungszeiten :de", "Zürich Öffnungszeiten", "de", true},
		{":fr x :de_DE", "x", "de_DE", true},
		{"<3 slow query :fr", "slow query", "fr", true},
		{"!images cats", "cats", "", true},
		{"!! !!g :de <3", "", "de", true},
		{"2+3", "2+3", "", false},
	}
	for _, tc := range cases {
		q := ParseQuery(tc.q)
		if q.Text() != tc.q || q.String() != tc.q || q.Terms() != tc.terms || q.Language() != tc.lang || q.HasSyntax() != tc.syntax {
			t.Errorf("ParseQuery(%q): Text %q, Terms %q, Language %q, HasSyntax %v; want terms %q, language %q, syntax %v",
				tc.q, q.Text(), q.Terms(), q.Language(), q.HasSyntax(), tc.terms, tc.lang, tc.syntax)
		}
	}
	q := ParseQuery("!! foo  !! bar !!g")
	if got := q.Without(WordLucky); got != "foo bar !!g" {
		t.Errorf("Without(WordLucky) = %q", got)
	}
	var kinds []WordKind
	for k := range q.Words() {
		kinds = append(kinds, k)
	}
	if want := []WordKind{WordLucky, WordPlain, WordLucky, WordPlain, WordExternalBang}; !slices.Equal(kinds, want) {
		t.Errorf("Words() kinds = %v, want %v", kinds, want)
	}
}

// TestQueryTermsAsSearXNG: for each captured search, the words Terms
// keeps are what the same SearXNG echoed in its JSON, or sent to the
// bang's site.
func TestQueryTermsAsSearXNG(t *testing.T) {
	cases := []struct{ capture, q string }{
		{"searxng/a-search-json.txt", "hello world"},
		{"searxng/a-search-json-bang.txt", "!fb edge bang"},
		{"searxng/a-search-json-feeling-lucky.txt", "!! foo bar"},
		{"searxng/a-search-json-engine-error-query.txt", "backenderror thing"},
		{"searxng/a-search-json-engine-timeout.txt", "slowbackend"},
		{"searxng/a-search-json-answer-calculator.txt", "2+3"},
		{"searxng/a-search-json-noresults.txt", "noresults"},
		{"searxng/a-search-json-long-query.txt", strings.Repeat("a", 3000)},
	}
	for _, tc := range cases {
		var echo struct{ Query string }
		if err := json.Unmarshal(loadCapture(t, tc.capture).body, &echo); err != nil {
			t.Fatalf("%s: %v", tc.capture, err)
		}
		if got := ParseQuery(tc.q).Terms(); got != echo.Query {
			t.Errorf("%s: ParseQuery(%q).Terms() = %q, SearXNG echoed %q", tc.capture, tc.q, got, echo.Query)
		}
	}
	// "!!g foo bar" sent the client to Google with q=foo+bar.
	c := loadCapture(t, "searxng/a-search-json-external-bang.txt")
	q := ParseQuery("!!g foo bar")
	if loc := c.header.Peek("Location"); string(loc) != "https://www.google.com/search?q="+strings.ReplaceAll(q.Terms(), " ", "+") || q.ExternalBang() != "g" {
		t.Errorf("Location %q, terms %q, bang %q", loc, q.Terms(), q.ExternalBang())
	}
}

// TestParseQueryAllocs: a query is parsed where a request is made, cache
// hit or miss: with or without syntax, the parse allocates nothing.
func TestParseQueryAllocs(t *testing.T) {
	for _, text := range []string{"hello world", "!!g <850 :de hello !wp world !!"} {
		if n := testing.AllocsPerRun(100, func() { _ = ParseQuery(text) }); n != 0 {
			t.Errorf("ParseQuery(%q): %v allocations", text, n)
		}
	}
}

// kindPatterns say what searx/query.py's parsers make of a word, each
// parser's check as a pattern (the parsers in RawTextQuery's order).
var kindPatterns = []struct {
	re   *regexp.Regexp
	kind WordKind
}{
	{regexp.MustCompile(`^<[0-9]+$`), WordTimeout},
	{regexp.MustCompile(`^:.`), WordLanguage},
	{regexp.MustCompile(`^!!.`), WordExternalBang}, // and a known name (knownBang), else WordPlain
	{regexp.MustCompile(`^![^!]`), WordBang},
	{regexp.MustCompile(`^!!$`), WordLucky},
}

// FuzzParseQuery: never panics; every word gets the kind its pattern
// says; the parts are the last of their words; Terms and Without leave out
// exactly the words they say, in order.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"", "hello world", "!!g foo bar", "!! foo bar", "!fb edge bang", ":de hello world",
		"<3 slow query :fr", "<850 x <2", "!!", "<", "<99999999999999999999", "a\u00a0!!b\tc\n<5", "!\xff :\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		q := ParseQuery(text)
		if q.Text() != text {
			t.Fatalf("Text() = %q, want %q", q.Text(), text)
		}
		var (
			words, plain, notLucky []string
			external, lang         string
			lucky, syntax          bool
			timeout                time.Duration
		)
		for k, w := range q.Words() {
			words = append(words, w)
			want := WordPlain
			for _, p := range kindPatterns {
				if p.re.MatchString(w) {
					want = p.kind
					break
				}
			}
			if want == WordExternalBang && !knownBang(w[2:]) {
				want = WordPlain
			}
			if k != want || KindOf(w) != want {
				t.Fatalf("word %q: kind %d (KindOf %d), want %d", w, k, KindOf(w), want)
			}
			switch k {
			case WordPlain:
				plain = append(plain, w)
			case WordExternalBang:
				external = w[2:]
			case WordLanguage:
				lang = w[1:]
			case WordLucky:
				lucky = true
			case WordTimeout:
				n := 0 // in milliseconds, saturated past the bound
				for _, c := range w[1:] {
					n = min(n*10+int(c-'0'), int(MaxQueryTimeout/time.Millisecond)+1)
				}
				switch {
				case n < 100:
					timeout = time.Duration(n) * time.Second
				default:
					timeout = min(time.Duration(n)*time.Millisecond, MaxQueryTimeout)
				}
			}
			if k != WordLucky {
				notLucky = append(notLucky, w)
			}
			syntax = syntax || k != WordPlain
		}
		if !slices.Equal(words, strings.Fields(text)) {
			t.Fatalf("Words() = %q, want the fields %q", words, strings.Fields(text))
		}
		if q.HasSyntax() != syntax || q.ExternalBang() != external || q.Language() != lang || q.Lucky() != lucky || q.Timeout() != timeout {
			t.Fatalf("%q: syntax %v, external %q, language %q, lucky %v, timeout %v; want %v, %q, %q, %v, %v",
				text, q.HasSyntax(), q.ExternalBang(), q.Language(), q.Lucky(), q.Timeout(), syntax, external, lang, lucky, timeout)
		}
		reason, ok := q.Bang()
		switch {
		case external != "" && (reason != ExternalBang || !ok),
			external == "" && lucky && (reason != FeelingLucky || !ok),
			external == "" && !lucky && (reason != "" || ok):
			t.Fatalf("%q: Bang() = %q, %v", text, reason, ok)
		}
		if got := q.Terms(); got != strings.Join(plain, " ") || ParseQuery(got).HasSyntax() {
			t.Fatalf("%q: Terms() = %q, want %q", text, got, strings.Join(plain, " "))
		}
		if got := q.Without(WordLucky); got != strings.Join(notLucky, " ") {
			t.Fatalf("%q: Without(WordLucky) = %q, want %q", text, got, strings.Join(notLucky, " "))
		}
	})
}
