package pdf

import (
	"bytes"
	"encoding/hex"
	"unicode/utf16"
)

// toUnicode reads a ToUnicode CMap's bfchar and bfrange blocks: the text
// of each code. The PDF spec puts this map before the font's encoding
// when text is extracted: groff's fonts, for one, name their hyphen
// "minus" in the encoding and map it to "-" here. Codes are read as the
// numbers their bytes make, whatever the code space says (groff writes a
// two-byte code space for one-byte fonts). At most maxFontCodes*32 codes
// are read: a range wider than that is skipped.
func toUnicode(data []byte) map[int]string {
	out := map[int]string{}
	toks := cmapTokens(data)
	for i := 0; i < len(toks); i++ {
		switch string(toks[i]) {
		case "beginbfchar":
			for i++; i+1 < len(toks) && string(toks[i]) != "endbfchar"; i += 2 {
				src, ok1 := hexOf(toks[i])
				dst, ok2 := hexOf(toks[i+1])
				if ok1 && ok2 {
					out[codeOf(src)] = utf16Text(dst)
				}
			}
		case "beginbfrange":
			for i++; i+2 < len(toks) && string(toks[i]) != "endbfrange"; {
				lo, ok1 := hexOf(toks[i])
				hi, ok2 := hexOf(toks[i+1])
				if !ok1 || !ok2 {
					i++
					continue
				}
				a, b := codeOf(lo), codeOf(hi)
				i += 2
				if string(toks[i]) == "[" {
					j := i + 1
					for c := a; j < len(toks) && string(toks[j]) != "]"; j, c = j+1, c+1 {
						if dst, ok := hexOf(toks[j]); ok && c <= b && len(out) < maxFontCodes*32 {
							out[c] = utf16Text(dst)
						}
					}
					i = j + 1
					continue
				}
				dst, ok := hexOf(toks[i])
				i++
				if !ok || b < a || b-a > maxFontCodes*32 || len(dst) == 0 {
					continue
				}
				for c := a; c <= b && len(out) < maxFontCodes*32; c++ {
					// Each next code's text is the first's with its last
					// unit counted up.
					d := bytes.Clone(dst)
					d[len(d)-1] += byte(c - a)
					out[c] = utf16Text(d)
				}
			}
		}
	}
	return out
}

// cmapTokens splits a CMap into hex strings (with their <>), brackets and
// other tokens; comments and literal strings are skipped.
func cmapTokens(b []byte) [][]byte {
	var out [][]byte
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == 0:
			i++
		case c == '%':
			for i < len(b) && b[i] != '\n' && b[i] != '\r' {
				i++
			}
		case c == '<' && i+1 < len(b) && b[i+1] == '<', c == '>' && i+1 < len(b) && b[i+1] == '>':
			i += 2
		case c == '<':
			j := bytes.IndexByte(b[i:], '>')
			if j < 0 {
				return out
			}
			out = append(out, b[i:i+j+1])
			i += j + 1
		case c == '[' || c == ']':
			out = append(out, b[i:i+1])
			i++
		case c == '(':
			depth := 0
			for ; i < len(b); i++ {
				if b[i] == '\\' {
					i++
					continue
				}
				if b[i] == '(' {
					depth++
				} else if b[i] == ')' {
					if depth--; depth == 0 {
						i++
						break
					}
				}
			}
		default:
			j := i
			for j < len(b) && !delimiter(b[j]) {
				j++
			}
			if j == i {
				j++
			}
			out = append(out, b[i:j])
			i = j
		}
	}
	return out
}

// hexOf is the bytes of a hex string token <…>.
func hexOf(tok []byte) ([]byte, bool) {
	if len(tok) < 2 || tok[0] != '<' || tok[len(tok)-1] != '>' {
		return nil, false
	}
	h := bytes.Map(func(r rune) rune {
		if r == ' ' || r == '\n' || r == '\r' || r == '\t' {
			return -1
		}
		return r
	}, tok[1:len(tok)-1])
	if len(h)%2 == 1 {
		h = append(h, '0')
	}
	out := make([]byte, len(h)/2)
	if _, err := hex.Decode(out, h); err != nil {
		return nil, false
	}
	return out, true
}

// codeOf is the number a code's bytes make (at most four of them).
func codeOf(b []byte) int {
	n := 0
	for _, c := range b[:min(len(b), 4)] {
		n = n<<8 | int(c)
	}
	return n
}

// utf16Text decodes UTF-16BE text.
func utf16Text(b []byte) string {
	units := make([]uint16, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		units = append(units, uint16(b[i])<<8|uint16(b[i+1]))
	}
	return string(utf16.Decode(units))
}
