package results

import "bytes"

// TopLevel returns the raw value of key in the JSON object js, as
// AppendJSONAs writes one (no white space between tokens), without
// decoding it: strings and nested values are skipped byte by byte. ok is
// false when js is not such an object or lacks key. It lets a face look
// at one member of a kept answer (say, whether it has answers) at the
// cost of a scan, not of a decode.
func TopLevel(js []byte, key string) (raw []byte, ok bool) {
	if len(js) < 2 || js[0] != '{' {
		return nil, false
	}
	i := 1
	for i < len(js) && js[i] == '"' {
		end := skipString(js, i)
		if end < 0 || end >= len(js) || js[end] != ':' {
			return nil, false
		}
		k := js[i+1 : end-1]
		start := end + 1
		stop := skipValue(js, start)
		if stop < 0 {
			return nil, false
		}
		if string(k) == key {
			return js[start:stop], true
		}
		if stop >= len(js) || js[stop] != ',' {
			return nil, false
		}
		i = stop + 1
	}
	return nil, false
}

// skipString returns the index just past the string that starts at
// js[i] (a quote), or -1 when it does not end.
func skipString(js []byte, i int) int {
	for j := i + 1; j < len(js); {
		k := bytes.IndexAny(js[j:], `"\`)
		if k < 0 {
			return -1
		}
		j += k
		if js[j] == '\\' {
			j += 2
			continue
		}
		return j + 1
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
