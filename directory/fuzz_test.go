package directory

import (
	"errors"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"testing"
)

func FuzzParse(f *testing.F) {
	f.Add(readFixture(f, "instances.json"))
	f.Add(Embedded())
	f.Add(genDirectory(3, rand.New(rand.NewPCG(1, 1))))
	f.Add([]byte(small))
	f.Add([]byte(onlyTor))
	f.Add([]byte(`{"instances": {"https://a.example/": {"network_type": "normal", "alternativeUrls": {"https://b.example": ""}}, "https://b.example/": {"network_type": "normal", "main": false, "alternativeUrls": {"https://a.example/": ""}}}}`))
	f.Add([]byte(`{"instances": {"https://A.example": {"network_type": "normal"}, "https://a.example/": {"network_type": "normal", "main": false}}}`))
	f.Add([]byte(`{"instances": null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, filter := range []Filter{DefaultFilter(), {}, {Allow: []string{"example"}, Deny: []string{"b.example"}}} {
			entries, err := Parse(data, filter)
			if err != nil {
				if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrNoInstances) {
					t.Fatalf("error outside the sentinels: %v", err)
				}
				if entries != nil {
					t.Fatal("entries with an error")
				}
				continue
			}
			if len(entries) == 0 {
				t.Fatal("no entries and no error")
			}
			seen := map[string]bool{}
			for i, e := range entries {
				if i > 0 && entries[i-1].URL >= e.URL {
					t.Fatalf("not sorted or not unique: %q then %q", entries[i-1].URL, e.URL)
				}
				checkNormal(t, e.URL)
				if seen[e.URL] {
					t.Fatalf("%s listed twice", e.URL)
				}
				seen[e.URL] = true
				if e.Prior < 0 || e.Prior > MaxPrior {
					t.Fatalf("%s: prior %v out of range", e.URL, e.Prior)
				}
				if e.SuccessPct != -1 && e.SuccessPct < filter.MinSuccess {
					t.Fatalf("%s: success %v under the threshold %v", e.URL, e.SuccessPct, filter.MinSuccess)
				}
				if e.UptimeDay != -1 && e.UptimeDay < filter.MinUptimeDay {
					t.Fatalf("%s: uptime %v under the threshold %v", e.URL, e.UptimeDay, filter.MinUptimeDay)
				}
				if !normalHost(e.URL) {
					t.Fatalf("%s kept: not on the normal network", e.URL)
				}
				if len(filter.Deny) > 0 && entryMatches(filter.Deny, e) {
					t.Fatalf("%s kept though denied", e.URL)
				}
				if len(filter.Allow) > 0 && !entryMatches(filter.Allow, e) {
					t.Fatalf("%s kept though not allowed", e.URL)
				}
				if !slices.IsSorted(e.Alternatives) || slices.Contains(e.Alternatives, e.URL) {
					t.Fatalf("%s: alternatives %v", e.URL, e.Alternatives)
				}
				for _, a := range e.Alternatives {
					checkNormal(t, a)
				}
			}
			for _, e := range entries {
				for _, a := range e.Alternatives {
					if seen[a] {
						t.Fatalf("%s is both an entry and an alternative of %s", a, e.URL)
					}
				}
			}
		}
	})
}

// checkNormal fails t unless u is in Normalize's canonical form.
func checkNormal(t *testing.T, u string) {
	t.Helper()
	again, err := Normalize(u)
	if err != nil || again != u {
		t.Fatalf("Normalize(%q) = %q, %v: not idempotent", u, again, err)
	}
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		t.Fatalf("%q: not http(s)", u)
	}
	if !strings.HasSuffix(u, "/") || strings.HasSuffix(u, "//") {
		t.Fatalf("%q: not exactly one trailing slash", u)
	}
	if strings.ContainsAny(u, "?#") {
		t.Fatalf("%q: query or fragment kept", u)
	}
	p, err := url.Parse(u)
	if err != nil {
		t.Fatalf("%q does not parse: %v", u, err)
	}
	if h := p.Hostname(); h != strings.ToLower(h) || h == "" {
		t.Fatalf("%q: host %q not lower-case", u, h)
	}
	if port := p.Port(); (p.Scheme == "https" && port == "443") || (p.Scheme == "http" && port == "80") {
		t.Fatalf("%q: default port kept", u)
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{
		"https://example.org", "HTTPS://Example.ORG:443//", "http://example.org:80/searx/?q=1#x",
		"https://[2001:DB8::1]:443/", "https://[fe80::1%25eth0]/", "https://example.org./a%20b//",
		"ftp://x/", "https://user@x/", "https://", "//example.org", "https://ex%41mple.org/",
		"https://example.org:/", "https://例え.jp/", "https://xn--r8jz45g.jp/パス",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := Normalize(raw)
		if err != nil {
			if !errors.Is(err, ErrScheme) && !errors.Is(err, ErrBadURL) {
				t.Fatalf("Normalize(%q): error outside the sentinels: %v", raw, err)
			}
			return
		}
		checkNormal(t, u)
		if !MatchAny([]string{u}, raw) {
			t.Fatalf("%q does not match its own normal form %q", raw, u)
		}
	})
}
