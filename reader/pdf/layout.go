package pdf

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/searxgate/searxgate/reader/internal/mdtext"
)

// pdfLine is one line of a page's text: where it starts (x, its baseline
// y) and ends, its size (that of most of its characters) and whether all
// of it is bold, or monospaced.
type pdfLine struct {
	x, y, endX, size float64
	bold, mono       bool
	text             string
}

// linesOf joins a page's runs, in the order the page draws them, into
// lines: a run continues the line when it sits on the same baseline (a
// superscript's rise allowed) to the right of the last run, with a space
// between them when the gap is one.
func linesOf(runs []textRun) []pdfLine {
	var out []pdfLine
	var text []*strings.Builder // out's texts, as they grow
	var lastX float64
	most := 0 // characters of the run that gave the last line its size
	for _, r := range runs {
		n := utf8.RuneCountInString(r.text)
		if len(out) > 0 {
			cur, b := &out[len(out)-1], text[len(text)-1]
			if math.Abs(r.y-cur.y) <= 0.4*max(r.size, cur.size) && r.x >= lastX-r.size {
				gap := r.x - cur.endX
				if (r.space || gap > 0.15*max(r.size, cur.size)) && !strings.HasSuffix(b.String(), " ") && !strings.HasPrefix(r.text, " ") {
					b.WriteByte(' ')
				}
				b.WriteString(r.text)
				cur.endX = max(cur.endX, r.endX)
				cur.bold = cur.bold && (r.bold || !hasLetter(r.text))
				cur.mono = cur.mono && r.mono
				if n > most {
					cur.size, most = r.size, n
				}
				lastX = r.x
				continue
			}
		}
		b := &strings.Builder{}
		b.WriteString(r.text)
		out = append(out, pdfLine{x: r.x, y: r.y, endX: r.endX, size: r.size, bold: r.bold || !hasLetter(r.text), mono: r.mono})
		text, most, lastX = append(text, b), n, r.x
	}
	for i := range out {
		out[i].text = mdtext.OneLine(text[i].String())
	}
	return slices.DeleteFunc(out, func(l pdfLine) bool { return l.text == "" })
}

func hasLetter(s string) bool { return strings.IndexFunc(s, unicode.IsLetter) >= 0 }

// pdfStats are what the document's body text looks like: its size, the
// distance between its lines (as a multiple of the size), and whether it is
// bold.
type pdfStats struct {
	body, leading float64
	bold          bool
}

func statsOf(pages [][]pdfLine) pdfStats {
	sizes := map[float64]int{}
	var bold, all int
	var ratios []float64
	for _, lines := range pages {
		for i, l := range lines {
			n := utf8.RuneCountInString(l.text)
			sizes[math.Round(l.size*2)/2] += n
			if all += n; l.bold {
				bold += n
			}
			if i > 0 {
				p := lines[i-1]
				if gap := p.y - l.y; gap > 0 && gap < 3*l.size && sameSize(p.size, l.size) {
					ratios = append(ratios, gap/l.size)
				}
			}
		}
	}
	st := pdfStats{leading: 1.2, bold: bold*2 > all}
	best := -1
	for s, n := range sizes {
		if n > best || (n == best && s < st.body) {
			st.body, best = s, n
		}
	}
	if len(ratios) > 0 {
		slices.Sort(ratios)
		st.leading = min(max(ratios[len(ratios)/2], 1), 2.5)
	}
	return st
}

func sameSize(a, b float64) bool { return math.Abs(a-b) <= 0.08*max(a, b) }

// pdfBlock is a paragraph, a heading or code: lines close together, of
// one size, bold or not, monospaced or not.
type pdfBlock struct {
	lines      []pdfLine
	size       float64
	bold, mono bool
}

func (b pdfBlock) text() string {
	parts := make([]string, len(b.lines))
	for i, l := range b.lines {
		parts[i] = l.text
	}
	return strings.Join(parts, " ")
}

