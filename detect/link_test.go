package detect

import (
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/searxgate/searxgate/results"
)

// linkByURLParse is parseLink without its plain-link shortcut: every link
// through url.Parse.
func linkByURLParse(u string) (results.URLParts, bool) {
	if !strings.HasPrefix(strings.ToLower(u), "http://") && !strings.HasPrefix(strings.ToLower(u), "https://") {
		return results.URLParts{}, false
	}
	rest := u[strings.Index(u, "//")+2:]
	if rest == "" || strings.ContainsAny(rest[:1], "/?#") || strings.ContainsFunc(u, func(r rune) bool { return r <= ' ' || r == 0x7f }) || hasBidi(u) {
		return results.URLParts{}, false
	}
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return results.URLParts{}, false
	}
	return results.PartsOf(p), true
}

var linkSeeds = []string{
	"https://example.org/", "http://example.org", "HTTPS://Example.ORG:8443/a/b;p?q=1&r=2#frag", "https://a.example/%E2%82%AC?x#y?z",
	"https://a.example/a%2", "https://a.example/a%zz", "https://a.example/#%zz", "https://a.example:/", "https://a.example:99999999/",
	"https://a.example:x/", "https://user:pw@a.example/", "https://[::1]:80/", "https://a_b.example/", "https://a.example/ä",
	"https://a.example/a b", "https://a.example/<script>", "https://a.example/?q=<b>\"'", "https://a.example/p'(x)!*", "https://a.example/#a'b[c]",
	"https://a.example/[x]", "https://a.example/a;b/c;d", "https://a.example?x/y", "https://a.example#x/y?z", "http://-/", "https://a.example/%41%7e",
	"https://a.example/path?", "https://a.example/p??q", "ftp://a.example/", "https:///x", "https://?x", "https://a%41.example/", "https://a.example/\\x",
	"https://a.example/{x}", "https://a.example/|", "https://a.example/^", "https://a.example/`", "https://a.example/#`", "https://a.example/#{",
}

// TestPlainLinkAsURLParse: parseLink splits every link as url.Parse does,
// and judges it the same.
func TestPlainLinkAsURLParse(t *testing.T) {
	plain := 0
	for _, u := range linkSeeds {
		samePartsAsURLParse(t, u)
		if _, ok := plainLink(strings.HasPrefix(strings.ToLower(u), "https://"), u[strings.Index(u, "//")+2:]); ok && strings.Contains(u, "://") {
			plain++
		}
	}
	if plain < 10 {
		t.Fatalf("only %d seed links were plain: the shortcut is not exercised", plain)
	}
}

// FuzzPlainLinkAsURLParse: the same on any link.
func FuzzPlainLinkAsURLParse(f *testing.F) {
	for _, u := range linkSeeds {
		f.Add(u)
	}
	f.Fuzz(samePartsAsURLParse)
}

func samePartsAsURLParse(t *testing.T, u string) {
	got, ok := parseLink(u)
	want, wok := linkByURLParse(u)
	if ok != wok || !reflect.DeepEqual(got, want) {
		t.Fatalf("parseLink(%q) = %+v, %v; url.Parse says %+v, %v", u, got, ok, want, wok)
	}
}
