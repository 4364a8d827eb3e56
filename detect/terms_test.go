package detect

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := fixtureNow
	tests := []struct {
		name string
		h    Headers
		want time.Duration
	}{
		{"none", Headers{}, 0},
		{"seconds", Headers{"Retry-After": "120"}, 2 * time.Minute},
		{"seconds with space", Headers{"retry-after": " 7 "}, 7 * time.Second},
		{"fraction", Headers{"Retry-After": "1.5"}, 1500 * time.Millisecond},
		{"zero", Headers{"Retry-After": "0"}, 0},
		{"date ahead", Headers{"Retry-After": "Sun, 29 Nov 2026 13:30:00 GMT"}, 5 * time.Minute},
		{"date passed", Headers{"Retry-After": "Sun, 29 Nov 2026 13:00:00 GMT"}, 0},
		{"date RFC 850", Headers{"Retry-After": "Sunday, 29-Nov-26 13:26:00 GMT"}, time.Minute},
		{"garbage", Headers{"Retry-After": "soon"}, 0},
		{"negative", Headers{"Retry-After": "-5"}, 0},
		{"hex float", Headers{"Retry-After": "0x10"}, 0},
		{"NaN", Headers{"Retry-After": "NaN"}, 0},
		{"huge", Headers{"Retry-After": "99999999"}, MaxRetryAfter},
		{"far date", Headers{"Retry-After": "Fri, 01 Jan 2100 00:00:00 GMT"}, MaxRetryAfter},
		{"RateLimit-Reset", Headers{"RateLimit-Reset": "30"}, 30 * time.Second},
		{"X-RateLimit-Reset", Headers{"X-RateLimit-Reset": "45"}, 45 * time.Second},
		{"X-RateLimit-Reset epoch", Headers{"X-RateLimit-Reset": strconv.FormatInt(now.Unix()+90, 10)}, 90 * time.Second},
		{"epoch passed", Headers{"X-RateLimit-Reset": strconv.FormatInt(now.Unix()-90, 10)}, 0},
		{"Retry-After first", Headers{"Retry-After": "10", "RateLimit-Reset": "30"}, 10 * time.Second},
		{"bad Retry-After falls back", Headers{"Retry-After": "later", "RateLimit-Reset": "30"}, 30 * time.Second},
		{"structured reset", Headers{"RateLimit": "limit=10, remaining=0, reset=7"}, 7 * time.Second},
		{"structured t", Headers{"RateLimit": `"default";r=0;t=12`}, 12 * time.Second},
		{"structured none", Headers{"RateLimit": "limit=10, remaining=3"}, 0},
	}
	for _, tc := range tests {
		if got := ParseRetryAfter(tc.h, now); got != tc.want {
			t.Errorf("%s: ParseRetryAfter(%v) = %v, want %v", tc.name, tc.h, got, tc.want)
		}
	}
	if ParseRetryAfter(nil, now) != 0 {
		t.Errorf("nil header gave a wait")
	}
}

