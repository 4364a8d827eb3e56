// Package mdtext holds the few text helpers the reader and its PDF room
// both write Markdown with.
package mdtext

import "strings"

// OneLine is s with its runs of white space folded to one space, trimmed.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// RuneOffset is the byte offset of the n-th rune of s (len(s) past its
// end).
func RuneOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// Fenced writes text as a Markdown code block in lang, with a fence longer
// than any run of backquotes in it.
func Fenced(lang, text string) string {
	text = strings.Trim(text, "\n")
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	return fence + lang + "\n" + text + "\n" + fence
}

// FenceOf returns the fence (``` or ~~~, at least three) a line opens or
// closes, or "".
func FenceOf(line string) string {
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(line) && line[n] == c {
			n++
		}
		if n >= 3 {
			return line[:n]
		}
	}
	return ""
}
