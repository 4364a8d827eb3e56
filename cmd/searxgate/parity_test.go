package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/searxgate/searxgate/sim"
)

// fixtureJSON is the JSON body of a capture of real SearXNG 2024.10.5
// (testdata/searxng, copied from ../shared/fixtures/searxng): its status
// and its body decoded.
func fixtureJSON(t *testing.T, name string) (int, map[string]any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "searxng", name))
	if err != nil {
		t.Fatal(err)
	}
	head, body, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
	if !ok {
		t.Fatalf("%s: no header end", name)
	}
	status := 0
	if f := strings.Fields(string(head)); len(f) > 1 {
		status, _ = strconv.Atoi(f[1])
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return status, m
}

// jsonKind names a decoded JSON value's type.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "array"
	}
	return "object"
}

// sameShape reports how got differs from SearXNG's want: a top-level key
// missing, added or of another type; a result key of another type than
// the fixture's, an optional key ("publishedDate", "thumbnail",
// "img_src") written empty, or a key SearXNG's results do not have.
func sameShape(got, want map[string]any) []string {
	var bad []string
	for k, v := range want {
		if g, ok := got[k]; !ok || jsonKind(g) != jsonKind(v) {
			bad = append(bad, "key "+k+": "+jsonKind(g)+", SearXNG "+jsonKind(v))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			bad = append(bad, "key "+k+" SearXNG does not write")
		}
	}
	wr, _ := want["results"].([]any)
	gr, _ := got["results"].([]any)
	if len(wr) == 0 || len(gr) == 0 {
		return bad
	}
	ref := wr[0].(map[string]any)
	for i, x := range gr {
		r := x.(map[string]any)
		for k, v := range ref {
			if g, ok := r[k]; !ok || jsonKind(g) != jsonKind(v) {
				bad = append(bad, "result "+strconv.Itoa(i)+" "+k+": "+jsonKind(g)+", SearXNG "+jsonKind(v))
			}
		}
		for k, v := range r {
			if _, ok := ref[k]; ok {
				continue
			}
			switch k {
			case "publishedDate", "thumbnail", "img_src", "thumbnail_src", "iframe_src", "resolution", "source":
				if v == nil || v == "" {
					bad = append(bad, "result key "+k+" written empty")
				}
			default:
				bad = append(bad, "result key "+k+" SearXNG's results do not have")
			}
		}
	}
	return bad
}

