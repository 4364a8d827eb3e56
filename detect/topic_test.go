package detect

import (
	"fmt"
	"testing"
)

// resultsMentioning returns n results of which the first k mention word.
func resultsMentioning(query, word string, n, k int) *Results {
	r := &Results{Query: query}
	for i := 0; i < n; i++ {
		x := Result{URL: fmt.Sprintf("https://other.example/page/%d", i), Title: "Unrelated page", Content: "nothing to see"}
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
		r := &Results{Query: tc.echoed}
		for i := 0; i < 4; i++ {
			r.Results = append(r.Results, Result{URL: fmt.Sprintf("https://x.test/%d", i), Title: "Title", Content: tc.text})
		}
		if got := OnTopic(tc.query, r); got != tc.want {
			t.Errorf("OnTopic(%q, echoed %q, %q) = %v, want %v", tc.query, tc.echoed, tc.text, got, tc.want)
		}
	}
	if !OnTopic("anything", nil) || !OnTopic("anything", &Results{}) {
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
	mk := func(n int, title, content func(i int) string) []Result {
		var rs []Result
		for i := range n {
			rs = append(rs, Result{URL: fmt.Sprintf("https://shop%d.example/", i), Title: title(i), Content: content(i)})
		}
		return rs
	}
	same := func(s string) func(int) string { return func(int) string { return s } }
	cases := []struct {
		name string
		rs   []Result
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
	r := &Results{Query: "rust borrow checker", Results: mk(10, same("Buy rust borrow checker cheap"), same("rust borrow checker on sale"))}
	if v := judge("rust borrow checker", r, nil); v.Kind != Soft || v.Reason != OffTopic {
		t.Errorf("a templated answer judged %s/%s, want soft/off_topic", v.Kind, v.Reason)
	}
}
