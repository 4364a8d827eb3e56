package results

import (
	"fmt"
	"testing"
)

// tenResults is a realistic 10-result answer for "golang generics", as
// detect reads it from SearXNG's JSON (its tenResultsJSON): parsed_url
// rebuilt from url, publishedDate and thumbnail present but empty.
func tenResults() *Page {
	r := &Page{Query: "golang generics", Suggestions: []string{"golang generics tutorial", "go type parameters"}}
	for i := range 10 {
		host, path := fmt.Sprintf("site%d.example.org", i), fmt.Sprintf("/articles/go/generics-tutorial-%d", i)
		x := Result{
			URL:   "https://" + host + path,
			Title: fmt.Sprintf("Go generics, part %d: type parameters and constraints", i+1),
			Content: fmt.Sprintf("Generics in Golang arrived with Go 1.18. This tutorial walks through type parameters, constraints, "+
				"the any and comparable interfaces and when generics make code clearer (part %d).", i+1),
			Engine:    "duckduckgo",
			ParsedURL: []string{"https", host, path, "", "", ""},
			Template:  "default.html",
			Engines:   []string{"duckduckgo", "brave", "startpage"},
			Positions: []int{i + 1, i + 2, i + 1},
			Score:     3.0 / float64(i+1),
			Category:  "general",
		}
		x.MarkEmpty(HasPublishedDate | HasThumbnail)
		r.Results = append(r.Results, x)
	}
	return r
}

// BenchmarkAppendJSON: write a 10-result answer as SearXNG JSON into a
// reused buffer.
func BenchmarkAppendJSON(b *testing.B) {
	r := tenResults()
	buf := r.AppendJSON(nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = r.AppendJSON(buf[:0])
	}
}

// BenchmarkAnswersJSON: find the answers of a kept 10-result answer, as
// the JSON face does on every cache hit to choose between serving it as
// it is and writing it again.
func BenchmarkAnswersJSON(b *testing.B) {
	js := tenResults().AppendJSON(nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := AnswersJSON(js); !ok {
			b.Fatal("no answers found")
		}
	}
}
