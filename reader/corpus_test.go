package reader

import (
	"context"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/searxgate/searxgate/reader/pdf/pdftest"
)

var update = flag.Bool("update", false, "rewrite the corpus' expected Markdown (testdata/corpus/*.md)")

// corpus are real-shaped pages (a news article, a blog post, a div-layout
// docs page, a forum thread, a JSON answer, plain text, a paper as a PDF)
// with the content type each is served with; testdata/corpus/<file>.md is
// what an agent reads of each: the citation header, a blank line, the
// content. paper.pdf is written by pdftest.Paper (reader/pdf/pdftest).
var corpus = []struct{ file, ctype string }{
	{"news.html", "text/html; charset=UTF-8"},
	{"blog.html", "text/html"},
	{"docs.html", "text/html; charset=utf-8"},
	{"forum.html", "text/html"},
	{"api.json", "application/json"},
	{"notes.txt", "text/plain; charset=utf-8"},
	{"paper.pdf", "application/pdf"},
}

// readCorpus reads every corpus page through the whole reader (fetch,
// content type, extraction).
func readCorpus(t *testing.T) map[string]*Result {
	t.Helper()
	mux := http.NewServeMux()
	for _, c := range corpus {
		body, err := os.ReadFile(filepath.Join("testdata/corpus", c.file))
		if err != nil {
			t.Fatal(err)
		}
		mux.HandleFunc("/"+c.file, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", c.ctype)
			_, _ = w.Write(body)
		})
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	// Port 80 in the URL (the test dialer sends it to srv): the links the
	// Markdown makes absolute are the same on every run.
	r, _ := publicReader(t, srv, func(c *Config) { c.PerHostPerMinute = 1000 })
	out := map[string]*Result{}
	for _, c := range corpus {
		res, err := r.Read(context.Background(), Request{URL: "http://public.test/" + c.file})
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		out[c.file] = res
	}
	return out
}

// TestCorpus compares what an agent reads of each corpus page with its
// expected Markdown (go test -run TestCorpus ./reader -args -update
// rewrites them, and writes paper.pdf again from pdftest.Paper first).
func TestCorpus(t *testing.T) {
	if *update {
		if err := os.WriteFile("testdata/corpus/paper.pdf", pdftest.Paper().Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := readCorpus(t)
	for _, c := range corpus {
		res := read[c.file]
		got := res.Header() + "\n\n" + res.Content + "\n"
		golden := filepath.Join("testdata/corpus", strings.TrimSuffix(c.file, filepath.Ext(c.file))+".md")
		if *update {
			if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (-args -update writes it)", err)
		}
		if got != string(want) {
			t.Errorf("%s differs from %s:\n--- got\n%s\n--- want\n%s", c.file, golden, got, want)
		}
	}
}

// TestCorpusCites: what each page must give an agent that cites it, and
// what it must not keep, whatever else the expected Markdown says.
func TestCorpusCites(t *testing.T) {
	read := readCorpus(t)
	for _, tc := range []struct {
		file                                string
		title, byline, date, site, canonURL string
		has, hasNot                         []string
	}{
		{file: "news.html", title: "Council approves new tram line after 5 > 3 vote – The Riverside Courier",
			byline: "Priya Natarajan", date: "2024-03-14", site: "The Riverside Courier",
			canonURL: "https://www.riversidecourier.example/news/2024/03/council-approves-tram-line/",
			has:      []string{"# Council approves new tram line after 5 > 3 vote", "the vote of 5 > 3 did not", "| Central <> Harbour Road", "£240\u00a0million", "8\u00a0a.m. & the tram"},
			hasNot:   []string{"&gt;", "&lt;", "&amp;", "SPONSORED", "Riverside Energy", "Advertisement", "Skip to content", "inbox", "cookies", "Tram consultation"}},
		{file: "blog.html", title: "Why Vec<T> grows by doubling | Ferris Notes", byline: "Sam Okafor", date: "2023-11-02",
			site: "Ferris Notes", canonURL: "https://ferrisnotes.example/posts/vec-growth/",
			has:    []string{"`Vec<T>`", "`a < b && b > c`", "```rust\nfn grow_amortized(&mut self", "-> Result<(), TryReserveError>", "```shell\n$ cargo run", "cap 0 -> 4"},
			hasNot: []string{"&gt;", "&lt;", "&amp;", "Powered by"}},
		{file: "docs.html", title: "Configuration reference — tidewatch 2.3 documentation",
			canonURL: "https://docs.tidewatch.example/en/stable/config.html",
			has:      []string{"# Configuration reference\n", "## Stations\n", "```toml\n[stations.dover]\nid = \"0089\"", "values < 1m are refused", "level > this"},
			hasNot:   []string{"&gt;", "&lt;", "¶", "Quick start", "Python API", "Copyright", "Previous"}},
		{file: "forum.html", title: "Router drops Wi-Fi every night at 3 a.m. - Support - HomeNet Community",
			byline: "lena_k", date: "2024-06-09", site: "HomeNet Community",
			canonURL: "https://community.homenet.example/t/router-drops-wi-fi-every-night-at-3-a-m/18842",
			has:      []string{"# Router drops Wi-Fi every night at 3 a.m.", "ch 52 -> switching", "**Wireless > 5 GHz > Channel**", "channel 40"},
			hasNot:   []string{"&gt;", "MeshPro", "Promoted", "Powered by Discourse"}},
		{file: "api.json", has: []string{"```json\n{\n  \"name\": \"tidewatch\",\n", "\"name\": \"Calais <FR>\"", "\"note\": \"levels & times are UTC\"\n}\n```"}},
		{file: "notes.txt", has: []string{"TIDEWATCH RELEASE NOTES\n=======================\n", "intervals < 1m", `"&" or <angle brackets>`}},
		{file: "paper.pdf", title: "Harmonic Tide Prediction for Small Harbours Without a Tide Gauge",
			byline: "Mara Lindqvist, Tomás Ferreira", date: "2024-05-21",
			has: []string{"[Page 1]\n\n# Harmonic Tide Prediction for Small Harbours Without a Tide Gauge\n\nMara Lindqvist and Tomás Ferreira\n",
				"### Abstract\n\nSmall harbours", "a level < 1 m & > 5 m above it", "“mean”", "\n\n## 2 Method\n\n### 2.1 Data\n",
				"\n- levels read from a tide staff at each harbour, by the harbour master, over fourteen days in spring",
				"a lag per constituent, by least squares over the staff readings.",
				"```\ntidefit --station dover --staff readings.csv \\\n    --constituents", "\n[2] Pugh, D."},
			hasNot: []string{"\n\n1\n", "\n\n2\n", "\n3\n", "\\0", "\ufffd", "amplitudesand"}},
	} {
		p := read[tc.file]
		if p.Title != tc.title || p.Byline != tc.byline || p.Published != tc.date || p.SiteName != tc.site || p.CanonicalURL != tc.canonURL {
			t.Errorf("%s: title %q byline %q date %q site %q canonical %q", tc.file, p.Title, p.Byline, p.Published, p.SiteName, p.CanonicalURL)
		}
		for _, want := range tc.has {
			if !strings.Contains(p.Content, want) {
				t.Errorf("%s lacks %q:\n%s", tc.file, want, p.Content)
			}
		}
		for _, no := range tc.hasNot {
			if strings.Contains(p.Content, no) {
				t.Errorf("%s keeps %q:\n%s", tc.file, no, p.Content)
			}
		}
	}
}
