package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// maxBody bounds a door's JSON request body.
const maxBody = 64 << 10

// fields is a JSON object's members, read one by one with their type
// checked: a member of the wrong type is an error naming it, an absent or
// null one is the default, and members nobody reads are ignored (as the
// real APIs ignore them).
type fields map[string]json.RawMessage

// readFields reads a request body as a JSON object.
func readFields(body []byte) (fields, error) {
	if len(body) > maxBody {
		return nil, fmt.Errorf("the request body is larger than %d bytes", maxBody)
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return nil, errors.New("the request body must be a JSON object")
	}
	var f fields
	if err := json.Unmarshal(body, &f); err != nil {
		return nil, errors.New("the request body is not valid JSON")
	}
	return f, nil
}

// raw is member name, or nil when absent or null.
func (f fields) raw(name string) json.RawMessage {
	v, ok := f[name]
	if !ok || string(v) == "null" {
		return nil
	}
	return v
}

func typeErr(name, want string) error {
	return fmt.Errorf("%s must be %s", name, want)
}

// str reads a string member.
func (f fields) str(name string) (string, error) {
	v := f.raw(name)
	if v == nil {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", typeErr(name, "a string")
	}
	return s, nil
}

// integer reads a whole number member in [lo, hi]; def when absent.
func (f fields) integer(name string, def, lo, hi int) (int, error) {
	v := f.raw(name)
	if v == nil {
		return def, nil
	}
	var n float64
	if err := json.Unmarshal(v, &n); err != nil || n != math.Trunc(n) {
		return 0, typeErr(name, "a whole number")
	}
	if n < float64(lo) || n > float64(hi) {
		return 0, fmt.Errorf("%s must be between %d and %d", name, lo, hi)
	}
	return int(n), nil
}

// boolean reads a true/false member.
func (f fields) boolean(name string) (bool, error) {
	v := f.raw(name)
	if v == nil {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(v, &b); err != nil {
		return false, typeErr(name, "true or false")
	}
	return b, nil
}

// boolOrWord reads a member that is true/false or one of words: false
// is "", true is words[0].
func (f fields) boolOrWord(name string, words ...string) (string, error) {
	v := f.raw(name)
	if v == nil {
		return "", nil
	}
	var b bool
	if json.Unmarshal(v, &b) == nil {
		if b {
			return words[0], nil
		}
		return "", nil
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		for _, w := range words {
			if s == w {
				return s, nil
			}
		}
	}
	return "", typeErr(name, fmt.Sprintf("true, false or one of %q", words))
}

// strings reads a list of strings; a single string is a list of one.
func (f fields) strings(name string, most int) ([]string, error) {
	v := f.raw(name)
	if v == nil {
		return nil, nil
	}
	var one string
	if json.Unmarshal(v, &one) == nil {
		return []string{one}, nil
	}
	var list []string
	if err := json.Unmarshal(v, &list); err != nil {
		return nil, typeErr(name, "a list of strings")
	}
	if len(list) > most {
		return nil, fmt.Errorf("%s holds %d entries; at most %d", name, len(list), most)
	}
	return list, nil
}

// oneOf reads a string member that must be one of words ("" when absent).
func (f fields) oneOf(name string, words ...string) (string, error) {
	s, err := f.str(name)
	if err != nil || s == "" {
		return "", err
	}
	for _, w := range words {
		if s == w {
			return s, nil
		}
	}
	return "", typeErr(name, fmt.Sprintf("one of %q", words))
}
