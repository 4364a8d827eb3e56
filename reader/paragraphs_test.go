package reader

import (
	"errors"
	"strings"
	"testing"
)

const paraPage = "# Title\n\nFirst paragraph,\non two lines.\n\n## Code\n\n```go\nfunc f() {\n\n\treturn\n}\n```\n\nAfter the code.\n\n\n- a list\n- of two\n\n## End\n\nLast one."

func TestParagraphs(t *testing.T) {
	got := Paragraphs(paraPage)
	want := []string{"# Title", "First paragraph,\non two lines.", "## Code", "```go\nfunc f() {\n\n\treturn\n}\n```",
		"After the code.", "- a list\n- of two", "## End", "Last one."}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestParagraphRange(t *testing.T) {
	p := &Page{URL: "https://x.example/", Markdown: paraPage}
	for _, tc := range []struct {
		req     Request
		content string
		paras   string
		total   int
		err     error
		errSays string
	}{
		{req: Request{ParagraphRange: "2"}, content: "First paragraph,\non two lines.", paras: "2-2", total: 8},
		{req: Request{ParagraphRange: " 4 - 5 "}, content: "```go\nfunc f() {\n\n\treturn\n}\n```\n\nAfter the code.", paras: "4-5", total: 8},
		{req: Request{ParagraphRange: "7-"}, content: "## End\n\nLast one.", paras: "7-8", total: 8},
		{req: Request{ParagraphRange: "8-100"}, content: "Last one.", paras: "8-8", total: 8},
		{req: Request{ParagraphRange: "2-3", MaxLength: 5}, content: "First", paras: "2-3", total: 8},
		{req: Request{ParagraphRange: "2", Section: "code"}, content: "```go\nfunc f() {\n\n\treturn\n}\n```", paras: "2-2", total: 4},
		{req: Request{ParagraphRange: "9"}, err: ErrRange, errSays: "the content has 8 paragraphs"},
		{req: Request{ParagraphRange: "0"}, err: ErrRange},
		{req: Request{ParagraphRange: "5-3"}, err: ErrRange},
		{req: Request{ParagraphRange: "one"}, err: ErrRange, errSays: `"3-7"`},
		{req: Request{ParagraphRange: "-3"}, err: ErrRange},
	} {
		res, err := View(p, tc.req)
		if tc.err != nil {
			if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.errSays) {
				t.Errorf("%+v: error %v, want %v saying %q", tc.req, err, tc.err, tc.errSays)
			}
			continue
		}
		if err != nil {
			t.Errorf("%+v: %v", tc.req, err)
			continue
		}
		if res.Content != tc.content || res.Paragraphs != tc.paras || res.TotalParagraphs != tc.total {
			t.Errorf("%+v: %q %q of %d, want %q %q of %d", tc.req, res.Content, res.Paragraphs, res.TotalParagraphs,
				tc.content, tc.paras, tc.total)
		}
	}
}