func TestParseConfig(t *testing.T) {
	// The captures' one engine, field by field as SearXNG 2024.10.5 wrote
	// it: {"categories":["general"],"enabled":true,"language_support":false,
	// "languages":[],"name":"fakeback","paging":true,"regions":[],
	// "safesearch":false,"shortcut":"fb","time_range_support":false,"timeout":3.0}
	fakeback := ConfigEngine{Name: "fakeback", Categories: []string{"general"}, Enabled: true, Shortcut: "fb",
		Paging: true, Languages: []string{}, Regions: []string{}, Timeout: 3}
	tests := []struct {
		file string
		want Terms
	}{
		{"searxng/a-config.txt", Terms{
			Version: "2024.10.5+c49a2707c", LimiterKnown: true, InstanceName: "realsearx-a",
			Categories: []string{"general"},
			Engines:    []ConfigEngine{fakeback},
		}},
		{"searxng/c-config.txt", Terms{
			Version: "2024.10.5+c49a2707c", Limiter: true, LimiterKnown: true, InstanceName: "realsearx-c",
			Categories: []string{"general"},
			Engines:    []ConfigEngine{fakeback},
		}},
	}
	for _, tc := range tests {
		got, err := ParseConfig(loadCapture(t, tc.file).body)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %#v\nwant %#v", tc.file, got, tc.want)
		}
	}

	got, err := ParseConfig([]byte(`{"version": "2025.6.1", "public_instance": true, "autocomplete": "duckduckgo",
		"limiter": {"enabled": true, "botdetection.ip_limit.link_token": true},
		"engines": [{"name": "google", "enabled": false, "categories": ["general", "web"], "shortcut": "go"}, {"enabled": true}, 7]}`))
	want := Terms{Version: "2025.6.1", Limiter: true, LimiterKnown: true, LinkToken: true, PublicInstance: true, Autocomplete: "duckduckgo",
		Engines: []ConfigEngine{{Name: "google", Categories: []string{"general", "web"}, Shortcut: "go"}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("public instance with link token:\n got %#v (%v)\nwant %#v", got, err, want)
	}
	// An engine with traits, as a public instance lists google: every
	// capability and its language and region codes.
	got, err = ParseConfig([]byte(`{"version": "2025.6.1", "engines": [{"categories": ["general", "web"], "enabled": true,
		"language_support": true, "languages": ["af", "de", "zh-HK"], "name": "google", "paging": true,
		"regions": ["de-AT", "de-DE"], "safesearch": true, "shortcut": "go", "time_range_support": true, "timeout": 2.5}]}`))
	want = Terms{Version: "2025.6.1", Engines: []ConfigEngine{{Name: "google", Categories: []string{"general", "web"}, Enabled: true,
		Shortcut: "go", Paging: true, LanguageSupport: true, Languages: []string{"af", "de", "zh-HK"}, Regions: []string{"de-AT", "de-DE"},
		SafeSearch: true, TimeRangeSupport: true, Timeout: 2.5}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("an engine with traits:\n got %#v (%v)\nwant %#v", got, err, want)
	}
	// Values of the wrong type are not believed: a string "true" is not
	// paging, a timeout that is a string, negative or past an hour is not
	// known, a code that is not a string or is too long is skipped.
	got, err = ParseConfig([]byte(`{"version": "x", "engines": [{"name": "odd", "paging": "true", "language_support": 1,
		"languages": ["de", 7, null, "` + strings.Repeat("x", 40) + `", ""], "regions": "de-DE", "timeout": "3.0"},
		{"name": "neg", "timeout": -1}, {"name": "long", "timeout": 86400}]}`))
	want = Terms{Version: "x", Engines: []ConfigEngine{{Name: "odd", Languages: []string{"de"}}, {Name: "neg"}, {Name: "long"}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("values of the wrong type:\n got %#v (%v)\nwant %#v", got, err, want)
	}
	// Bounded whatever the instance sends: engines, and codes per engine.
	var big strings.Builder
	big.WriteString(`{"version": "x", "engines": [`)
	for i := range MaxConfigEngines + 10 {
		if i > 0 {
			big.WriteByte(',')
		}
		fmt.Fprintf(&big, `{"name": "e%d", "languages": [`, i)
		for j := range MaxConfigCodes + 10 {
			if j > 0 && i == 0 {
				big.WriteByte(',')
			}
			if i == 0 {
				fmt.Fprintf(&big, `"l%d"`, j)
			}
		}
		big.WriteString(`]}`)
	}
	big.WriteString(`]}`)
	got, err = ParseConfig([]byte(big.String()))
	if err != nil || len(got.Engines) != MaxConfigEngines || len(got.Engines[0].Languages) != MaxConfigCodes || got.Engines[0].Languages[MaxConfigCodes-1] != fmt.Sprintf("l%d", MaxConfigCodes-1) {
		t.Errorf("a huge /config: %d engines, %d languages of the first (%v); want %d and %d", len(got.Engines), len(got.Engines[0].Languages), err, MaxConfigEngines, MaxConfigCodes)
	}
	// All the engines' codes are bounded too, and a list read again is
	// the one kept (every instance of a version lists the same).
	big.Reset()
	big.WriteString(`{"version": "x", "engines": [`)
	for i := range 2 * MaxConfigCodesTotal / MaxConfigCodes {
		if i > 0 {
			big.WriteByte(',')
		}
		fmt.Fprintf(&big, `{"name": "e%d", "languages": [`, i)
		for j := range MaxConfigCodes {
			if j > 0 {
				big.WriteByte(',')
			}
			fmt.Fprintf(&big, `"%d-%d"`, i, j)
		}
		big.WriteString(`]}`)
	}
	big.WriteString(`]}`)
	got, err = ParseConfig([]byte(big.String()))
	n := 0
	for _, e := range got.Engines {
		n += len(e.Languages)
	}
	if err != nil || n != MaxConfigCodesTotal || len(got.Engines) != 2*MaxConfigCodesTotal/MaxConfigCodes {
		t.Errorf("many engines with many codes: %d codes in %d engines (%v), want %d", n, len(got.Engines), err, MaxConfigCodesTotal)
	}
	again, _ := ParseConfig([]byte(big.String()))
	if &again.Engines[0].Languages[0] != &got.Engines[0].Languages[0] {
		t.Error("the same list of codes read again is kept twice")
	}
	if &again.Engines[1].Languages[0] == &got.Engines[0].Languages[0] {
		t.Error("two lists share one")
	}
	got, err = ParseConfig([]byte(`{"version": "1.0.0", "engines": []}`))
	if err != nil || got.LimiterKnown || got.Limiter {
		t.Errorf("old /config without limiter: %#v (%v)", got, err)
	}

	for _, file := range []string{"searxng/a-healthz.txt", "searxng/a-search-json.txt", "searxng/a-index.html.txt"} {
		if _, err := ParseConfig(loadCapture(t, file).body); !errors.Is(err, ErrNotConfig) {
			t.Errorf("%s: error %v, want ErrNotConfig", file, err)
		}
	}
	for _, body := range []string{``, `[]`, `{}`, `{"version": 1`} {
		if _, err := ParseConfig([]byte(body)); !errors.Is(err, ErrNotConfig) {
			t.Errorf("ParseConfig(%q): error %v, want ErrNotConfig", body, err)
		}
	}
}
