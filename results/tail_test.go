package results

import (
	"encoding/json"
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
