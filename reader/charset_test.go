package reader

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestCharset: the character set is found as browsers find it (BOM,
// header, <meta>, then valid UTF-8 before windows-1252), past the first
// 1024 bytes a guess would look at.
func TestCharset(t *testing.T) {
	pad := "<!-- " + strings.Repeat("ascii only ", 120) + "-->" // > 1024 bytes before any non-ASCII byte
	utf := "<p>café, that’s it</p>"
	latin1 := "<p>caf\xe9, that\x92s it</p>" // windows-1252 bytes
	for _, tc := range []struct {
		name, ctype, body, want string
	}{
		{"UTF-8, nothing declared", "text/html", "<html><head><title>t</title></head><body>" + pad + utf, "café, that’s it"},
		{"UTF-8, nothing declared, short", "text/html", utf, "café, that’s it"},
		{"windows-1252, nothing declared", "text/html", pad + latin1, "café, that’s it"},
		{"header", "text/html; charset=windows-1252", latin1, "café, that’s it"},
		{"header wins over the bytes", "text/html; charset=ISO-8859-1", utf, "cafÃ©"},
		{"meta charset", "text/html", `<meta charset="windows-1252">` + pad + latin1, "café, that’s it"},
		{"meta http-equiv", "text/html", `<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">` + latin1, "café"},
		{"UTF-8 BOM over a wrong header", "text/html; charset=iso-8859-1", "\xef\xbb\xbf" + utf, "café, that’s it"},
		{"UTF-16LE BOM", "text/html", "\xff\xfe" + utf16le("<p>café</p>"), "café"},
		{"text, nothing declared", "text/plain", pad + "café, that’s it", "café, that’s it"},
		{"text, windows-1252 undeclared", "text/plain", "caf\xe9", "café"},
		{"text, header", "text/plain; charset=iso-8859-1", "caf\xe9", "café"},
	} {
		got := string(toUTF8([]byte(tc.body), tc.ctype, strings.HasPrefix(tc.ctype, "text/html")))
		if !strings.Contains(got, tc.want) || strings.HasPrefix(got, "\ufeff") {
			t.Errorf("%s: %q, want it to hold %q", tc.name, tail(got), tc.want)
		}
	}
}

func utf16le(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteByte(byte(r))
		b.WriteByte(byte(r >> 8))
	}
	return b.String()
}

func tail(s string) string {
	if len(s) > 60 {
		return "…" + s[len(s)-60:]
	}
	return s
}

// TestReadUndeclaredUTF8: a UTF-8 page whose header and markup declare no
// character set reads right through the whole reader.
func TestReadUndeclaredUTF8(t *testing.T) {
	page := "<html><head><title>Menu</title></head><body><article><h1>Menu</h1>" +
		"<!-- " + strings.Repeat("padding ", 200) + "-->" + long +
		"<p>A café au lait, and that’s all.</p></article></body></html>"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(page))
	}))
	t.Cleanup(srv.Close)
	r, base := publicReader(t, srv, nil)
	res, err := r.Read(context.Background(), Request{URL: base + "/"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Content, "A café au lait, and that’s all.") {
		t.Errorf("read as:\n%s", res.Content)
	}
}
