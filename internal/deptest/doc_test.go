package deptest

import (
	"go/doc/comment"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Package docs stay short and plain: a doc.go averages at most
// maxWordsPerSentence words a sentence and says at most maxDocWords words.
const (
	maxWordsPerSentence = 22
	maxDocWords         = 500
)

// TestDocsShort walks the module's doc.go files and measures each package
// comment's prose: paragraphs and list items, not headings or code.
func TestDocsShort(t *testing.T) {
	root := filepath.Join("..", "..")
	seen := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "out") {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() != "doc.go" {
			return nil
		}
		seen++
		text, err := packageDoc(path)
		if err != nil {
			return err
		}
		words, sentences := measure(text)
		if sentences == 0 {
			t.Errorf("%s: no package comment", path)
			return nil
		}
		avg := float64(words) / float64(sentences)
		t.Logf("%s: %d words, %d sentences, %.1f words a sentence", path, words, sentences, avg)
		if avg > maxWordsPerSentence {
			t.Errorf("%s averages %.1f words a sentence, want at most %d: write shorter sentences",
				path, avg, maxWordsPerSentence)
		}
		if words > maxDocWords {
			t.Errorf("%s has %d words, want at most %d: move what belongs to one type to its comment",
				path, words, maxDocWords)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 10 {
		t.Fatalf("found %d doc.go files under %s, want the module's (at least 10)", seen, root)
	}
}

// packageDoc returns the package comment of the Go file at path.
func packageDoc(path string) (string, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		return "", err
	}
	if f.Doc == nil {
		return "", nil
	}
	return f.Doc.Text(), nil
}

// measure counts the words and sentences of a doc comment's prose.
// A sentence ends at '.', '!' or '?' closing a word, at the end of a
// paragraph and at the end of a list item; headings and code blocks
// are left out.
func measure(text string) (words, sentences int) {
	var p comment.Parser
	for _, b := range p.Parse(text).Content {
		switch b := b.(type) {
		case *comment.Paragraph:
			w, s := measureText(plain(b.Text))
			words, sentences = words+w, sentences+s
		case *comment.List:
			for _, item := range b.Items {
				for _, ib := range item.Content {
					if para, ok := ib.(*comment.Paragraph); ok {
						w, s := measureText(plain(para.Text))
						words, sentences = words+w, sentences+s
					}
				}
			}
		}
	}
	return words, sentences
}

// measureText counts one paragraph: its last sentence ends with it.
func measureText(s string) (words, sentences int) {
	open := false
	for _, w := range strings.Fields(s) {
		if !strings.ContainsFunc(w, isWordRune) {
			continue
		}
		words++
		open = true
		if endsSentence(w) {
			sentences++
			open = false
		}
	}
	if open {
		sentences++
	}
	return words, sentences
}

func isWordRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

// endsSentence reports whether word closes a sentence: it ends in '.', '!'
// or '?' (before any closing quote or bracket) and is not an abbreviation.
func endsSentence(word string) bool {
	w := strings.TrimRight(word, `)"'”’]`)
	switch strings.ToLower(w) {
	case "e.g.", "i.e.", "etc.", "vs.", "cf.":
		return false
	}
	return strings.HasSuffix(w, ".") || strings.HasSuffix(w, "!") || strings.HasSuffix(w, "?")
}

// plain flattens a paragraph's inline text.
func plain(texts []comment.Text) string {
	var b strings.Builder
	for _, t := range texts {
		switch t := t.(type) {
		case comment.Plain:
			b.WriteString(string(t))
		case comment.Italic:
			b.WriteString(string(t))
		case *comment.Link:
			b.WriteString(plain(t.Text))
		case *comment.DocLink:
			b.WriteString(plain(t.Text))
		}
	}
	return b.String()
}

func TestMeasure(t *testing.T) {
	cases := []struct {
		text             string
		words, sentences int
	}{
		{"One two three. Four five!\n", 5, 2},
		{"A list:\n  - first item\n  - second item.\n", 6, 3},
		{"# Heading\n\nText here, e.g. this.\n\n\tcode is not counted.\n", 4, 1},
		{"Ends without a stop\n\nNext paragraph (in brackets.)\n", 8, 2},
	}
	for _, c := range cases {
		w, s := measure(c.text)
		if w != c.words || s != c.sentences {
			t.Errorf("measure(%q) = %d words, %d sentences; want %d, %d", c.text, w, s, c.words, c.sentences)
		}
	}
}
