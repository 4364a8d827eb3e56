package web

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/proxy"
)

// TestConfigEnginesAsSearXNG: an instance's /config read (the capture of
// real SearXNG 2024.10.5) comes out of searxgate's /config engine by
// engine and field by field as SearXNG wrote it, with how many instances
// run each; engines several instances run are merged.
func TestConfigEnginesAsSearXNG(t *testing.T) {
	capt := readCapture(t, "a-config.txt")
	var fix struct {
		Categories []string         `json:"categories"`
		Engines    []map[string]any `json:"engines"`
	}
	if err := json.Unmarshal([]byte(capt.body), &fix); err != nil {
		t.Fatal(err)
	}
	terms, err := detect.ParseConfig([]byte(capt.body))
	if err != nil {
		t.Fatal(err)
	}
	const a, b, c = "https://a.example/", "https://b.example/", "https://c.example/"
	p, px := publicPool(t, a, b, c)
	px.Instances().ImportCaps(map[string]proxy.Caps{a: {ConfigAt: fixedNow, ConfigOK: true, Engines: proxy.EnginesOf(terms)}})
	_, cl := serve(t, Config{Proxy: px, Pool: p})
	read := func() (cats []string, engines []map[string]any) {
		t.Helper()
		var v struct {
			Categories []string         `json:"categories"`
			Engines    []map[string]any `json:"engines"`
		}
		if err := json.Unmarshal([]byte(cl.get("/config").body), &v); err != nil {
			t.Fatal(err)
		}
		return v.Categories, v.Engines
	}
	cats, engines := read()
	if !reflect.DeepEqual(cats, fix.Categories) {
		t.Errorf("categories %v, SearXNG %v", cats, fix.Categories)
	}
	if len(engines) != len(fix.Engines) {
		t.Fatalf("%d engines, SearXNG %d: %v", len(engines), len(fix.Engines), engines)
	}
	for i, want := range fix.Engines {
		got := engines[i]
		for k, v := range want {
			if g, ok := got[k]; !ok || !reflect.DeepEqual(g, v) {
				t.Errorf("engine %v: %s = %#v (present %v), SearXNG %#v", want["name"], k, g, ok, v)
			}
		}
		for k, v := range got {
			if _, ok := want[k]; !ok && k != "instances" {
				t.Errorf("engine %v: %s = %#v, a key SearXNG does not write", want["name"], k, v)
			}
		}
		if got["instances"] != 1.0 {
			t.Errorf("engine %v: instances %v, want 1", want["name"], got["instances"])
		}
	}

	// Two more instances run it, older or otherwise set up: it can do what
	// any of them can, in all their languages and regions, within the
	// longest of their timeouts.
	fb := func(e proxy.Engine) []proxy.Engine {
		e.Name, e.Categories, e.Shortcut = "fakeback", []string{"general"}, "fb"
		return []proxy.Engine{e}
	}
	px.Instances().ImportCaps(map[string]proxy.Caps{
		b: {ConfigAt: fixedNow, ConfigOK: true, Engines: fb(proxy.Engine{LanguageSupport: true, Languages: []string{"en", "de"},
			Regions: []string{"de-DE"}, SafeSearch: true, Timeout: 5})},
		c: {ConfigAt: fixedNow, ConfigOK: true, Engines: fb(proxy.Engine{Languages: []string{"fr", "en"}, TimeRangeSupport: true, Timeout: 2})},
	})
	_, engines = read()
	want := map[string]any{
		"name": "fakeback", "categories": []any{"general"}, "shortcut": "fb", "enabled": true, "instances": 3.0,
		"paging": true, "language_support": true, "languages": []any{"de", "en", "fr"}, "regions": []any{"de-DE"},
		"safesearch": true, "time_range_support": true, "timeout": 5.0,
	}
	if len(engines) != 1 || !reflect.DeepEqual(engines[0], want) {
		t.Errorf("merged over three instances:\n got %v\nwant %v", engines, want)
	}
	// What /config said is not changed by the merge.
	if e := px.Instances().Caps(b).Engines[0]; !reflect.DeepEqual(e.Languages, []string{"en", "de"}) || e.Paging {
		t.Errorf("the instance's own terms changed: %+v", e)
	}
}
