package instance

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/sim"
)

// TestEnginesKeepTheirCapabilities: what an instance's /config says of
// each engine (paging, languages, regions, safesearch, time range,
// timeout) is kept in its terms, and survives the store's JSON.
func TestEnginesKeepTheirCapabilities(t *testing.T) {
	e := newEnv(t, sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	u := e.urls[0]
	e.g.Ensure(u).Update(func(c *Caps) { *c = Caps{} })
	e.g.ReadTerms(e.urls)
	e.wait()
	c := e.g.Caps(u)
	if len(c.Engines) == 0 || c.EnginesV != EnginesVersion {
		t.Fatalf("engines %+v, version %d", c.Engines, c.EnginesV)
	}
	// The sim writes every engine as SearXNG 2024.10.5 does a general
	// engine with traits: paging, languages, safesearch, time ranges,
	// a 3 s timeout, its name's first two letters as shortcut.
	for _, en := range c.Engines {
		want := Engine{Name: en.Name, Categories: []string{"general"}, Shortcut: en.Name[:2], Paging: true, LanguageSupport: true,
			Languages: []string{}, Regions: []string{}, SafeSearch: true, TimeRangeSupport: true, Timeout: 3}
		if !reflect.DeepEqual(en, want) {
			t.Errorf("engine\n got %+v\nwant %+v", en, want)
		}
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back Caps
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for i, en := range back.Engines {
		was := c.Engines[i]
		if en.Name != was.Name || en.Paging != was.Paging || en.LanguageSupport != was.LanguageSupport || en.SafeSearch != was.SafeSearch ||
			en.TimeRangeSupport != was.TimeRangeSupport || en.Timeout != was.Timeout || en.Shortcut != was.Shortcut {
			t.Errorf("through the store: %+v, was %+v", en, was)
		}
	}
	if back.EnginesV != EnginesVersion {
		t.Errorf("through the store: engines version %d", back.EnginesV)
	}
}

// TestOlderTermsAreReadAgain: terms stored by a searxgate that kept the
// engines without their capabilities are read again at once; terms
// without engines wait for their day.
func TestOlderTermsAreReadAgain(t *testing.T) {
	e := newEnv(t,
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true})
	now := e.clock.Now()
	e.g.ImportCaps(map[string]Caps{
		e.urls[0]: {ConfigAt: now, ConfigOK: true, JSON: Yes, JSONAt: now, Engines: []Engine{{Name: "google", Categories: []string{"general"}}}},
		e.urls[1]: {ConfigAt: now, ConfigOK: true, JSON: Yes, JSONAt: now},
	})
	e.g.ReadTerms(e.urls)
	e.wait()
	ins := e.fleet.Instances()
	if n := ins[0].Truth().ConfigReads; n != 1 {
		t.Errorf("older terms with engines: %d /config reads, want 1", n)
	}
	if c := e.g.Caps(e.urls[0]); c.EnginesV != EnginesVersion || len(c.Engines) == 0 || c.Engines[0].Timeout != 3 {
		t.Errorf("older terms read again: %+v", c)
	}
	if n := ins[1].Truth().ConfigReads; n != 0 {
		t.Errorf("terms of the day without engines: %d /config reads, want 0", n)
	}
}

// TestImportedEnginesShareTheirCodes: terms restored from the store keep
// one copy of a list of codes many instances have (the same engine of the
// same version), and are not changed by it.
func TestImportedEnginesShareTheirCodes(t *testing.T) {
	g := New(Config{Pool: pool.New(pool.Config{})})
	codes := func() []string { return []string{"af", "de", "zh-HK", "imported-test"} }
	stored := map[string]Caps{}
	for _, u := range []string{"https://a.example/", "https://b.example/"} {
		stored[u] = Caps{ConfigOK: true, EnginesV: EnginesVersion, Engines: []Engine{{Name: "google", Languages: codes(), Regions: []string{"de-DE"}}}}
	}
	g.ImportCaps(stored)
	a, b := g.Caps("https://a.example/").Engines[0], g.Caps("https://b.example/").Engines[0]
	if !reflect.DeepEqual(a.Languages, codes()) || !reflect.DeepEqual(b.Regions, []string{"de-DE"}) {
		t.Fatalf("restored %+v / %+v", a, b)
	}
	if &a.Languages[0] != &b.Languages[0] || &a.Regions[0] != &b.Regions[0] {
		t.Error("two instances' same codes are kept twice")
	}
	if &stored["https://a.example/"].Engines[0].Languages[0] == &a.Languages[0] {
		t.Error("the terms kept are the caller's slices")
	}
}

// TestConfigErrorTyped: why a /config read failed is a typed error the
// caller asks with errors.Is and errors.As: ErrTermsUnread before any
// read, a *ConfigReadError with the HTTP status or the transport's reason
// after a failed one, nil after a good one; and it reads the same from
// terms restored from the store.
func TestConfigErrorTyped(t *testing.T) {
	e := newEnv(t,
		sim.InstanceConfig{Behaviour: sim.Fast, Latency: -1, JSON: true},
		sim.InstanceConfig{Behaviour: sim.CloudflareChallenge403, Latency: -1},
		sim.InstanceConfig{Behaviour: sim.Dead, Latency: -1})
	for _, u := range e.urls {
		e.g.Ensure(u).Update(func(c *Caps) { *c = Caps{} })
		if err := e.g.Caps(u).ConfigError(); !errors.Is(err, ErrTermsUnread) {
			t.Fatalf("%s before any read: %v, want ErrTermsUnread", u, err)
		}
	}
	e.g.ReadTermsNow(context.Background(), e.urls)
	if err := e.g.Caps(e.urls[0]).ConfigError(); err != nil {
		t.Errorf("a good read: %v", err)
	}
	var ce *ConfigReadError
	if err := e.g.Caps(e.urls[1]).ConfigError(); !errors.As(err, &ce) || ce.Status != 403 || err.Error() != "status 403" {
		t.Errorf("a 403: %v (%+v)", err, ce)
	}
	ce = nil
	dead := e.g.Caps(e.urls[2])
	if err := dead.ConfigError(); !errors.As(err, &ce) || ce.Status != 0 || ce.Reason == "" || err.Error() != dead.ConfigErr {
		t.Errorf("a dead instance: %v (%+v), ConfigErr %q", err, ce, dead.ConfigErr)
	}
	b, err := json.Marshal(dead)
	if err != nil {
		t.Fatal(err)
	}
	var back Caps
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got := back.ConfigError(); !reflect.DeepEqual(got, dead.ConfigError()) {
		t.Errorf("restored: %v, want %v", got, dead.ConfigError())
	}
}
