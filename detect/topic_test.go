package detect

import (
	"fmt"
	"testing"

	"github.com/searxgate/searxgate/results"
)

// resultsMentioning returns n results of which the first k mention word.
func resultsMentioning(query, word string, n, k int) *results.Page {
	r := &results.Page{Query: query}
	for i := 0; i < n; i++ {
		x := results.Result{URL: fmt.Sprintf("https://other.example/page/%d", i), Title: "Unrelated page", Content: "nothing to see"}
		if i < k {
			x.Content = "a page about " + word
		}
		r.Results = append(r.Results, x)
	}
	return r
}

// TestOnTopicThreshold checks the edge of OnTopicPercent: the least share
// of mentioning results that is on topic, and one result fewer.
func TestOnTopicThreshold(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 7, 10, 20, 33} {
		need := (n*OnTopicPercent + 99) / 100
		if need < 1 {
			need = 1
		}
		if !OnTopic("borrow checker", resultsMentioning("", "Borrow", n, need)) {
			t.Errorf("%d of %d results mention the query: off topic, want on topic", need, n)
		}
		if OnTopic("borrow checker", resultsMentioning("", "Borrow", n, need-1)) {
			t.Errorf("%d of %d results mention the query: on topic, want off topic", need-1, n)
		}
	}
	// The constant's documented meaning on ten results.
	if OnTopicPercent == 30 {
		if !OnTopic("rust", resultsMentioning("", "rust", 10, 3)) || OnTopic("rust", resultsMentioning("", "rust", 10, 2)) {
			t.Errorf("10 results: 3 mentioning must be on topic, 2 off topic")
		}
	}
}

func TestOnTopic(t *testing.T) {
	tests := []struct {
		query  string
		echoed string
		text   string // what every result says
		want   bool
	}{
		{"hello world", "", "Hello there", true},
		{"hello world", "", "nothing here", false},
		{"Crème Brûlée", "", "creme brulee recipe", true},
		{"creme brulee", "", "CRÈME BRÛLÉE", true},
		{"Łódź", "", "visit lodz", true},
		{"straße", "", "Strasse names", true},
		{"Ελλάδα", "", "ΕΛΛΑΔΑ travel", true},
		{"ёлка", "", "Елка", true},
		{"東京 天気", "", "今日の東京の天気", true},
		{"東京", "", "大阪", false},
		{"!ddg :fr !!w <3 matrix", "", "the matrix reloaded", true},
		{"!ddg :fr", "", "anything", true}, // no words: nothing to judge
		{"the matrix", "", "the godfather", false},
		{"the", "", "the godfather", true}, // only a stop word: it is the word
		{"a b", "", "abc", true},           // only one-letter words: they count
		{"hello world", "hello world", "hello", true},
		{"hello world", "Hello  World", "hello", true},
		{"!ddg hello world :en", "hello world", "hello", true},
		{"hello world", "weather berlin", "hello", false},
		{"hello world", "hello", "hello", false},
		{"example.org", "", "see https://example.org/x", true},
	}
	for _, tc := range tests {
		r := &results.Page{Query: tc.echoed}
		for i := 0; i < 4; i++ {
			r.Results = append(r.Results, results.Result{URL: fmt.Sprintf("https://x.test/%d", i), Title: "Title", Content: tc.text})
		}
		if got := OnTopic(tc.query, r); got != tc.want {
			t.Errorf("OnTopic(%q, echoed %q, %q) = %v, want %v", tc.query, tc.echoed, tc.text, got, tc.want)
		}
	}
	if !OnTopic("anything", nil) || !OnTopic("anything", &results.Page{}) {
		t.Errorf("no results must be on topic")
	}
}

