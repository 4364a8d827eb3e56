package detect

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/searxgate/searxgate/results"
)

// TestTemplateSpam: cuts of the query, different in each result, wrapped
// in one canned text with a counter, on more than half of the results,
// are off topic; the whole query in a canned text (SearXNG's test
// engine), a series, the same cut every time, honest results, and too
// few canned ones are not.
func TestTemplateSpam(t *testing.T) {
	const q = "rust borrow checker"
	mk := func(n int, title, content func(i int) string) []results.Result {
		return resultsOf(n, "https://shop%d.example/", title, content)
	}
	cuts := []string{"rust borrow", "checker rust", "borrow checker", "Rust Borrow Checker"}
	spamTitle := func(i int) string { return fmt.Sprintf("Buy %s cheap — spam %d", cuts[i%len(cuts)], i+1) }
	spamSnippet := func(i int) string { return fmt.Sprintf("Best %s deals, offer %d", cuts[(i+1)%len(cuts)], i+1) }
	honest, honestSnippet := cycle(honestBorrowTitles...), cycle(honestBorrowSnippets...)
	mixed := func(spam int) []results.Result {
		rs := mk(10, honest, honestSnippet)
		for i := range spam {
			rs[i].Title, rs[i].Content = spamTitle(i), spamSnippet(i)
		}
		return rs
	}
	cases := []struct {
		name string
		rs   []results.Result
		want bool
	}{
		{"partial-echo spam", mk(10, spamTitle, spamSnippet), true},
		{"six of ten", mixed(6), true},
		{"half", mixed(5), false},
		{"whole query, canned", mk(10, func(i int) string { return fmt.Sprintf("Buy rust borrow checker cheap — spam %d", i) },
			func(i int) string { return fmt.Sprintf("Best rust borrow checker deals, offer %d", i) }), false},
		{"test engine", mk(10, func(i int) string { return fmt.Sprintf("Result %d for rust borrow checker", i+1) },
			func(i int) string {
				return fmt.Sprintf("Fake backend snippet %d: the words were rust, borrow, checker", i+1)
			}), false},
		{"honest", mk(10, honest, honestSnippet), false},
		{"a series", mk(10, func(i int) string { return fmt.Sprintf("Rust borrow checker, part %d: lifetimes", i+1) },
			func(i int) string { return fmt.Sprintf("The checker explained, part %d.", i+1) }), false},
		{"the same cut every time", mk(10, func(i int) string { return fmt.Sprintf("Buy rust borrow cheap — spam %d", i) },
			func(i int) string { return fmt.Sprintf("Best checker deals, offer %d", i) }), false},
		{"no snippet", mk(10, spamTitle, func(int) string { return "" }), false},
		{"too few", mk(TemplateMin-1, spamTitle, spamSnippet), false},
	}
	for _, tc := range cases {
		if got := templateSpam(queryWords(q), matchWords(queryWords(q)), tc.rs); got != tc.want {
			t.Errorf("%s: templateSpam %v, want %v", tc.name, got, tc.want)
		}
		v := judge(ParseQuery(q), &results.Page{Query: q, Results: tc.rs}, nil)
		if off := v.Kind == Soft && v.Reason == OffTopic; off != tc.want {
			t.Errorf("%s: judged %s/%s, want off topic %v", tc.name, v.Kind, v.Reason, tc.want)
		}
	}
}

// queryInCommand reads the q a capture's curl command asked.
var queryInCommand = regexp.MustCompile(`[?&']q=([^&' ]*)`)

