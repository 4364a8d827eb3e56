package results

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{
		"", "plain", `quote " backslash \ slash /`, "tab\tnl\ncr\r bs\b ff\f", "\x00\x01\x1f\x7f",
		"<script>&amp;</script>", "line\u2028sep\u2029", "bad \xff utf8 \xc3", "emoji 🦀 and ü",
	} {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
	}
}

func TestAppendFloatMatchesEncodingJSON(t *testing.T) {
	for _, f := range []float64{0, 1, -1, 0.5, 0.3333333333333333, 1e-7, 1.5e-9, 123456789, 1e20, 1e21, 2.5e300, -3e-10, math.SmallestNonzeroFloat64} {
		want, _ := json.Marshal(f)
		if got := appendFloat(nil, f); string(got) != string(want) {
			t.Errorf("appendFloat(%v) = %s, want %s", f, got, want)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if got := string(appendFloat(nil, f)); got != "0" {
			t.Errorf("appendFloat(%v) = %s, want 0", f, got)
		}
	}
}

// TestAppendJSONExtraOverrides: a field in Extra replaces the typed one;
// no key is written twice.
func TestAppendJSONExtraOverrides(t *testing.T) {
	r := &Page{Results: []Result{{
		URL:   "https://a.example/",
		Score: 2,
		Extra: map[string]json.RawMessage{"score": json.RawMessage(`"high"`), "zeta": nil, "alpha": json.RawMessage(`[1]`)},
	}}}
	out := string(r.AppendJSON(nil))
	if strings.Count(out, `"score"`) != 1 || !strings.Contains(out, `"score":"high"`) {
		t.Errorf("score written as %s", out)
	}
	if !strings.Contains(out, `"alpha":[1],"score":"high","zeta":null}`) {
		t.Errorf("extra not in key order, or empty value not null: %s", out)
	}
	if !strings.Contains(out, `"parsed_url":["https","a.example","/","","",""]`) {
		t.Errorf("parsed_url not derived from the URL: %s", out)
	}
	if !json.Valid([]byte(out)) {
		t.Errorf("invalid JSON: %s", out)
	}
}

func TestParsedURL(t *testing.T) {
	tests := map[string][]string{
		"https://example.org/a/b;p=1?q=2#f": {"https", "example.org", "/a/b", "p=1", "q=2", "f"},
		"http://user@host:8080/":            {"http", "user@host:8080", "/", "", "", ""},
		"https://example.org":               {"https", "example.org", "", "", "", ""},
		"::bad":                             {"", "", "", "", "", ""},
	}
	for in, want := range tests {
		if got := ParsedURL(in); !reflect.DeepEqual(got, want) {
			t.Errorf("ParsedURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// AppendJSON sizes its buffer once for an ordinary answer: the size hint
// covers what it writes.
func TestAppendJSONGrowsOnce(t *testing.T) {
	r := tenResults()
	out := r.AppendJSON(nil)
	if hint := r.jsonSizeHint(); hint < len(out) || hint > 2*len(out) {
		t.Fatalf("size hint %d for %d bytes written", hint, len(out))
	}
	if c := cap(r.AppendJSON(nil)); c < len(out) || c > 2*len(out) {
		t.Fatalf("AppendJSON(nil) made a buffer of %d bytes for %d", c, len(out))
	}
}

// FuzzAppendString: AppendString writes what encoding/json writes.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a\"b\\c", "<&>", "\u2028\u2029", "\xff\xfe", "🦀", "\x00\x1f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
		}
	})
}