// TestParityWithSearXNG runs the same requests through searxgate in front
// of an instance that answers JSON, one that answers only its HTML page,
// and one behind SearXNG's limiter (read as HTML), and holds every answer
// to what real SearXNG answered the same request (the captures), key by
// key and result field by result field.
func TestParityWithSearXNG(t *testing.T) {
	_, plain := fixtureJSON(t, "a-search-json.txt")
	_, lucky := fixtureJSON(t, "a-search-json-feeling-lucky.txt")
	_, bangFix := fixtureJSON(t, "a-search-json-bang.txt")
	emptyStatus, empty := fixtureJSON(t, "a-search-json-empty-query.txt")
	longStatus, _ := fixtureJSON(t, "a-search-json-long-query.txt")
	for _, inst := range []struct {
		name string
		ic   sim.InstanceConfig
	}{
		{"json", sim.InstanceConfig{Behaviour: sim.Fast, JSON: true, Latency: 5 * time.Millisecond}},
		{"html-only", sim.InstanceConfig{Behaviour: sim.JSONDisabled, Latency: 5 * time.Millisecond}},
		{"limiter", sim.InstanceConfig{Behaviour: sim.Limiter, JSON: true, Latency: 5 * time.Millisecond}},
	} {
		t.Run(inst.name, func(t *testing.T) {
			_, g := ownFleet(t, inst.ic)
			get := func(q string, extra string) (int, map[string]any) {
				t.Helper()
				a := g.get(t, "/search?format=json&q="+url.QueryEscape(q)+extra, nil)
				var m map[string]any
				if err := json.Unmarshal(a.body, &m); err != nil {
					t.Fatalf("%q: %d, not JSON: %v\n%s", q, a.status, err, a.body)
				}
				return a.status, m
			}
			// A plain search: SearXNG's keys, its result fields, nothing
			// written empty.
			status, m := get("hello world", "")
			if status != 200 || m["query"] != plain["query"] {
				t.Fatalf("hello world: %d query %v, SearXNG 200 %v", status, m["query"], plain["query"])
			}
			if bad := sameShape(m, plain); len(bad) > 0 {
				t.Errorf("hello world differs from SearXNG's JSON:\n%s", strings.Join(bad, "\n"))
			}
			// Feeling lucky in JSON: the results, the query without "!!".
			status, m = get("!! foo bar", "")
			if rs, _ := m["results"].([]any); status != 200 || m["query"] != lucky["query"] || len(rs) < 2 {
				t.Errorf("!! foo bar: %d query %v, %d results; SearXNG 200 %v with the search's results", status, m["query"], len(rs), lucky["query"])
			}
			if bad := sameShape(m, plain); len(bad) > 0 {
				t.Errorf("!! foo bar differs from SearXNG's JSON:\n%s", strings.Join(bad, "\n"))
			}
			// No query, a blank one, a long one, a bad timeout_limit.
			if status, m := get("", ""); status != emptyStatus || !reflect.DeepEqual(m, empty) {
				t.Errorf("q=: %d %v, SearXNG %d %v", status, m, emptyStatus, empty)
			}
			if status, m := get("   ", ""); status != 200 || m["query"] != "" {
				t.Errorf("a blank q: %d %v, SearXNG 200 with query \"\"", status, m)
			}
			if status, m := get(strings.Repeat("a", 3000), ""); status != longStatus {
				t.Errorf("a 3,000-byte q: %d %v, SearXNG %d", status, m["error"], longStatus)
			}
			if status, m := get("hello", "&timeout_limit=abc"); status != 400 || m["error"] != `Invalid value "abc" for parameter timeout_limit` {
				t.Errorf("timeout_limit=abc: %d %v", status, m)
			}
			if status, _ := get("hello timeout", "&timeout_limit=2.5"); status != 200 {
				t.Errorf("timeout_limit=2.5: %d", status)
			}
			// "/" with a query: SearXNG's 308 to /search.
			noFollow := &http.Client{Transport: loopbackClient.Transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			resp, err := noFollow.Get("http://" + g.addr + "/?q=hello&format=json")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 308 || resp.Header.Get("Location") != "/search?q=hello&format=json" {
				t.Errorf("/?q=: %d Location %q, SearXNG 308 /search?q=hello&format=json", resp.StatusCode, resp.Header.Get("Location"))
			}
			// Search syntax: the echo is the words searched
			// (a-search-json-bang.txt: "!fb edge bang" echoes "edge bang"),
			// and so are the suggestions. The JSON instance echoes as
			// SearXNG does; an HTML page's box shows the query as typed,
			// and searxgate leaves the syntax out.
			for _, q := range []string{":de hello world", "<3 hello world", ":de-CH <3 hello world"} {
				_, m := get(q, "")
				if m["query"] != "hello world" {
					t.Errorf("%s echoes %q, SearXNG \"hello world\"", q, m["query"])
				}
				sugs, _ := m["suggestions"].([]any)
				if len(sugs) == 0 {
					t.Errorf("%s: no suggestions", q)
				}
				for _, s := range sugs {
					if s, _ := s.(string); !strings.HasPrefix(s, "hello world") {
						t.Errorf("%s: suggestion %q, SearXNG's are of the words searched", q, s)
					}
				}
			}
			// A bang naming what the instance runs (the sim's engines are
			// its own; every one has the general category).
			if _, m := get("!general edge bang", ""); m["query"] != bangFix["query"] {
				t.Errorf("!general edge bang echoes %q, SearXNG %q", m["query"], bangFix["query"])
			}
			// A bang naming an engine the instance does not run is a word
			// to SearXNG (the capture's instance runs fakeback, "fb"):
			// kept in JSON's echo; from an HTML page it is left out.
			want := bangFix["query"]
			if inst.name == "json" {
				want = "!fb edge bang"
			}
			if _, m := get("!fb edge bang", ""); m["query"] != want {
				t.Errorf("!fb edge bang echoes %q, want %q", m["query"], want)
			}
		})
	}
}
