package pdf

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// needTool is the path of a program a test needs. Without it the test
// skips, saying which Debian package has it; under CI=true (.ci/run
// installs them) it fails.
func needTool(t *testing.T, name, pkg string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed, and CI=true requires it (.ci/run installs Debian's %s)", name, pkg)
		}
		t.Skipf("%s is not installed (Debian's %s): the PDFs real tools make cannot be made here", name, pkg)
	}
	return path
}

// realPDF is one document a real tool made, and pdftotext's text of it.
type realPDF struct {
	name string
	pdf  []byte
	ref  string
}

// manualPDFs makes PDFs of the manual pages of tar and grep as Debian's
// tools make them: groff's own PDF writer (man -Tpdf) and groff's
// PostScript through ghostscript (man -t | ps2pdf); pdftotext reads each.
func manualPDFs(t *testing.T) []realPDF {
	t.Helper()
	groff := needTool(t, "groff", "groff")
	if err := exec.Command("sh", "-c", `echo | "$1" -Tpdf >/dev/null 2>&1`, "sh", groff).Run(); err != nil {
		// groff-base has the command but not the pdf device.
		if os.Getenv("CI") == "true" {
			t.Fatalf("groff here cannot write PDF (only groff-base is installed), and CI=true requires it (.ci/run installs Debian's groff)")
		}
		t.Skip("groff here cannot write PDF (only groff-base is installed; Debian's groff has the pdf device)")
	}
	ps2pdf := needTool(t, "ps2pdf", "ghostscript")
	pdftotext := needTool(t, "pdftotext", "poppler-utils")
	dir := t.TempDir()
	var out []realPDF
	for _, page := range []string{"tar", "grep"} {
		src, err := os.ReadFile("/usr/share/man/man1/" + page + ".1.gz")
		if err != nil {
			t.Logf("no manual page of %s here (%v)", page, err)
			continue
		}
		for _, how := range []struct{ name, script string }{
			{"groff", `zcat "$1" | "$2" -man -Tpdf`},
			{"ghostscript", `zcat "$1" | "$2" -man -Tps | "$3" - -`},
		} {
			gz := filepath.Join(dir, page+".1.gz")
			if err := os.WriteFile(gz, src, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("sh", "-c", how.script, "sh", gz, groff, ps2pdf)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			pdf, err := cmd.Output()
			if err != nil || len(pdf) == 0 {
				t.Fatalf("%s by %s: %v %s", page, how.name, err, stderr.String())
			}
			file := filepath.Join(dir, page+"-"+how.name+".pdf")
			if err := os.WriteFile(file, pdf, 0o644); err != nil {
				t.Fatal(err)
			}
			ref, err := exec.Command(pdftotext, "-enc", "UTF-8", file, "-").Output()
			if err != nil {
				t.Fatalf("pdftotext %s: %v", file, err)
			}
			out = append(out, realPDF{name: page + " by " + how.name, pdf: pdf, ref: string(ref)})
		}
	}
	if len(out) == 0 {
		t.Skip("no manual pages of tar or grep under /usr/share/man (an image without manual pages): nothing to make PDFs of")
	}
	return out
}

// withoutRunning is pdftotext's text without what repeats on most pages
// (running heads and feet, as "TAR(1) GNU TAR Manual TAR(1)"), which the
// reader leaves out on purpose.
func withoutRunning(text string) string {
	pages := strings.Split(text, "\f")
	seen := map[string]int{}
	for _, p := range pages {
		onPage := map[string]bool{}
		for _, l := range strings.Split(p, "\n") {
			if l = strings.TrimSpace(l); l != "" && !onPage[l] {
				onPage[l] = true
				seen[l]++
			}
		}
	}
	var b strings.Builder
	for _, p := range pages {
		for _, l := range strings.Split(p, "\n") {
			if l = strings.TrimSpace(l); len(pages) < 3 || seen[l] < len(pages)/2 {
				b.WriteString(l + "\n")
			}
		}
	}
	return b.String()
}

// TestRealPDFs reads PDFs that groff and ghostscript made of real manual
// pages, side by side with pdftotext: no minus sign (U+2212) where
// pdftotext reads none (ToUnicode before the encoding), at most a handful
// of words run together (spaces from glyph positions), 97 % or more of
// pdftotext's words (its running heads aside), and a title that is the
// page's name, not "NAME".
func TestRealPDFs(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the real PDFs take seconds to make")
	}
	lim := Limits{Pages: 50, Chars: 500_000, Time: 20 * time.Second}
	for _, doc := range manualPDFs(t) {
		got, err := Extract(context.Background(), doc.pdf, lim, time.Now)
		if err != nil {
			t.Errorf("%s: %v", doc.name, err)
			continue
		}
		st := compareWords(withoutRunning(doc.ref), got.Markdown)
		t.Logf("%s: %s; title %q", doc.name, st, got.Title)
		if n, ref := strings.Count(got.Markdown, "−"), strings.Count(doc.ref, "−"); ref == 0 && n > 0 {
			t.Errorf("%s: %d minus signs where pdftotext reads hyphens", doc.name, n)
		}
		if len(st.RunTogether) > 5 {
			t.Errorf("%s: %d words run together: %v", doc.name, len(st.RunTogether), st.RunTogether)
		}
		if st.Present*100 < st.Ref*97 {
			t.Errorf("%s: %s, want 97 %% or more", doc.name, st)
		}
		if name, _, _ := strings.Cut(doc.name, " "); !strings.HasPrefix(got.Title, name+" ") && !strings.HasPrefix(got.Title, name+",") {
			t.Errorf("%s: title %q, want the page's name line", doc.name, got.Title)
		}
	}
}
