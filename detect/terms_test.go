package detect

import (
	"errors"
	"reflect"
	"strconv"
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
	tests := []struct {
		file string
		want Terms
	}{
		{"searxng/a-config.txt", Terms{
			Version: "2024.10.5+c49a2707c", LimiterKnown: true, InstanceName: "realsearx-a",
			Categories: []string{"general"},
			Engines:    []ConfigEngine{{Name: "fakeback", Categories: []string{"general"}, Enabled: true, Shortcut: "fb"}},
		}},
		{"searxng/c-config.txt", Terms{
			Version: "2024.10.5+c49a2707c", Limiter: true, LimiterKnown: true, InstanceName: "realsearx-c",
			Categories: []string{"general"},
			Engines:    []ConfigEngine{{Name: "fakeback", Categories: []string{"general"}, Enabled: true, Shortcut: "fb"}},
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
