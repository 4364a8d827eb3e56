package results

import (
	"bytes"
	"encoding/json"
)

// tailKeys are the keys AppendJSONAs writes after the results, in order.
var tailKeys = [][]byte{[]byte(`],"answers":`), []byte(`,"corrections":`), []byte(`,"infoboxes":`),
	[]byte(`,"suggestions":`), []byte(`,"unresponsive_engines":`)}

// AnswersJSON returns the raw answers list of js, an answer as
// AppendJSONAs writes it, without decoding it: found from the end (what
// follows the results is short), and taken only when the keys after it
// follow in order up to the end of js, so that an "answers" key inside an
// unknown field is never taken for it. ok is false when js is not so.
// It lets a face look at a kept answer's answers at the cost of reading
// its tail, not of a decode.
func AnswersJSON(js []byte) (raw []byte, ok bool) {
	start, end, ok := AnswersSpan(js)
	if !ok {
		return nil, false
	}
	return js[start:end], true
}

// AnswersSpan is where AnswersJSON finds the answers list: js[start:end].
func AnswersSpan(js []byte) (start, end int, ok bool) {
	// An "answers" key inside an unknown field after the answers (an
	// infobox's) is passed over: what follows it cannot end where js ends.
	for stop := len(js); ; {
		i := lastKey(js[:stop], tailKeys[0])
		if i < 0 {
			return 0, 0, false
		}
		if start, end, ok := answersAt(js, i); ok {
			return start, end, true
		}
		stop = i
	}
}

// ClassicAnswersJSON rewrites a list of answers, as AppendJSONAs writes
// them, as the Classic shape's list of strings (Answer.Classic), decoding
// only that list: a kept answer with answer objects is served in the
// classic shape without a decode of its results.
func ClassicAnswersJSON(raw []byte) ([]byte, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, err
	}
	answers := make([]Answer, 0, len(items))
	for _, item := range items {
		var a Answer
		if err := json.Unmarshal(item, &a.Answer); err == nil {
			answers = append(answers, a)
			continue
		}
		var known struct{ Answer, URL, Engine, Template *string }
		if err := json.Unmarshal(item, &known); err != nil {
			return nil, err
		}
		for _, f := range []struct{ dst, v *string }{{&a.Answer, known.Answer}, {&a.URL, known.URL}, {&a.Engine, known.Engine}, {&a.Template, known.Template}} {
			if f.v != nil {
				*f.dst = *f.v
			}
		}
		if a.IsTyped() {
			// Its content is in its other fields.
			if err := json.Unmarshal(item, &a.Extra); err != nil {
				return nil, err
			}
		}
		answers = append(answers, a)
	}
	return appendAnswers(nil, answers, Classic), nil
}

// lastKey is bytes.LastIndex(b, key) for a key that is found near the
// end of b: a plain loop, which beats its hashing over a few hundred bytes.
func lastKey(b, key []byte) int {
	for i := len(b) - len(key); i >= 0; i-- {
		if b[i] == key[0] && bytes.HasPrefix(b[i:], key) {
			return i
		}
	}
	return -1
}

// answersAt finds the answers whose key starts at js[i], and the keys
// after them up to the end of js.
func answersAt(js []byte, i int) (start, end int, ok bool) {
	for k, key := range tailKeys {
		if !bytes.HasPrefix(js[i:], key) {
			return 0, 0, false
		}
		from := i + len(key)
		if i = skipValue(js, from); i < 0 {
			return 0, 0, false
		}
		if k == 0 {
			start, end = from, i
		}
	}
	return start, end, i == len(js)-1 && js[i] == '}'
}

// skipString returns the index just past the string that starts at
// js[i] (a quote), or -1 when it does not end.
func skipString(js []byte, i int) int {
	for j := i + 1; j < len(js); j++ {
		switch js[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index just past the value that starts at js[i],
// or -1 when it does not end.
func skipValue(js []byte, i int) int {
	if i >= len(js) {
		return -1
	}
	switch js[i] {
	case '"':
		return skipString(js, i)
	case '[', '{':
		depth := 0
		for j := i; j < len(js); j++ {
			switch js[j] {
			case '"':
				if j = skipString(js, j); j < 0 {
					return -1
				}
				j-- // the loop's j++ lands past the string
			case '[', '{':
				depth++
			case ']', '}':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(js) && js[j] != ',' && js[j] != '}' && js[j] != ']' {
		j++
	}
	return j
}
