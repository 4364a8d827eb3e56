package directory

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func approx(d, want, tol time.Duration) bool {
	diff := d - want
	return diff >= -tol && diff <= tol
}

func TestParseFixture(t *testing.T) {
	entries, rep, err := parse(readFixture(t, "instances.json"), DefaultFilter())
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		prior      time.Duration
		version    string
		successPct float64
		uptimeDay  float64
		alts       []string
	}
	kept := map[string]want{
		// median 0.5 s at 100 %; www is collapsed, the onion and gopher
		// alternatives are not kept.
		"https://good.example.org/": {500 * time.Millisecond, "2024.10.5+4a7c1b2d3", 100, 99.5, []string{"https://www.good.example.org/"}},
		// listed, not measured: default prior
		"https://listed.example.com/": {0, "", -1, -1, nil},
		// search error set but 100 % success: kept; the lower-case key wins
		// the duplicate (same success, lower prior)
		"https://searcherr.example.com/": {800 * time.Millisecond, "2025.1.2+aa11bb22", 100, 100, nil},
		// all.value 2.0 s at 80 %: 2.5 s; uptime null
		"https://slow.example.com/": {2500 * time.Millisecond, "2024.10.5", 80, -1, nil},
		// 1.2 s at 95 %: 1.263 s
		"https://sub.path.example.com/searx/": {1263157894 * time.Nanosecond, "2024.10.5", 95, -1, nil},
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.URL)
		w, ok := kept[e.URL]
		if !ok {
			t.Errorf("kept %s, which should be dropped (%+v)", e.URL, e)
			continue
		}
		if !approx(e.Prior, w.prior, time.Microsecond) {
			t.Errorf("%s: Prior = %v, want %v", e.URL, e.Prior, w.prior)
		}
		if e.Version != w.version || e.SuccessPct != w.successPct || e.UptimeDay != w.uptimeDay {
			t.Errorf("%s: got version %q success %v uptime %v, want %q %v %v", e.URL, e.Version, e.SuccessPct, e.UptimeDay, w.version, w.successPct, w.uptimeDay)
		}
		if !slices.Equal(e.Alternatives, w.alts) {
			t.Errorf("%s: Alternatives = %v, want %v", e.URL, e.Alternatives, w.alts)
		}
	}
	if !slices.IsSorted(got) {
		t.Errorf("entries not sorted by URL: %v", got)
	}
	if len(entries) != len(kept) {
		t.Errorf("kept %d entries %v, want %d", len(entries), got, len(kept))
	}

	dropped := map[string]string{
		"https://www.good.example.org/":                                      reasonCollapsed,
		"http://goodgoodgoodgoodgoodgoodgoodgoodgoodgoodgoodgoodgood.onion/": reasonNetwork,
		"http://searx.i2p/":                                                  reasonNetwork,
		"https://mislabelled.onion/":                                         reasonNetwork,
		"https://error.example.net/":                                         reasonError,
		"https://noversion.example.net/":                                     reasonNoVersion,
		"https://bad-gateway.example.net/":                                   reasonHTTPStatus,
		"https://flaky.example.net/":                                         reasonLowSuccess,
		"https://down-today.example.net/":                                    reasonLowUptime,
		"https://Searcherr.example.com":                                      reasonDuplicate,
		"ftp://weird.example/":                                               reasonURL,
		"https://nosearch.example.com/":                                      reasonLowSuccess,
		"https://string.example.com/":                                        reasonNotObject,
	}
	if !reflect.DeepEqual(rep.why, dropped) {
		t.Errorf("drop reasons:\n got %v\nwant %v", rep.why, dropped)
	}
	if rep.total != len(kept)+len(dropped) || rep.kept != len(kept) {
		t.Errorf("report total %d kept %d, want %d %d", rep.total, rep.kept, len(kept)+len(dropped), len(kept))
	}
	if s := rep.String(); !strings.HasPrefix(s, "kept 5 of 18") || !strings.Contains(s, "network 3") {
		t.Errorf("report summary = %q", s)
	}
}