// TestTemplateSpamSparesCaptures: every search the real SearXNG captures
// answered with results (2024 and 2026: shared/fixtures, else testdata)
// stays on topic, its query as captured.
func TestTemplateSpamSparesCaptures(t *testing.T) {
	judged := 0
	for _, set := range []string{"searxng", "searxng-2026"} {
		// The shared captures, else the package's copy (a part of them).
		dir := filepath.Join("..", "..", "shared", "fixtures", set)
		index, err := os.ReadFile(filepath.Join(dir, "INDEX.tsv"))
		if err != nil {
			dir = filepath.Join("testdata", set)
			if index, err = os.ReadFile(filepath.Join(dir, "INDEX.tsv")); err != nil {
				t.Fatalf("the %s captures: %v", set, err)
			}
		}
		for _, line := range strings.Split(string(index), "\n") {
			file, cmd, ok := strings.Cut(line, "\t")
			m := queryInCommand.FindStringSubmatch(cmd)
			if !ok || m == nil || !strings.Contains(file, "search") {
				continue
			}
			q, err := url.QueryUnescape(m[1])
			if err != nil || strings.TrimSpace(q) == "" {
				continue
			}
			raw, err := os.ReadFile(filepath.Join(dir, file))
			if errors.Is(err, fs.ErrNotExist) {
				continue // not in the package's copy
			} else if err != nil {
				t.Fatal(err)
			}
			c, err := parseCapture(raw)
			if err != nil || c.status != 200 {
				continue
			}
			format := "html"
			if strings.Contains(cmd, "format=json") {
				format = "json"
			}
			v := Classify(answerOf(c, format, q))
			if v.Results == nil || len(v.Results.Results) == 0 {
				continue
			}
			judged++
			rs := v.Results.Results
			if templateSpam(queryWords(q), matchWords(queryWords(q)), rs) || v.Reason == OffTopic {
				t.Errorf("%s (%q): judged %s/%s, template spam %v", file, q, v.Kind, v.Reason,
					templateSpam(queryWords(q), matchWords(queryWords(q)), rs))
			}
		}
	}
	if judged < 10 {
		t.Fatalf("only %d captures with results judged", judged)
	}
	t.Logf("%d captures with results judged", judged)
}

// resultsOf makes n results, the i-th at url (a format of i) with
// title(i) and content(i).
func resultsOf(n int, url string, title, content func(i int) string) []results.Result {
	var rs []results.Result
	for i := range n {
		rs = append(rs, results.Result{URL: fmt.Sprintf(url, i), Title: title(i), Content: content(i)})
	}
	return rs
}

// cycle gives ss in turn.
func cycle(ss ...string) func(int) string { return func(i int) string { return ss[i%len(ss)] } }

// honestBorrowTitles and honestBorrowSnippets are honest results for
// "rust borrow checker": each has words of its own beside the query's,
// and they share no template (the echo and partial-echo rules' tests).
var (
	honestBorrowTitles = []string{"The borrow checker - Rust book", "Rust borrow checker explained", "Fighting the borrow checker",
		"rust-lang/rust: borrow checker issues", "Borrow checker errors and how to fix them"}
	honestBorrowSnippets = []string{"The borrow checker ensures references are valid.", "A guide to lifetimes and the rust borrow checker."}
)

// BenchmarkTemplateSpam: the partial-echo rule on the 10 results of
// BenchmarkClassifyJSON (a series: every title shares one skeleton, so
// the snippets are read too).
func BenchmarkTemplateSpam(b *testing.B) {
	r, err := ParseJSON(tenResultsJSON())
	if err != nil {
		b.Fatal(err)
	}
	asked := queryWords("golang generics")
	words := matchWords(asked)
	b.ReportAllocs()
	for b.Loop() {
		if templateSpam(asked, words, r.Results) {
			b.Fatal("a series judged spam")
		}
	}
}

// TestStopWordsShort: isStopWord looks only at words of four bytes or
// fewer.
func TestStopWordsShort(t *testing.T) {
	for w := range stopWords {
		if len(w) > 4 || !isStopWord([]byte(w)) {
			t.Errorf("stop word %q: %d bytes", w, len(w))
		}
	}
}

// BenchmarkFold: folding a 180-byte snippet, as every topic rule does for
// every result.
func BenchmarkFold(b *testing.B) {
	s := "Generics in Golang arrived with Go 1.18. This tutorial walks through type parameters, constraints, the any and comparable interfaces and when generics make code clearer (part 3)."
	var buf [512]byte
	b.ReportAllocs()
	for b.Loop() {
		_ = appendFold(buf[:0], s)
	}
}
