package detect

import (
	"testing"
)

// BenchmarkClassifyJSON: classify and read a 10-result JSON answer.
func BenchmarkClassifyJSON(b *testing.B) {
	body := tenResultsJSON()
	a := Answer{Status: 200, Header: Headers{"Content-Type": "application/json"}, Body: body, Format: "json", Query: ParseQuery("golang generics"), Now: fixtureNow}
	if v := Classify(a); v.Kind != OK || len(v.Results.Results) != 10 {
		b.Fatalf("setup: %s/%s", v.Kind, v.Reason)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		Classify(a)
	}
}

// BenchmarkClassifyHTML: classify and read a 10-result HTML page (the
// captured simple-theme page, grown to 10 results).
func BenchmarkClassifyHTML(b *testing.B) {
	body := tenResultsHTML(b)
	a := Answer{Status: 200, Header: Headers{"Content-Type": "text/html"}, Body: body, Format: "html", Query: ParseQuery("hello world"), Now: fixtureNow}
	if v := Classify(a); v.Kind != OK || len(v.Results.Results) != 10 {
		b.Fatalf("setup: %s/%s", v.Kind, v.Reason)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		Classify(a)
	}
}

// BenchmarkOnTopic: the off-topic rule on 10 results.
func BenchmarkOnTopic(b *testing.B) {
	r, err := ParseJSON(tenResultsJSON())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if !OnTopic("golang generics", r) {
			b.Fatal("off topic")
		}
	}
}

var sinkQuery Query

// BenchmarkParseQuery is the parse each search makes where its request is
// made: a query without syntax (nearly every one), and one with each kind.
func BenchmarkParseQuery(b *testing.B) {
	for name, q := range map[string]string{"plain": "golang generics tutorial", "syntax": "!!g <850 :de golang !wp generics !!"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkQuery = ParseQuery(q)
			}
		})
	}
}
