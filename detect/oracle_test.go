package detect

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/searxgate/searxgate/results"
	"github.com/tidwall/gjson"
)

// parseJSONgjson is ParseJSON as it was before jsonScan: gjson.Valid, then
// gjson's ForEach over the top level, the results and their fields, each
// read by the same field readers. It is the oracle the single-pass walk
// is held to.
func parseJSONgjson(body []byte) (*results.Page, error) {
	if tooDeep(body, maxJSONDepth) {
		return nil, fmt.Errorf("%w: nested deeper than %d", ErrNotJSON, maxJSONDepth)
	}
	if !gjson.ValidBytes(body) {
		return nil, fmt.Errorf("%w: invalid JSON", ErrNotJSON)
	}
	// One copy of the body; every string read below points into it or is
	// freshly allocated, never into the caller's buffer.
	doc := gjson.Parse(string(body))
	if !doc.IsObject() {
		return nil, fmt.Errorf("%w: not an object", ErrNotJSON)
	}
	// gjson.GetMany would scan once per key as well; one pass over the
	// top level is cheaper.
	var r results.Page
	seen := false
	var err error
	doc.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "query":
			seen = true
			r.Query = text(v)
		case "number_of_results":
			if v.Type == gjson.Number && !math.IsNaN(v.Num) {
				r.NumberOfResults = v.Int()
			}
		case "results":
			seen = true
			if !v.IsArray() {
				err = fmt.Errorf("%w: results is not a list", ErrNotJSON)
				return false
			}
			r.Results = make([]results.Result, 0, 16)
			v.ForEach(func(_, item gjson.Result) bool {
				if x, ok := readResultGjson(item); ok {
					r.Results = append(r.Results, x)
				}
				return true
			})
		default:
			readTopLevel(&r, k.Str, v)
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	if !seen {
		return nil, fmt.Errorf("%w: neither query nor results", ErrNotJSON)
	}
	sanitize(&r)
	return &r, nil
}

// readResultGjson reads one result object with gjson's ForEach, each
// field by the reader ParseJSON uses. ok is false when it is not an
// object.
func readResultGjson(v gjson.Result) (x results.Result, ok bool) {
	if !v.IsObject() {
		return x, false
	}
	var strs []string
	v.ForEach(func(k, f gjson.Result) bool {
		resultField(&x, k.Str, f, &strs)
		return true
	})
	return x, true
}

// TestParseJSONMatchesGjson: the single-pass reader reads every seed
// body as the gjson walk did, errors included.
func TestParseJSONMatchesGjson(t *testing.T) {
	for _, body := range oracleSeeds(t) {
		sameAsGjson(t, body)
	}
}

// FuzzParseJSONMatchesGjson: the single-pass reader agrees with the gjson
// walk on any body: the same error text, or the same Page.
func FuzzParseJSONMatchesGjson(f *testing.F) {
	for _, body := range oracleSeeds(f) {
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body []byte) { sameAsGjson(t, body) })
}

func sameAsGjson(t *testing.T, body []byte) {
	t.Helper()
	got, gerr := ParseJSON(body)
	want, werr := parseJSONgjson(body)
	if (gerr == nil) != (werr == nil) || gerr != nil && (gerr.Error() != werr.Error() || !errors.Is(gerr, ErrNotJSON)) {
		t.Fatalf("%.200q: error %v, the gjson walk says %v", body, gerr, werr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%.200q: read\n%+v\nthe gjson walk read\n%+v", body, got, want)
	}
}

// oracleSeeds are the captured answers, the hostile one and small bodies
// at the edges of JSON's grammar.
func oracleSeeds(tb testing.TB) [][]byte {
	var out [][]byte
	for _, name := range fixtureNames(tb) {
		out = append(out, loadCapture(tb, name).body)
	}
	out = append(out, []byte(hostileJSON))
	for _, s := range []string{
		``, ` `, `{}`, `[]`, `"x"`, `1`, `null`, `{"results":[]}`, `{"query":"q"}`, `{"results":{}}`, `{"results":5,"query":"q"}`,
		`{"results":[1,"a",null,{"url":"https://a.example/","title":"A"}]}`, ` {"query" : "q" , "results" : [ ] } `,
		`{"query":"q",}`, `{"query":"q"`, `{"query":"q"}x`, `{"results":[1,]}`, `{"results":[01]}`, `{"results":[-]}`,
		`{"results":[1.]}`, `{"results":[1e]}`, `{"results":[1e+]}`, `{"results":[-0.5e-3]}`, `{"results":[tru]}`, `{"results":[nul]}`,
		`{"q\u0075ery":"\u00e9t\u00e9","results":[{"t\u0069tle":"a\"b","url":"https://x.example/\u002f"}]}`,
		`{"query":"\x"}`, `{"query":"\u12"}`, `{"query":"\u00g9"}`, `{"query":"\u00G9"}`, `{"query":"\u00:9"}`, `{"query":"\u00E9\uD83D\uDE00"}`, "{\"query\":\"a\tb\"}", `{"query":"a\/b"}`, `{"results":[{"url":"https://a.example/","url":"https://b.example/"}],"results":[]}`,
		`{"number_of_results":1e400,"query":"q"}`, `{"number_of_results":-0,"query":"q"}`, `{"results":[{"score":"1","positions":[1,2],"engines":["a",1]}]}`,
		`{"infoboxes":[{"infobox":"I","urls":[{"title":"t","url":"https://i.example/"}],"attributes":[{"label":"l","value":"v"}]},3],"query":"q"}`,
		`{"answers":["a",{"answer":"b","url":"https://b.example/"}],"corrections":[{"title":"c"}],"suggestions":["s"],"unresponsive_engines":[["e","timeout"],"f"],"query":"q"}`,
		"{\"query\":\"q\"}\n", "\ufeff{\"query\":\"q\"}",
	} {
		out = append(out, []byte(s))
	}
	return out
}

// TestClassifyKeepsNothingOfTheBody: a verdict reads the same after its
// answer's body is overwritten (the search path gives the body's buffer
// back for the next answer as soon as the verdict is made).
func TestClassifyKeepsNothingOfTheBody(t *testing.T) {
	for _, name := range fixtureNames(t) {
		c := loadCapture(t, name)
		for _, format := range []string{"json", "html"} {
			body := bytes.Clone(c.body)
			a := Answer{Status: c.status, Header: c.header, Body: body, Format: format, Query: ParseQuery("hello world"), Now: fixtureNow}
			v := Classify(a)
			want := Classify(Answer{Status: c.status, Header: c.header, Body: bytes.Clone(c.body), Format: format, Query: ParseQuery("hello world"), Now: fixtureNow})
			for i := range body {
				body[i] = 'x'
			}
			if !reflect.DeepEqual(v, want) {
				t.Errorf("%s as %s: the verdict changed with the body it was made from", name, format)
			}
		}
	}
}
