package sim

import (
	"strings"
	"testing"
)

// TestLocalLinks: with Config.LocalLinks every result links to a page its
// instance serves, an article about the query; thumbnails are on the
// instance either way, real PNGs. Without it, results keep the example
// domains.
func TestLocalLinks(t *testing.T) {
	for _, local := range []bool{true, false} {
		f := startFleet(t, Config{Seed: 5, LocalLinks: local, Instances: []InstanceConfig{{ID: "here", Behaviour: Fast, Latency: -1, JSON: true}}})
		in := f.Instance("here")
		a := get(t, searchURL(in, "tidal locking", "json"), nil)
		if a.err != nil || a.status != 200 {
			t.Fatalf("search: %v %d", a.err, a.status)
		}
		results, _ := a.json(t)["results"].([]any)
		thumbs := 0
		for _, r := range results {
			m := r.(map[string]any)
			u, _ := m["url"].(string)
			if got := strings.HasPrefix(u, in.URL()+"sim/page/here/tidal-locking/"); got != local {
				t.Errorf("local links %v: result URL %s", local, u)
			}
			if th, _ := m["thumbnail"].(string); th != "" {
				thumbs++
				if !strings.HasPrefix(th, in.URL()+"sim/img/") {
					t.Errorf("thumbnail %s is not on the instance", th)
				} else if img := get(t, th, nil); img.status != 200 || !strings.HasPrefix(string(img.body), "\x89PNG") {
					t.Errorf("thumbnail %s: %d, not a PNG", th, img.status)
				}
			}
			if local {
				page := get(t, u, nil)
				if page.status != 200 || !strings.Contains(string(page.body), "<h1>tidal locking: result ") || strings.Count(string(page.body), "<p>") < 4 {
					t.Errorf("page %s: %d %.200s", u, page.status, page.body)
				}
			}
		}
		if len(results) == 0 || thumbs == 0 {
			t.Errorf("%d results, %d thumbnails: the test proves nothing", len(results), thumbs)
		}
	}
}

// TestMixOffersSuggestions: a named fleet has instances whose /config names
// an autocomplete backend, and others that name none.
func TestMixOffersSuggestions(t *testing.T) {
	cfgs, err := Mix("mixed", 30, 1)
	if err != nil {
		t.Fatal(err)
	}
	with := 0
	for _, c := range cfgs {
		if c.Autocomplete != "" {
			with++
		}
	}
	if with == 0 || with == len(cfgs) {
		t.Errorf("%d of %d instances offer suggestions, want some", with, len(cfgs))
	}
}
