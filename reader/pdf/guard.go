package pdf

import (
	"bytes"
	"errors"
	"strconv"
)

// The library trusts some numbers in a PDF to size what it allocates, or
// how long it loops without reading the file: a cross-reference section's
// first object and its count, an xref stream's /Size, /Index and /W, an
// object stream's /N, and in a ToUnicode map the count before each
// begin…char or begin…range. A file that makes any of them larger than a
// real one would (more objects than a file of its size holds, a field
// wider than a megabyte, or none at all, more entries than the spec's 100
// a block, a hundred times over) would have it allocate gigabytes or spin:
// such a file is refused before the library sees it.
var errPDFBomb = errors.New("its cross-reference numbers are larger than any real PDF's")

// pdfSane checks the numbers above in body, its names read as the
// library reads them (a #xx escape is the byte xx: /S#69ze is /Size).
func pdfSane(body []byte) error {
	limit := max(1<<17, len(body)/4)
	body = unescapeNames(body)
	for _, key := range []string{"/Size", "/N"} {
		for at := range occurrences(body, key) {
			if nums := numbers(body[at:], 1); len(nums) == 1 && nums[0] > limit {
				return errPDFBomb
			}
		}
	}
	for at := range occurrences(body, "/Index") {
		if rest, ok := bytes.CutPrefix(bytes.TrimLeft(body[at:], " \t\r\n"), []byte("[")); ok {
			nums := numbers(rest, 64)
			for i := 0; i+1 < len(nums); i += 2 {
				if nums[i]+nums[i+1] > limit {
					return errPDFBomb
				}
			}
		}
	}
	for at := range occurrences(body, "/W") {
		if rest, ok := bytes.CutPrefix(bytes.TrimLeft(body[at:], " \t\r\n"), []byte("[")); ok {
			// An xref stream's field widths (a CID font's /W, an array
			// of widths, reads as more than three numbers or as widths).
			if w := numbers(rest, 4); len(w) == 3 && bytes.HasPrefix(bytes.TrimLeft(afterNumbers(rest, 3), " \t\r\n"), []byte("]")) &&
				(w[0]+w[1]+w[2] == 0 || max(w[0], w[1], w[2]) > 1<<20) {
				return errPDFBomb
			}
		}
	}
	return xrefSane(body, limit)
}

// xrefSane checks the subsection headers ("first count") of each
// cross-reference table in body, read as the library reads them: tokens
// between any whitespace and comments, from the "xref" line to its
// trailer (or the next table: no byte is read twice).
func xrefSane(body []byte, limit int) error {
	var starts []int
	for at := range occurrences(body, "xref") {
		if i := at - len("xref"); i == 0 || body[i-1] == '\n' || body[i-1] == '\r' { // not startxref
			starts = append(starts, at)
		}
	}
	for i, at := range starts {
		end := len(body)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		section := body[at:end]
		if t := bytes.Index(section, []byte("trailer")); t >= 0 {
			section = section[:t]
		}
		toks := tokens(section)
		for len(toks) >= 2 {
			first, count := atoi(toks[0]), atoi(toks[1])
			if first+count > limit {
				return errPDFBomb
			}
			toks = toks[min(len(toks), 2+3*count):]
		}
	}
	return nil
}

// tokens splits b at whitespace, dropping comments (% to the end of the
// line).
func tokens(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		b = bytes.TrimLeft(b, " \t\r\n\f\x00")
		switch {
		case len(b) == 0:
		case b[0] == '%':
			if i := bytes.IndexAny(b, "\r\n"); i >= 0 {
				b = b[i:]
			} else {
				b = nil
			}
		default:
			i := bytes.IndexAny(b, " \t\r\n\f\x00%")
			if i < 0 {
				i = len(b)
			}
			out = append(out, b[:i])
			b = b[i:]
		}
	}
	return out
}

// cmapSane checks the counts of a ToUnicode map's blocks.
func cmapSane(data []byte) bool {
	for _, key := range []string{"beginbfchar", "beginbfrange", "begincidchar", "begincidrange", "begincodespacerange",
		"beginnotdefchar", "beginnotdefrange"} {
		for at := range occurrences(data, key) {
			before := bytes.TrimRight(data[:at-len(key)], " \t\r\n")
			i := len(before)
			for i > 0 && before[i-1] >= '0' && before[i-1] <= '9' {
				i--
			}
			if atoi(before[i:]) > 10_000 {
				return false
			}
		}
	}
	return true
}

// occurrences yields the offset just past each occurrence of key in b
// that a name or a keyword ends at (not /Sizes, not /Name).
func occurrences(b []byte, key string) func(func(int) bool) {
	return func(yield func(int) bool) {
		k := []byte(key)
		for off := 0; ; {
			i := bytes.Index(b[off:], k)
			if i < 0 {
				return
			}
			at := off + i + len(k)
			off = at
			if at < len(b) && !delimiter(b[at]) {
				continue
			}
			if !yield(at) {
				return
			}
		}
	}
}

func delimiter(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', '\f', 0, '[', ']', '<', '>', '(', ')', '/', '%', '{', '}':
		return true
	}
	return false
}

// numbers reads up to n whitespace-separated non-negative integers at the
// start of b.
func numbers(b []byte, n int) []int {
	var out []int
	for len(out) < n {
		b = bytes.TrimLeft(b, " \t\r\n")
		i := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == 0 {
			break
		}
		out = append(out, atoi(b[:i]))
		b = b[i:]
	}
	return out
}

// afterNumbers is b past its first n integers.
func afterNumbers(b []byte, n int) []byte {
	for range n {
		b = bytes.TrimLeft(b, " \t\r\n")
		i := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		b = b[i:]
	}
	return b
}

// atoi reads a decimal count; one too long to be a count is larger than
// any limit.
func atoi(b []byte) int {
	if len(b) > 9 {
		return 1 << 40
	}
	n, _ := strconv.Atoi(string(b))
	return n
}

// unescapeNames is b with the #xx escapes in its names decoded, or b
// itself when it has none. Only the bytes after a / up to a delimiter
// are names; a # anywhere else is left as it is.
func unescapeNames(b []byte) []byte {
	if !bytes.Contains(b, []byte("#")) {
		return b
	}
	out := make([]byte, 0, len(b))
	inName := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '/':
			inName = true
		case inName && delimiter(c):
			inName = false
		case inName && c == '#' && i+2 < len(b) && hexDigit(b[i+1]) && hexDigit(b[i+2]):
			v, _ := strconv.ParseUint(string(b[i+1:i+3]), 16, 8)
			out = append(out, byte(v))
			i += 2
			continue
		}
		out = append(out, c)
	}
	return out
}

func hexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