// blocksOf splits a page's lines into blocks: a new block starts where the
// gap to the line above is wider than the text's leading, where the size,
// the boldness or the font's spacing (code or not) changes, where the text goes back up (a new column), and
// at an indented first line.
func blocksOf(lines []pdfLine, st pdfStats) []pdfBlock {
	var out []pdfBlock
	var left float64
	for i, l := range lines {
		if i > 0 {
			b := &out[len(out)-1]
			p := lines[i-1]
			big := max(p.size, l.size)
			gap := p.y - l.y
			indent := !isItem(b.lines[0].text) && sameSize(l.size, st.body) && indented(l, p, left)
			if gap >= 0.5*big && gap <= 1.3*st.leading*big && sameSize(p.size, l.size) && p.bold == l.bold && p.mono == l.mono && !indent {
				b.lines = append(b.lines, l)
				left = min(left, l.x)
				continue
			}
		}
		out = append(out, pdfBlock{lines: []pdfLine{l}, size: l.size, bold: l.bold, mono: l.mono})
		left = l.x
	}
	return out
}

// indented reports whether l starts a paragraph by its indent: it starts
// right of the block's left edge and of the line above by an em or more
// (by a few ems at most: further is centred text), and does not end where
// the line above does (right-aligned text).
func indented(l, above pdfLine, left float64) bool {
	in := l.x - max(left, above.x)
	return in >= 0.9*l.size && l.x-left <= 6*l.size && math.Abs(l.endX-above.endX) > l.size
}

// heading reports whether b is a heading: short text, larger than the
// body's, or a bold line of its own in a body that is not bold.
func (b pdfBlock) heading(st pdfStats) bool {
	t := b.text()
	n := utf8.RuneCountInString(t)
	if b.mono || !hasLetter(t) || n > 200 || len(b.lines) > 3 {
		return false
	}
	if b.size >= 1.15*st.body {
		return true
	}
	return b.bold && !st.bold && len(b.lines) == 1 && n <= 80 && !strings.HasSuffix(t, ".")
}

// pageNumber is a line that is only a page's number.
var pageNumber = regexp.MustCompile(`(?i)^(?:(?:page|pg\.|p\.)\s*)?[-–—\s]*(?:\d{1,4}|[ivxlc]{1,7})[-–—\s]*(?:(?:of|/)\s*\d{1,4})?$`)

// pdfMarkdown writes the pages' lines as Markdown: each page under a
// "[Page n]" line, headings as ATX headings (the largest size #, the next
// ##, …, bold lines of body size last), paragraphs as one line each (list
// items and numbered references on lines of their own), monospaced lines
// as fenced code. Page numbers and
// the running heads and feet repeated on most pages are left out. It
// returns the title a PDF without one in its Info likely has too: its
// first heading that is not a section's name, or for a manual page the
// line under NAME.
func pdfMarkdown(pages [][]pdfLine) (md, first string) {
	st := statsOf(pages)
	blocks := make([][]pdfBlock, len(pages))
	for i, lines := range pages {
		blocks[i] = blocksOf(lines, st)
	}
	dropRunning(blocks, st)
	levels := headingLevels(blocks, st)
	var b strings.Builder
	named := false // the last block was a manual page's NAME heading
	for i, page := range blocks {
		if i > 0 {
			b.WriteString("\n\n")
		}
		if len(page) == 0 {
			fmt.Fprintf(&b, "[Page %d: no text]", i+1)
			continue
		}
		fmt.Fprintf(&b, "[Page %d]", i+1)
		for j := 0; j < len(page); j++ {
			blk := page[j]
			b.WriteString("\n\n")
			switch {
			case blk.mono:
				k := j + 1
				for k < len(page) && page[k].mono {
					k++
				}
				b.WriteString(codeBlock(page[j:k], st))
				j = k - 1
			case blk.heading(st):
				t := blk.text()
				if first == "" && !sectionName(t) {
					first = t
				}
				named = first == "" && strings.EqualFold(t, "name")
				b.WriteString(strings.Repeat("#", levels(blk)) + " " + t)
			default:
				p := paragraph(blk.lines)
				if named && first == "" && utf8.RuneCountInString(p) <= 200 {
					first = dehyphenate(p) // a manual page's name and what it is
				}
				named = false
				b.WriteString(p)
			}
		}
	}
	return dehyphenate(b.String()), first
}

