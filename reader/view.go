package reader

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/searxgate/searxgate/reader/internal/mdtext"
)

// ErrNoSection: no heading of the page contains the section asked for.
var ErrNoSection = errors.New("no such section")

// ErrPastEnd: StartChar lies past the end of the content.
var ErrPastEnd = errors.New("startChar past the end")

// ErrRange: ParagraphRange does not parse, or starts past the last
// paragraph.
var ErrRange = errors.New("no such paragraphs")

// Heading is one heading of a Markdown page.
type Heading struct {
	Level int    // 1 to 6
	Text  string // without the #s
	At    int    // byte offset of its line
}

// Headings lists the ATX headings of md, outside fenced code blocks.
func Headings(md string) []Heading {
	var out []Heading
	fence := ""
	at := 0
	for line := range strings.Lines(md) {
		start := at
		at += len(line)
		t := strings.TrimRight(line, "\r\n")
		trimmed := strings.TrimLeft(t, " ")
		if len(t)-len(trimmed) > 3 {
			continue
		}
		if f := mdtext.FenceOf(trimmed); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, fence[:1])) == "":
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		level := 0
		for level < len(trimmed) && trimmed[level] == '#' {
			level++
		}
		if level == 0 || level > 6 || (level < len(trimmed) && trimmed[level] != ' ' && trimmed[level] != '\t') {
			continue
		}
		text := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(trimmed[level:]), "#"))
		if text == "" {
			continue
		}
		out = append(out, Heading{Level: level, Text: text, At: start})
	}
	return out
}

// View cuts from p what req asks: its headings, one section, a window of
// characters.
func View(p *Page, req Request) (*Result, error) {
	res := &Result{URL: p.URL, Title: p.Title, Byline: p.Byline, Published: p.Published, SiteName: p.SiteName,
		CanonicalURL: p.Canonical, ContentType: p.ContentType, Pages: p.Pages}
	if req.ReadHeadings {
		heads := Headings(p.Markdown)
		res.Headings = make([]string, 0, len(heads))
		for _, h := range heads {
			res.Headings = append(res.Headings, strings.Repeat("#", h.Level)+" "+h.Text)
		}
		res.Content = strings.Join(res.Headings, "\n")
		res.TotalChars = utf8.RuneCountInString(p.Markdown)
		return res, nil
	}
	text := p.Markdown
	if s := strings.TrimSpace(req.Section); s != "" {
		// Headings only when asked for them or a section: reading a page
		// by windows of characters does not scan it for them.
		heads := Headings(p.Markdown)
		sec, ok := section(p.Markdown, heads, s)
		if !ok {
			return nil, noSection(s, heads)
		}
		text, res.Section = sec, s
	}
	if pr := strings.TrimSpace(req.ParagraphRange); pr != "" {
		paras := Paragraphs(text)
		from, to, err := parseRange(pr, len(paras))
		if err != nil {
			return nil, err
		}
		text = strings.Join(paras[from:to], "\n\n")
		res.TotalParagraphs = len(paras)
		res.Paragraphs = fmt.Sprintf("%d-%d", from+1, to)
	}
	if req.StartChar < 0 || req.MaxLength < 0 {
		return nil, fmt.Errorf("%w: startChar and maxLength must not be negative", ErrPastEnd)
	}
	total := utf8.RuneCountInString(text)
	res.TotalChars, res.StartChar = total, req.StartChar
	if req.StartChar > 0 && req.StartChar >= total {
		return nil, fmt.Errorf("%w: startChar %d, but the content has %d characters", ErrPastEnd, req.StartChar, total)
	}
	from := mdtext.RuneOffset(text, req.StartChar)
	to := len(text)
	if req.MaxLength > 0 {
		to = from + mdtext.RuneOffset(text[from:], req.MaxLength)
	}
	res.Content = text[from:to]
	if to < len(text) {
		res.NextChar = req.StartChar + utf8.RuneCountInString(res.Content)
	}
	return res, nil
}

// section is the part of md from the first heading that contains name
// (case-insensitive) to the next heading of the same or a higher level.
func section(md string, heads []Heading, name string) (string, bool) {
	want := strings.ToLower(name)
	for i, h := range heads {
		if !strings.Contains(strings.ToLower(h.Text), want) {
			continue
		}
		end := len(md)
		for _, next := range heads[i+1:] {
			if next.Level <= h.Level {
				end = next.At
				break
			}
		}
		return strings.TrimSpace(md[h.At:end]), true
	}
	return "", false
}

// noSection says that no heading matched, and which there are.
func noSection(name string, heads []Heading) error {
	if len(heads) == 0 {
		return fmt.Errorf("%w: the page has no headings; read it without section", ErrNoSection)
	}
	names := make([]string, 0, 20)
	for i, h := range heads {
		if i == 20 {
			names = append(names, fmt.Sprintf("… %d more", len(heads)-20))
			break
		}
		names = append(names, fmt.Sprintf("%q", h.Text))
	}
	return fmt.Errorf("%w: no heading contains %q; the headings are %s", ErrNoSection, name, strings.Join(names, ", "))
}

// Paragraphs splits md into its blocks: runs of lines between blank lines,
// a fenced code block (blank lines and all) being one block.
func Paragraphs(md string) []string {
	var out []string
	var cur strings.Builder
	fence := ""
	flush := func() {
		if t := strings.TrimSpace(cur.String()); t != "" {
			out = append(out, t)
		}
		cur.Reset()
	}
	for line := range strings.Lines(md) {
		t := strings.TrimSpace(line)
		if f := mdtext.FenceOf(t); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(t, fence) && strings.TrimSpace(strings.TrimLeft(t, fence[:1])) == "":
				fence = ""
			}
		} else if fence == "" && t == "" {
			flush()
			continue
		}
		cur.WriteString(line)
	}
	flush()
	return out
}

// parseRange reads "3", "3-7" or "10-" (1-based, inclusive) against n
// paragraphs and returns the slice bounds; an end past the last paragraph
// stops at it.
func parseRange(s string, n int) (from, to int, err error) {
	bad := func() (int, int, error) {
		return 0, 0, fmt.Errorf("%w: paragraphRange %q; write \"3\", \"3-7\" or \"10-\" (the content has %d paragraphs)", ErrRange, s, n)
	}
	a, b, dash := strings.Cut(s, "-")
	first, err := strconv.Atoi(strings.TrimSpace(a))
	if err != nil || first < 1 {
		return bad()
	}
	last := first
	if dash {
		if b = strings.TrimSpace(b); b == "" {
			last = n
		} else if last, err = strconv.Atoi(b); err != nil || last < first {
			return bad()
		}
	}
	if first > n {
		return 0, 0, fmt.Errorf("%w: paragraph %d asked, but the content has %d paragraphs", ErrRange, first, n)
	}
	return first - 1, min(last, n), nil
}

// Header is what an agent needs to cite the page, one "Name: value" line
// each: its title, author, date, site, canonical URL (when it differs from
// the URL read), the URL read, and for a PDF the pages read.
func (r *Result) Header() string {
	var b strings.Builder
	line := func(name, v string) {
		if v != "" {
			b.WriteString(name + ": " + v + "\n")
		}
	}
	line("Title", r.Title)
	line("Author", r.Byline)
	line("Published", r.Published)
	line("Site", r.SiteName)
	if r.CanonicalURL != r.URL {
		line("Canonical URL", r.CanonicalURL)
	}
	line("URL", r.URL)
	line("Pages", r.Pages)
	return strings.TrimRight(b.String(), "\n")
}
