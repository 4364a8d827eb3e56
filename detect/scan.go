package detect

import (
	"strconv"

	"github.com/tidwall/gjson"
)

// jsonScan reads one JSON document in a single pass, checking it as it
// goes by the rules gjson.Valid applies (RFC 8259's grammar; bytes inside
// strings are not checked as UTF-8), and hands each value it reads to its
// caller as a gjson.Result, with the same Type, Raw, Str and Num gjson's
// ForEach would give it. ParseJSON walks an answer's top level, its results
// and their fields with it, so that an answer is read once: checking it
// first with gjson.Valid and then walking it with ForEach read every
// result four times over (check, the top level's squash, the list's
// squash, the fields). Values below a result's fields (a result's engines,
// an unknown field's object) are checked here and read by gjson from
// their Raw text: they are small.
//
// The first fault stops the scan: ok turns false and every later call
// returns at once. The caller bounds the depth first (tooDeep): skip
// recurses once per level.
type jsonScan struct {
	s  string
	i  int
	ok bool
}

func newScan(s string) *jsonScan { return &jsonScan{s: s, ok: true} }

// fail stops the scan.
func (sc *jsonScan) fail() {
	sc.ok = false
	sc.i = len(sc.s)
}

// peek skips white space and returns the next byte, 0 at the end.
func (sc *jsonScan) peek() byte {
	for sc.i < len(sc.s) {
		switch c := sc.s[sc.i]; c {
		case ' ', '\t', '\n', '\r':
			sc.i++
		default:
			return c
		}
	}
	return 0
}

// end checks that only white space follows.
func (sc *jsonScan) end() {
	if sc.peek() != 0 || sc.i != len(sc.s) {
		sc.fail()
	}
}

// object reads an object, calling field for each member with the scan
// placed on its value; field must read exactly one value (value, skip,
// object or array).
func (sc *jsonScan) object(field func(key string)) {
	if !sc.ok || sc.peek() != '{' {
		sc.fail()
		return
	}
	sc.i++
	if sc.peek() == '}' {
		sc.i++
		return
	}
	for sc.ok {
		if sc.peek() != '"' {
			sc.fail()
			return
		}
		key := sc.str()
		if !sc.ok || sc.peek() != ':' {
			sc.fail()
			return
		}
		sc.i++
		field(key.Str)
		if !sc.ok || !sc.next('}') {
			return
		}
	}
}

// array reads an array, calling item with the scan placed on each
// element; item must read exactly one value.
func (sc *jsonScan) array(item func()) {
	if !sc.ok || sc.peek() != '[' {
		sc.fail()
		return
	}
	sc.i++
	if sc.peek() == ']' {
		sc.i++
		return
	}
	for sc.ok {
		item()
		if !sc.ok || !sc.next(']') {
			return
		}
	}
}

// next reads the comma between two members (true: another follows) or
// the closing byte (false).
func (sc *jsonScan) next(closing byte) bool {
	switch sc.peek() {
	case ',':
		sc.i++
		return true
	case closing:
		sc.i++
		return false
	}
	sc.fail()
	return false
}

// value reads one value of any kind: an object or array is checked and
// given as its Raw text (Type gjson.JSON), as gjson gives it.
func (sc *jsonScan) value() gjson.Result {
	switch c := sc.peek(); c {
	case '{', '[':
		start := sc.i
		sc.skip()
		if !sc.ok {
			return gjson.Result{}
		}
		return gjson.Result{Type: gjson.JSON, Raw: sc.s[start:sc.i]}
	case '"':
		return sc.str()
	case 't', 'f', 'n':
		return sc.literal(c)
	default:
		return sc.number()
	}
}

// skip reads one value without keeping it.
func (sc *jsonScan) skip() {
	switch c := sc.peek(); c {
	case '{':
		sc.object(func(string) { sc.skip() })
	case '[':
		sc.array(sc.skip)
	case '"':
		sc.strEnd()
	case 't', 'f', 'n':
		sc.literal(c)
	default:
		sc.number()
	}
}

// str reads a string; its Str is unescaped as gjson unescapes it.
func (sc *jsonScan) str() gjson.Result {
	start := sc.i
	escaped := sc.strEnd()
	if !sc.ok {
		return gjson.Result{}
	}
	raw := sc.s[start:sc.i]
	if escaped {
		return gjson.Parse(raw)
	}
	return gjson.Result{Type: gjson.String, Raw: raw, Str: raw[1 : len(raw)-1]}
}

// strEnd moves past the string that starts at the scan and reports
// whether it holds an escape.
func (sc *jsonScan) strEnd() (escaped bool) {
	s := sc.s
	i := sc.i + 1
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			sc.i = i + 1
			return escaped
		case c < ' ':
			sc.fail()
			return false
		case c == '\\':
			escaped = true
			if i++; i == len(s) {
				sc.fail()
				return false
			}
			switch s[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(s) || !ishex(s[i+1]) || !ishex(s[i+2]) || !ishex(s[i+3]) || !ishex(s[i+4]) {
					sc.fail()
					return false
				}
				i += 4
			default:
				sc.fail()
				return false
			}
		}
	}
	sc.fail()
	return false
}

func ishex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// literal reads true, false or null.
func (sc *jsonScan) literal(c byte) gjson.Result {
	word, typ := "null", gjson.Null
	switch c {
	case 't':
		word, typ = "true", gjson.True
	case 'f':
		word, typ = "false", gjson.False
	}
	if len(sc.s)-sc.i < len(word) || sc.s[sc.i:sc.i+len(word)] != word {
		sc.fail()
		return gjson.Result{}
	}
	raw := sc.s[sc.i : sc.i+len(word)]
	sc.i += len(word)
	return gjson.Result{Type: typ, Raw: raw}
}

// number reads a number by JSON's grammar (no sign but a leading minus,
// no leading zeros, digits after a point and after an exponent).
func (sc *jsonScan) number() gjson.Result {
	s, start := sc.s, sc.i
	i := start
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(s, i)
	default:
		sc.fail()
		return gjson.Result{}
	}
	if i < len(s) && s[i] == '.' {
		if i++; i == len(s) || s[i] < '0' || s[i] > '9' {
			sc.fail()
			return gjson.Result{}
		}
		i = digits(s, i)
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		if i++; i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i == len(s) || s[i] < '0' || s[i] > '9' {
			sc.fail()
			return gjson.Result{}
		}
		i = digits(s, i)
	}
	sc.i = i
	raw := s[start:i]
	n, _ := strconv.ParseFloat(raw, 64)
	return gjson.Result{Type: gjson.Number, Raw: raw, Num: n}
}

func digits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}
