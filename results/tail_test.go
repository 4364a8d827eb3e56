package results

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestAnswersJSON: the answers of what AppendJSONAs writes, in every
// shape, are found without a decode, and an "answers" key inside an
// unknown field (of a result, an infobox) is never taken for them.
func TestAnswersJSON(t *testing.T) {
	fake := map[string]json.RawMessage{"x": json.RawMessage(`{"a":[],"answers":[],"corrections":[],"infoboxes":[],"suggestions":[],"unresponsive_engines":[]}`)}
	r := tenResults()
	r.Answers = []Answer{{Answer: "42", URL: "https://a.example/", Template: LegacyAnswer}}
	r.Results[0].Extra = fake
	r.Infoboxes = []Infobox{{Infobox: "box", Extra: fake}}
	for shape, want := range map[Shape]string{
		Full:    `[{"url":"https://a.example/","engine":"","parsed_url":["https","a.example","/","","",""],"template":"answer/legacy.html","answer":"42"}]`,
		Current: `[{"url":"https://a.example/","engine":"","parsed_url":["https","a.example","/","","",""],"template":"answer/legacy.html","answer":"42"}]`,
		Classic: `["42 (https://a.example/)"]`,
	} {
		js := r.AppendJSONAs(nil, shape)
		if got, ok := AnswersJSON(js); !ok || string(got) != want {
			t.Errorf("%s: %s %v, want %s", shape, got, ok, want)
		}
	}
	r.Answers = nil
	if got, ok := AnswersJSON(r.AppendJSON(nil)); !ok || string(got) != "[]" {
		t.Errorf("no answers: %s %v", got, ok)
	}
	for _, bad := range []string{"", "{}", `{"query":"q","results":[],"answers":[]}`, `{"results":[],"answers":["x",`,
		`{"results":[],"answers":[],"corrections":[],"infoboxes":[],"suggestions":[],"unresponsive_engines":[]}x`} {
		if got, ok := AnswersJSON([]byte(bad)); ok {
			t.Errorf("%q: found %s", bad, got)
		}
	}
}

// FuzzAnswersJSON: never panics; on what AppendJSONAs writes it finds
// exactly the answers written; what it finds in anything is a JSON value.
func FuzzAnswersJSON(f *testing.F) {
	r := tenResults()
	r.Answers = []Answer{{Answer: "42", URL: "https://a.example/"}}
	for _, shape := range []Shape{Classic, Current, Full} {
		f.Add(r.AppendJSONAs(nil, shape), "x")
	}
	f.Add([]byte(`{"results":[],"answers":["a\"]"],"corrections":[],"infoboxes":[],"suggestions":[],"unresponsive_engines":[]}`), `"]`)
	f.Fuzz(func(t *testing.T, js []byte, text string) {
		if raw, ok := AnswersJSON(js); ok && !json.Valid(raw) && json.Valid(js) {
			t.Fatalf("found %q in %q", raw, js)
		}
		p := &Page{Query: text, Answers: TextAnswers(text), Suggestions: []string{text}}
		p.Infoboxes = []Infobox{{Infobox: text, Extra: map[string]json.RawMessage{"answers": json.RawMessage(`[]`)}}}
		p.Results = []Result{{URL: "https://a.example/", Extra: map[string]json.RawMessage{"k": AppendString(nil, text)}}}
		p.Answers = append(p.Answers, Answer{Template: WeatherAnswer, URL: "https://w.example/",
			Extra: map[string]json.RawMessage{"current": json.RawMessage(`{"summary":` + string(AppendString(nil, text)) + `}`)}})
		for _, shape := range []Shape{Classic, Current, Full} {
			out := p.AppendJSONAs(nil, shape)
			want := appendAnswers(nil, p.Answers, shape)
			if raw, ok := AnswersJSON(out); !ok || string(raw) != string(want) {
				t.Fatalf("%s: found %s %v, want %s in %s", shape, raw, ok, want, out)
			}
			// Made classic from the list alone, as from the whole (the
			// same strings: invalid UTF-8, written \ufffd, reads back as
			// U+FFFD, which is written as it is).
			classic, err := ClassicAnswersJSON(want)
			var got, wantTexts []string
			if err != nil || json.Unmarshal(classic, &got) != nil ||
				json.Unmarshal(appendAnswers(nil, p.Answers, Classic), &wantTexts) != nil || !slices.Equal(got, wantTexts) {
				t.Fatalf("%s made classic: %s %v, want %q", shape, classic, err, wantTexts)
			}
		}
	})
}