// sectionName reports whether a heading names a part every document of
// its kind has (a manual page's NAME, a paper's Abstract): not a title.
func sectionName(h string) bool {
	switch strings.ToLower(h) {
	case "name", "synopsis", "description", "options", "abstract", "contents", "table of contents",
		"introduction", "preface", "summary", "overview":
		return true
	}
	return false
}

// codeBlock writes consecutive blocks of monospaced lines as one fenced
// code block, each line indented as far as the page indents it (in
// characters of the font's width), a blank line where the page leaves
// one.
func codeBlock(blocks []pdfBlock, st pdfStats) string {
	left := blocks[0].lines[0].x
	for _, b := range blocks {
		for _, l := range b.lines {
			left = min(left, l.x)
		}
	}
	var lines []string
	var above *pdfLine
	for _, b := range blocks {
		for i := range b.lines {
			l := &b.lines[i]
			if above != nil && above.y-l.y > 1.5*st.leading*l.size {
				lines = append(lines, "")
			}
			indent := min(max(int(math.Round((l.x-left)/(0.6*l.size))), 0), 40)
			lines = append(lines, strings.Repeat(" ", indent)+l.text)
			above = l
		}
	}
	return mdtext.Fenced("", strings.Join(lines, "\n"))
}

// headingLevels ranks the sizes of the document's headings: the largest is
// level 1; bold headings of body size come after the sized ones; none is
// deeper than 4.
func headingLevels(pages [][]pdfBlock, st pdfStats) func(pdfBlock) int {
	var sizes []float64
	for _, page := range pages {
		for _, b := range page {
			if s := math.Round(b.size); b.heading(st) && b.size >= 1.15*st.body && !slices.Contains(sizes, s) {
				sizes = append(sizes, s)
			}
		}
	}
	slices.SortFunc(sizes, func(a, b float64) int { return int(b - a) })
	return func(b pdfBlock) int {
		i := slices.Index(sizes, math.Round(b.size))
		if b.size < 1.15*st.body || i < 0 {
			i = len(sizes)
		}
		return min(i+1, 4)
	}
}

// dropRunning removes page numbers, and the running heads and feet: the
// one-line blocks at the top or the bottom of a page, headings aside, that
// (digits aside) recur on at least three pages and half of them, or that
// start or end with the page's number (as printed: its distance to the
// page's place in the file the same on at least three pages). A page's
// only block is its text, not its head.
func dropRunning(pages [][]pdfBlock, st pdfStats) {
	keys := func(b pdfBlock, page int) []string {
		t := b.text()
		out := []string{strings.Map(func(r rune) rune {
			if unicode.IsDigit(r) {
				return '#'
			}
			return unicode.ToLower(r)
		}, t)}
		if m := edgeNumber.FindStringSubmatch(t); m != nil {
			n, _ := strconv.Atoi(m[1] + m[2])
			out = append(out, fmt.Sprint("page number ", n-page))
		}
		return out
	}
	seen := map[string]int{}
	for i, page := range pages {
		for _, at := range edges(page) {
			for _, k := range keys(page[at], i) {
				seen[k]++
			}
		}
	}
	for i, page := range pages {
		at := edges(page)
		slices.Sort(at)
		for _, j := range slices.Backward(at) {
			ks := keys(page[j], i)
			n := seen[ks[0]]
			running := len(page) > 1 && ((n >= 3 && n*2 >= len(pages)) || (len(ks) > 1 && seen[ks[1]] >= 3))
			if pageNumber.MatchString(page[j].text()) || (running && !page[j].heading(st)) {
				page = slices.Delete(page, j, j+1)
			}
		}
		pages[i] = page
	}
}

