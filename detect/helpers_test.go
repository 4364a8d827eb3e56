package detect

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fixtureNow is the clock of every fixture test (the captures' Date).
var fixtureNow = time.Date(2026, 11, 29, 13, 25, 0, 0, time.UTC)

// capture is one raw `curl -i` answer: status line, headers, body.
type capture struct {
	status int
	header Headers
	body   []byte
}

// loadCapture reads testdata/<name> (name like "searxng/a-search-json.txt").
func loadCapture(t testing.TB, name string) capture {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	c, err := parseCapture(raw)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return c
}

func parseCapture(raw []byte) (capture, error) {
	var c capture
	head, body, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
	if !ok {
		head, body, ok = bytes.Cut(raw, []byte("\n\n"))
		if !ok {
			return c, fmt.Errorf("no end of headers")
		}
	}
	lines := strings.Split(strings.ReplaceAll(string(head), "\r\n", "\n"), "\n")
	fields := strings.Fields(lines[0])
	if len(fields) < 2 || !strings.HasPrefix(fields[0], "HTTP/") {
		return c, fmt.Errorf("bad status line %q", lines[0])
	}
	status, err := strconv.Atoi(fields[1])
	if err != nil {
		return c, fmt.Errorf("bad status %q", fields[1])
	}
	c.status = status
	c.header = Headers{}
	for _, l := range lines[1:] {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			return c, fmt.Errorf("bad header line %q", l)
		}
		c.header[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	c.body = body
	return c, nil
}

// fixtureNames lists every capture under testdata (searxng/ and extra/).
func fixtureNames(t testing.TB) []string {
	t.Helper()
	var names []string
	for _, dir := range []string{"searxng", "extra"} {
		entries, err := os.ReadDir(filepath.Join("testdata", dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".txt") {
				names = append(names, dir+"/"+e.Name())
			}
		}
	}
	sort.Strings(names)
	return names
}

// answerOf builds the Answer of a capture for a search.
func answerOf(c capture, format, query string) Answer {
	return Answer{Status: c.status, Header: c.header, Body: c.body, Format: format, Query: ParseQuery(query), Now: fixtureNow,
		Instance: "http://127.0.0.1:18881/"} // where the captures were made
}

// tenResultsJSON is a realistic 10-result JSON answer for "golang generics".
func tenResultsJSON() []byte {
	var b strings.Builder
	b.WriteString(`{"query": "golang generics", "number_of_results": 0, "results": [`)
	for i := 0; i < 10; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `{"url": "https://site%d.example.org/articles/go/generics-tutorial-%d", "title": "Go generics, part %d: type parameters and constraints", `+
			`"content": "Generics in Golang arrived with Go 1.18. This tutorial walks through type parameters, constraints, the any and comparable interfaces and when generics make code clearer (part %d).", `+
			`"engine": "duckduckgo", "parsed_url": ["https", "site%d.example.org", "/articles/go/generics-tutorial-%d", "", "", ""], "template": "default.html", `+
			`"engines": ["duckduckgo", "brave", "startpage"], "positions": [%d, %d, %d], "score": %g, "category": "general", "publishedDate": null, "thumbnail": ""}`,
			i, i, i+1, i+1, i, i, i+1, i+2, i+1, 3.0/float64(i+1))
	}
	b.WriteString(`], "answers": [], "corrections": [], "infoboxes": [], "suggestions": ["golang generics tutorial", "go type parameters"], "unresponsive_engines": []}`)
	return []byte(b.String())
}

// tenResultsHTML is the captured 2024 results page for "hello world" with
// its result list grown to 10 results.
func tenResultsHTML(t testing.TB) []byte {
	return grownHTML(t, 10)
}

// grownHTML returns the captured results page with n results.
func grownHTML(t testing.TB, n int) []byte {
	t.Helper()
	c := loadCapture(t, "searxng/a-search-html.txt")
	page := string(c.body)
	start := strings.Index(page, `<article class="result`)
	end := strings.LastIndex(page, `</article>`) + len(`</article>`)
	first := page[start : strings.Index(page, `</article>`)+len(`</article>`)]
	var b strings.Builder
	b.WriteString(page[:start])
	for i := 0; i < n; i++ {
		// Each its own, as a real page's results are: the same text
		// around the query on every result is a template (templated).
		r := strings.ReplaceAll(first, "/fake/0/", fmt.Sprintf("/fake/%d/", i))
		r = strings.ReplaceAll(r, "Result 1 for", fmt.Sprintf("Result %d for", i+1))
		r = strings.ReplaceAll(r, "snippet 1:", fmt.Sprintf("snippet %d:", i+1))
		b.WriteString(r)
		b.WriteByte('\n')
	}
	b.WriteString(page[end:])
	return []byte(b.String())
}