// TestParseOrderIndependent re-encodes the fixture with its keys in
// another order: the outcome, duplicates and collapsing included, must not
// change.
func TestParseOrderIndependent(t *testing.T) {
	data := readFixture(t, "instances.json")
	want, err := Parse(data, DefaultFilter())
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Instances map[string]json.RawMessage `json:"instances"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range doc.Instances {
			if !yield(k) {
				return
			}
		}
	})
	rnd := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 5; round++ {
		rnd.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		var b strings.Builder
		b.WriteString(`{"instances":{`)
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			fmt.Fprintf(&b, "%s:%s", kb, doc.Instances[k])
		}
		b.WriteString(`}}`)
		got, err := Parse([]byte(b.String()), DefaultFilter())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d, order %v:\n got %+v\nwant %+v", round, keys, got, want)
		}
	}
}

func TestParseFilters(t *testing.T) {
	data := readFixture(t, "instances.json")
	tests := []struct {
		name   string
		filter Filter
		want   []string
	}{
		{"zero filter: no thresholds", Filter{}, []string{
			"https://down-today.example.net/", "https://flaky.example.net/", "https://good.example.org/",
			"https://listed.example.com/", "https://nosearch.example.com/", "https://searcherr.example.com/",
			"https://slow.example.com/", "https://sub.path.example.com/searx/"}},
		{"success 95", Filter{MinSuccess: 95, MinUptimeDay: 90}, []string{
			"https://good.example.org/", "https://listed.example.com/", "https://searcherr.example.com/",
			"https://sub.path.example.com/searx/"}},
		// good (99.5 %) goes; www (100 %), no longer collapsed, stays
		{"uptime 99.9", Filter{MinSuccess: 80, MinUptimeDay: 99.9}, []string{
			"https://listed.example.com/", "https://searcherr.example.com/", "https://slow.example.com/",
			"https://sub.path.example.com/searx/", "https://www.good.example.org/"}},
		{"allow host suffix", Filter{MinSuccess: 80, MinUptimeDay: 90, Allow: []string{"example.com"}}, []string{
			"https://listed.example.com/", "https://searcherr.example.com/", "https://slow.example.com/",
			"https://sub.path.example.com/searx/"}},
		{"allow full URL", Filter{MinSuccess: 80, MinUptimeDay: 90, Allow: []string{"https://SLOW.example.com"}}, []string{
			"https://slow.example.com/"}},
		{"deny host and URL", Filter{MinSuccess: 80, MinUptimeDay: 90, Deny: []string{"path.example.com", "https://listed.example.com/"}}, []string{
			"https://good.example.org/", "https://searcherr.example.com/", "https://slow.example.com/"}},
		{"deny an alternative drops its owner", Filter{MinSuccess: 80, MinUptimeDay: 90, Deny: []string{"www.good.example.org"}}, []string{
			"https://listed.example.com/", "https://searcherr.example.com/", "https://slow.example.com/",
			"https://sub.path.example.com/searx/"}},
		{"deny wins over allow", Filter{MinSuccess: 80, MinUptimeDay: 90, Allow: []string{"example.com"}, Deny: []string{"slow.example.com"}}, []string{
			"https://listed.example.com/", "https://searcherr.example.com/", "https://sub.path.example.com/searx/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entries, err := Parse(data, tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range entries {
				got = append(got, e.URL)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got  %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		data string
		want error
	}{
		{"empty", ``, ErrMalformed},
		{"truncated", `{"instances": {"https://a.example/": {"network_type": "normal"`, ErrMalformed},
		{"html", `<html>Just a moment...</html>`, ErrMalformed},
		{"null", `null`, ErrMalformed},
		{"no instances", `{"metadata": {}}`, ErrMalformed},
		{"instances is a list", `{"instances": ["https://a.example/"]}`, ErrMalformed},
		{"no entries", `{"instances": {}}`, ErrNoInstances},
		{"only tor", `{"instances": {"http://abc.onion/": {"network_type": "tor"}}}`, ErrNoInstances},
		{"only failures", `{"instances": {"https://a.example/": {"network_type": "normal", "error": "x"}}}`, ErrNoInstances},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entries, err := Parse([]byte(tt.data), DefaultFilter())
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if entries != nil {
				t.Fatalf("entries = %v with an error", entries)
			}
		})
	}
}

func TestPrior(t *testing.T) {
	tests := []struct {
		name    string
		search  string
		success float64
		want    time.Duration
	}{
		{"median", `{"all": {"median": 0.7, "value": 9}}`, 100, 700 * time.Millisecond},
		{"value when no median", `{"all": {"value": 1.5}}`, 100, 1500 * time.Millisecond},
		{"median not a number", `{"all": {"median": "fast", "value": 0.25}}`, 100, 250 * time.Millisecond},
		{"80 % raises a quarter", `{"all": {"median": 1.0}}`, 80, 1250 * time.Millisecond},
		{"50 % doubles", `{"all": {"median": 1.0}}`, 50, 2 * time.Second},
		{"floored at 10 %", `{"all": {"median": 1.0}}`, 2, 10 * time.Second},
		{"unknown success keeps the base", `{"all": {"median": 1.0}}`, -1, time.Second},
		{"above 100 is not a rate: the base", `{"all": {"median": 1.0}}`, 150, time.Second},
		{"capped", `{"all": {"median": 1e300}}`, 100, MaxPrior},
		{"zero", `{"all": {"median": 0}}`, 100, 0},
		{"negative", `{"all": {"median": -1}}`, 100, 0},
		{"no timing", `{}`, 100, 0},
		{"tiny but measured", `{"all": {"median": 1e-12}}`, 100, time.Nanosecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := fmt.Sprintf(`{"instances": {"https://a.example/": {"network_type": "normal",
				"http": {"status_code": 200}, "version": "1", "timing": {"search": %s}}}}`, tt.search)
			if tt.success >= 0 {
				data = strings.Replace(data, `"search": {`, fmt.Sprintf(`"search": {"success_percentage": %v, `, tt.success), 1)
				data = strings.Replace(data, `, }`, `}`, 1)
			}
			entries, err := Parse([]byte(data), Filter{})
			if err != nil {
				t.Fatalf("%s: %v", data, err)
			}
			if got := entries[0].Prior; !approx(got, tt.want, time.Microsecond) {
				t.Errorf("Prior = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		in, want string
		err      error
	}{
		{"https://example.org", "https://example.org/", nil},
		{"https://example.org/", "https://example.org/", nil},
		{"  HTTPS://Example.ORG//  ", "https://example.org/", nil},
		{"https://example.org:443/", "https://example.org/", nil},
		{"http://example.org:80", "http://example.org/", nil},
		{"http://example.org:443/", "http://example.org:443/", nil},
		{"https://example.org:8443/searx", "https://example.org:8443/searx/", nil},
		{"https://example.org/searx///?q=x#top", "https://example.org/searx/", nil},
		{"https://example.org./", "https://example.org/", nil},
		{"https://[2001:DB8::1]:443/", "https://[2001:db8::1]/", nil},
		{"https://[2001:db8::1]:8080", "https://[2001:db8::1]:8080/", nil},
		{"https://example.org/a%20b", "https://example.org/a%20b/", nil},
		{"ftp://example.org/", "", ErrScheme},
		{"example.org", "", ErrScheme},
		{"javascript:alert(1)", "", ErrScheme},
		{"https://", "", ErrBadURL},
		{"https:///path", "", ErrBadURL},
		{"https://user:pw@example.org/", "", ErrBadURL},
		{"https://exa mple.org/", "", ErrBadURL},
		{"https://example.org:port/", "", ErrBadURL},
		{"https://[fe80::1%25eth0]/", "", ErrBadURL},
		{"http://%25/", "", ErrBadURL},
		{"https://exa!mple.org/", "", ErrBadURL},
		{"https://[::FFFF:1.2.3.4]/", "https://[::ffff:1.2.3.4]/", nil},
		{"https://[2001:db8:0:0:0:0:0:1]/", "https://[2001:db8::1]/", nil},
		{"https://ex%41mple.org/", "", ErrBadURL},
		{"https://BÜCHER.example/", "https://bücher.example/", nil},
		{"https://my_host.example/", "https://my_host.example/", nil},
		{"http://../", "", ErrBadURL},
		{"http://./", "", ErrBadURL},
		{"https://example.org../", "", ErrBadURL},
		{"https://.example.org/", "", ErrBadURL},
		{"https://a..example.org/", "", ErrBadURL},
	}
	for _, tt := range tests {
		got, err := Normalize(tt.in)
		if !errors.Is(err, tt.err) || got != tt.want {
			t.Errorf("Normalize(%q) = %q, %v; want %q, %v", tt.in, got, err, tt.want, tt.err)
		}
		if err == nil {
			if again, err := Normalize(got); again != got || err != nil {
				t.Errorf("Normalize not idempotent on %q: %q, %v", got, again, err)
			}
		}
	}
}

func TestMatchAny(t *testing.T) {
	tests := []struct {
		patterns []string
		url      string
		want     bool
	}{
		{[]string{"example.org"}, "https://example.org/", true},
		{[]string{"example.org"}, "https://sub.example.org/", true},
		{[]string{"example.org"}, "https://a.b.example.org:8443/searx/", true},
		{[]string{"example.org"}, "https://badexample.org/", false},
		{[]string{"example.org"}, "https://example.org.evil.net/", false},
		{[]string{".Example.ORG."}, "https://SUB.example.org", true},
		{[]string{"https://example.org"}, "https://example.org/", true},
		{[]string{"https://example.org/"}, "https://sub.example.org/", false},
		{[]string{"https://example.org/"}, "http://example.org/", false},
		{[]string{"https://example.org/searx"}, "https://example.org/searx/", true},
		{[]string{"https://example.org/searx"}, "https://example.org/", false},
		{[]string{"", " ", "."}, "https://example.org/", false},
		{nil, "https://example.org/", false},
		{[]string{"other.net", "example.org"}, "https://example.org/", true},
		{[]string{"example.org"}, "not a url", false},
		{[]string{"2001:db8::1"}, "https://[2001:db8::1]/", true},
	}
	for _, tt := range tests {
		if got := MatchAny(tt.patterns, tt.url); got != tt.want {
			t.Errorf("MatchAny(%q, %q) = %v, want %v", tt.patterns, tt.url, got, tt.want)
		}
	}
}

// genDirectory writes a searx.space file of n instances with the fields
// and sizes of the real one (html resources, TLS certificate, network
// details): most pass the default filter, some are tor, erroring or slow.
func genDirectory(n int, rnd *rand.Rand) []byte {
	var b strings.Builder
	b.WriteString(`{"metadata": {"timestamp": 1754380800, "ipv6": true}, "instances": {`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",\n")
		}
		network, url := "normal", fmt.Sprintf("https://searx%03d.example.net/", i)
		if i%10 == 9 {
			network, url = "tor", fmt.Sprintf("http://searx%03dabcdefghijklmnopqrstuvwxyz234567abcdefghijklmno.onion/", i)
		}
		errField := "null"
		if i%17 == 5 {
			errField = `"Connection timed out"`
		}
		success := 70 + rnd.Float64()*30
		fmt.Fprintf(&b, `%q: {"analytics": false, "comments": [], "main": true, "network_type": %q, "error": %s,
 "alternativeUrls": {"http://alt%03dabcdefghijklmnopqrstuvwxyz234567abcdefghijklmnop.onion/": "Hidden Service"},
 "http": {"status_code": 200, "error": null, "grade": "A+", "gradeUrl": "https://observatory.mozilla.org/analyze/searx%03d.example.net"},
 "version": "2024.%d.%d+%08x", "git_url": "https://github.com/searxng/searxng", "generator": "searxng", "contact_url": "mailto:admin@example.net", "docs_url": "https://docs.searxng.org",
 "tls": {"version": "TLSv1.3", "grade": "A+", "gradeUrl": "https://cryptcheck.fr/https/searx.example.net", "certificate": {"issuer": {"commonName": "R10", "organizationName": "Let's Encrypt", "countryName": "US"}, "subject": {"commonName": "searx.example.net", "altName": "DNS:searx.example.net"}, "serialNumber": "0474BF79F5307D37A6CF450459D1158B06D5", "sha256": "F5:33:A7:43:60:97:FB:E5:4D:B3:43:1D:5D:18:94:F0:37:D5:87:59:98:96:68:EF:53:8A:58:E1:F8:E9:0E:86", "notBefore": "20250601000000Z", "notAfter": "20250830000000Z"}},
 "network": {"ipv6": true, "asn_privacy": 0, "ips": {"198.51.100.%d": {"reverse": "host.example.net.", "field_type": "A", "asn_cidr": "198.51.100.0/24", "https_port": true}}},
 "html": {"grade": "V", "ressources": {`,
			url, network, errField, i, i, 1+i%12, 1+i%28, rnd.Uint32(), i%250)
		for r := 0; r < 25; r++ {
			if r > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, `"static/themes/simple/img/res%02d.svg": {"hashRef": %d}`, r, r)
		}
		fmt.Fprintf(&b, `}},
 "timing": {"initial": {"success_percentage": 100.0, "all": {"value": %.3f}, "server": {"value": %.3f}},
  "search": {"success_percentage": %.1f, "all": {"median": %.3f, "stdev": %.3f, "mean": %.3f}, "server": {"median": %.3f, "stdev": 0.05, "mean": 0.41}, "load": {"median": 0.1, "stdev": 0.01, "mean": 0.1}, "error": "HTTP status code 429"},
  "search_go": {"success_percentage": %.1f, "all": {"median": %.3f, "stdev": 0.1, "mean": 1.0}}},
 "uptime": {"uptimeDay": %.2f, "uptimeWeek": 98.5, "uptimeMonth": 97.2, "uptimeYear": 96.0, "startDate": "2022-01-01"}}`,
			0.1+rnd.Float64(), rnd.Float64()/10, success, 0.3+rnd.Float64()*2, rnd.Float64()/3, 0.3+rnd.Float64()*2, rnd.Float64(), 50+rnd.Float64()*50, 0.5+rnd.Float64()*2, 85+rnd.Float64()*15)
	}
	b.WriteString("}}\n")
	return []byte(b.String())
}

func TestGenDirectoryIsRealistic(t *testing.T) {
	data := genDirectory(100, rand.New(rand.NewPCG(7, 7)))
	if !json.Valid(data) {
		t.Fatal("generated file is not JSON")
	}
	entries, rep, err := parse(data, DefaultFilter())
	if err != nil {
		t.Fatal(err)
	}
	if rep.total != 100 || rep.dropped[reasonNetwork] != 10 || rep.dropped[reasonError] == 0 || len(entries) < 30 {
		t.Fatalf("generated file: %s", rep)
	}
	for _, e := range entries {
		if e.Prior <= 0 || e.Version == "" || len(e.Alternatives) != 0 {
			t.Fatalf("entry %+v lacks a measurement or keeps an onion", e)
		}
	}
}

// BenchmarkParse100 parses a realistic 100-instance searx.space file.
// Goal: well under 5 ms.
func BenchmarkParse100(b *testing.B) {
	data := genDirectory(100, rand.New(rand.NewPCG(7, 7)))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data, DefaultFilter()); err != nil {
			b.Fatal(err)
		}
	}
}

func TestParseCollapse(t *testing.T) {
	inst := func(url string, main bool, alts ...string) string {
		m := ""
		if !main {
			m = `"main": false, `
		}
		var a []string
		for _, u := range alts {
			a = append(a, fmt.Sprintf("%q: \"\"", u))
		}
		return fmt.Sprintf(`%q: {%s"network_type": "normal", "alternativeUrls": {%s}}`, url, m, strings.Join(a, ", "))
	}
	tests := []struct {
		name      string
		instances []string
		want      map[string][]string // entry URL → its alternatives
	}{
		{"a non-main entry listing a main one folds into it",
			[]string{inst("https://main.example", true), inst("http://0", false, "https://MAIN.example")},
			map[string][]string{"https://main.example/": {"http://0/"}}},
		{"a chain is one instance",
			[]string{inst("https://c.example/", true), inst("https://b.example/", false, "https://c.example/", "https://x.example/"), inst("https://a.example/", true, "https://b.example/")},
			map[string][]string{"https://a.example/": {"https://b.example/", "https://c.example/", "https://x.example/"}}},
		{"a cycle is one instance",
			[]string{inst("https://b.example/", true, "https://a.example/"), inst("https://a.example/", true, "https://b.example/")},
			map[string][]string{"https://a.example/": {"https://b.example/"}}},
		{"unrelated entries stay apart",
			[]string{inst("https://a.example/", true, "http://a.onion/"), inst("https://b.example/", true)},
			map[string][]string{"https://a.example/": nil, "https://b.example/": nil}},
		{"an entry listing itself",
			[]string{inst("https://a.example/", true, "https://A.example:443")},
			map[string][]string{"https://a.example/": nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := `{"instances": {` + strings.Join(tt.instances, ",\n") + `}}`
			entries, err := Parse([]byte(data), DefaultFilter())
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]string{}
			for _, e := range entries {
				got[e.URL] = e.Alternatives
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestParsePercentages(t *testing.T) {
	tests := []struct {
		success, uptime string
		wantKept        bool
		wantSuccess     float64
		wantUptime      float64
	}{
		{"100", "100", true, 100, 100},
		{"80", "90", true, 80, 90},
		{"79.9", "100", false, 0, 0},
		{"100", "89.9", false, 0, 0},
		{"-10", "100", false, 0, 0}, // not a rate: unknown, and a threshold needs one
		{"150", "100", false, 0, 0},
		{`"100"`, "100", false, 0, 0},
		{"100", "-5", true, 100, -1}, // not an uptime: unknown, which passes
		{"100", "null", true, 100, -1},
	}
	for _, tt := range tests {
		data := fmt.Sprintf(`{"instances": {"https://a.example/": {"network_type": "normal", "http": {"status_code": 200},
			"version": "1", "timing": {"search": {"success_percentage": %s, "all": {"median": 1}}}, "uptime": {"uptimeDay": %s}}}}`, tt.success, tt.uptime)
		entries, err := Parse([]byte(data), DefaultFilter())
		if !tt.wantKept {
			if !errors.Is(err, ErrNoInstances) {
				t.Errorf("success %s uptime %s: kept (%v, %v)", tt.success, tt.uptime, entries, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("success %s uptime %s: %v", tt.success, tt.uptime, err)
			continue
		}
		if e := entries[0]; e.SuccessPct != tt.wantSuccess || e.UptimeDay != tt.wantUptime {
			t.Errorf("success %s uptime %s: got %v %v", tt.success, tt.uptime, e.SuccessPct, e.UptimeDay)
		}
	}
}