// edgeNumber is the number a line starts or ends with.
var edgeNumber = regexp.MustCompile(`^(\d{1,4})\b|\b(\d{1,4})$`)

// edges are the one-line blocks at the top and at the bottom of a page
// (wherever the page draws them).
func edges(page []pdfBlock) []int {
	top, bottom := -1, -1
	for i, b := range page {
		if top < 0 || b.lines[0].y > page[top].lines[0].y {
			top = i
		}
		if bottom < 0 || b.lines[len(b.lines)-1].y < page[bottom].lines[len(page[bottom].lines)-1].y {
			bottom = i
		}
	}
	var out []int
	for _, i := range []int{top, bottom} {
		if i >= 0 && len(page[i].lines) == 1 && !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	return out
}

// bullet is a list item's mark at the start of a line; reference is a
// numbered reference's ("[12] ").
var (
	bullet    = regexp.MustCompile(`^[•◦▪‣●○■·∙–*-]\s+`)
	reference = regexp.MustCompile(`^\[\d{1,4}\]\s`)
)

// lineCut marks, after a line's hyphen, a word cut at the line's end.
const lineCut = '\uE000'

// cutAt is a word cut at a line's end: its two halves.
var cutAt = regexp.MustCompile(`(\p{L}+)-\x{E000}(\p{L}+)`)

// dehyphenate joins the words cut at a line's end whose whole appears in
// md elsewhere ("incre-" and "mental" where "incremental" does); the
// others keep their hyphen ("quarter-diurnal"), as a compound word cut at
// its own hyphen would.
func dehyphenate(md string) string {
	if !strings.ContainsRune(md, lineCut) {
		return md
	}
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(cutAt.ReplaceAllString(md, " "), func(r rune) bool { return !unicode.IsLetter(r) }) {
		seen[strings.ToLower(w)] = true
	}
	md = cutAt.ReplaceAllStringFunc(md, func(m string) string {
		parts := cutAt.FindStringSubmatch(m)
		if seen[strings.ToLower(parts[1]+parts[2])] {
			return parts[1] + parts[2]
		}
		return parts[1] + "-" + parts[2]
	})
	return strings.ReplaceAll(md, string(lineCut), "")
}

// cutWord reports whether prev, ending in a hyphen, and next are one
// lower-case word hyphenated at the line's end.
func cutWord(prev, next string) bool {
	before, _ := utf8.DecodeLastRuneInString(strings.TrimSuffix(prev, "-"))
	after, _ := utf8.DecodeRuneInString(next)
	return unicode.IsLower(before) && unicode.IsLower(after)
}

func isItem(line string) bool { return bullet.MatchString(line) || reference.MatchString(line) }

// paragraph writes a block's lines as one line, each list item (as "- ")
// and reference on a line of its own; a line ending in a hyphen joins the
// next without a space; when a lower-case word was cut there, lineCut
// marks the place for dehyphenate. Markdown's heading and fence marks at the start of
// a line are escaped: they are the PDF's text, not structure.
func paragraph(lines []pdfLine) string {
	var b strings.Builder
	for i, l := range lines {
		t := l.text
		m := bullet.FindString(t)
		switch {
		case i > 0 && m == "" && !reference.MatchString(t):
			prev := lines[i-1].text
			switch {
			case !strings.HasSuffix(prev, "-") || strings.HasSuffix(prev, " -"):
				b.WriteByte(' ')
			case cutWord(prev, t):
				b.WriteRune(lineCut)
			}
			b.WriteString(t)
			continue
		case i > 0:
			b.WriteByte('\n')
		}
		switch {
		case m != "":
			t = "- " + t[len(m):]
		case strings.HasPrefix(t, "#") || mdtext.FenceOf(t) != "":
			b.WriteByte('\\')
		}
		b.WriteString(t)
	}
	return b.String()
}