func TestSameQuery(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"hello world", "hello world", true},
		{"hello world", "Hello World", true},
		{"hello  world ", " hello world", true},
		{"Zürich", "zurich", true},
		{"!ddg hello :en", "hello", true},
		{"<3 hello", "hello", true},
		{"2+3", "2+3", true},
		{"hello world", "hello", false},
		{"hello world", "world hello", false},
		{"c++", "c", true}, // punctuation is not a word
		{"", "", true},
	}
	for _, tc := range tests {
		if got := SameQuery(tc.a, tc.b); got != tc.want {
			t.Errorf("SameQuery(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestFold(t *testing.T) {
	tests := map[string]string{
		"ÀÁÂÃÄÅ àáâãäå":         "aaaaaa aaaaaa",
		"Ç É Ë Î Ñ Ö Ø Ù Ý ÿ":   "c e e i n o o u y y",
		"ß Æ æ Œ œ Þ þ Ĳ ĳ":     "ss ae ae oe oe th th ij ij",
		"Łódź Čeština Ğ ő ű ſ":  "lodz cestina g o u s",
		"Ελλάδα ΐ ς":            "ελλαδα ι σ",
		"Ёлка":                  "елка",
		"İstanbul":              "istanbul",
		"×÷":                    "×÷",
		"東京 ABC":                "東京 abc",
		"invalid \xff byte":     "invalid \uFFFD byte",
		"Đ đ Ħ ħ ı ĸ Ŋ ŋ Ŧ ŧ ŉ": "d d h h i k n n t t n",
	}
	for in, want := range tests {
		if got := string(appendFold(nil, in)); got != want {
			t.Errorf("fold(%q) = %q, want %q", in, got, want)
		}
	}
	if len(latin1Fold) != 0x100-0xC0 || len(latinExtAFold) != 0x180-0x100 {
		t.Errorf("fold tables have %d and %d entries", len(latin1Fold), len(latinExtAFold))
	}
}

// TestTemplatedResults: results that only wrap the query in one text are
// off topic; real results, or too few to tell, are not.
func TestTemplatedResults(t *testing.T) {
	mk := func(n int, title, content func(i int) string) []results.Result {
		return resultsOf(n, "https://shop%d.example/", title, content)
	}
	same := func(s string) func(int) string { return func(int) string { return s } }
	cases := []struct {
		name string
		rs   []results.Result
		want bool
	}{
		{"buy q cheap", mk(10, same("Buy rust borrow checker cheap"), same("Best rust borrow checker deals")), true},
		{"case", mk(6, func(i int) string {
			return []string{"Buy Rust Borrow Checker cheap", " buy rust borrow checker CHEAP"}[i%2]
		}, same("")), true},
		{"numbered results", mk(10, func(i int) string { return fmt.Sprintf("Result %d for rust borrow checker", i) }, same("x")), false},
		{"real titles", mk(5, func(i int) string {
			return []string{"The borrow checker - Rust book", "Rust borrow checker explained", "Fighting the borrow checker", "rust-lang/rust issue", "Borrow checker errors"}[i]
		}, same("")), false},
		{"too few to tell", mk(TemplateMin-1, same("Buy rust borrow checker cheap"), same("")), false},
	}
	for _, tc := range cases {
		if got := templated(tc.rs); got != tc.want {
			t.Errorf("%s: templated %v, want %v", tc.name, got, tc.want)
		}
	}
	// Through Classify: such an answer is off topic.
	r := &results.Page{Query: "rust borrow checker", Results: mk(10, same("Buy rust borrow checker cheap"), same("rust borrow checker on sale"))}
	if v := judge(ParseQuery("rust borrow checker"), r, nil); v.Kind != Soft || v.Reason != OffTopic {
		t.Errorf("a templated answer judged %s/%s, want soft/off_topic", v.Kind, v.Reason)
	}
}

// TestEchoResults: results made of nothing but the query's words (any
// subset, order, case, accents, with stop words and counters), as spam
// generated from the query is, make an answer off topic once they are half
// of it; honest results that contain the query's words among their own
// are not echoes.
func TestEchoResults(t *testing.T) {
	const q = "rust borrow checker"
	mk := func(n int, title, content func(i int) string) []results.Result {
		return resultsOf(n, "https://spam%d.example/rust-borrow-checker", title, content)
	}
	echoTitles := cycle("rust borrow", "Checker Rust", "borrow checker rust rust", "RUST BORROW CHECKER", "Borrow-Checker")
	echoContents := cycle("rust borrow checker", "borrow checker", "", "Rust: borrow, checker.")
	honestTitles, honestContents := cycle(honestBorrowTitles...), cycle(honestBorrowSnippets...)
	mixed := func(echoed int) []results.Result {
		rs := mk(10, honestTitles, honestContents)
		for i := range echoed {
			rs[i].Title, rs[i].Content = echoTitles(i), echoContents(i)
		}
		return rs
	}
	cases := []struct {
		name  string
		query string
		rs    []results.Result
		want  bool
	}{
		{"partial echo", q, mk(10, echoTitles, echoContents), true},
		{"with counters and stop words", q, mk(8, func(i int) string { return fmt.Sprintf("The rust borrow checker %d", i) }, cycle("rust and the borrow checker")), true},
		{"accents and case", "café crème", mk(5, cycle("CAFÉ crème", "Creme Cafe", "cafe"), cycle("crème", "café café")), true},
		{"half echoed", q, mixed(5), true},
		{"less than half echoed", q, mixed(4), false},
		{"honest results", q, mk(10, honestTitles, honestContents), false},
		{"title alone is the query", "github", mk(6, cycle("GitHub"), cycle("GitHub is where people build software.", "Sign in to GitHub")), false},
		{"only stop words and numbers", q, mk(6, func(i int) string { return fmt.Sprint("the ", i) }, cycle("and 2")), false},
		{"too few to tell", q, mk(TemplateMin-1, echoTitles, echoContents), false},
	}
	for _, tc := range cases {
		if got := echoes(queryWords(tc.query), matchWords(queryWords(tc.query)), tc.rs); got != tc.want {
			t.Errorf("%s: echoes %v, want %v", tc.name, got, tc.want)
		}
		v := judge(ParseQuery(tc.query), &results.Page{Query: tc.query, Results: tc.rs}, nil)
		if off := v.Kind == Soft && v.Reason == OffTopic; off != tc.want {
			t.Errorf("%s: judged %s/%s, want off topic %v", tc.name, v.Kind, v.Reason, tc.want)
		}
	}
}
