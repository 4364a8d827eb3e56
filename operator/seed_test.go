package operator

import (
	"slices"
	"testing"
	"time"

	"github.com/searxgate/searxgate/directory"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/store"
)

// TestSeedRule: a directory list seeds the pool with every entry but
// those the operator removed and those the address guard refuses (a
// literal private address without AllowPrivate), each with its prior
// and its failing engines; the operator's own instances stay; a refresh
// (Reseed) reads the pool's terms, the start-up Seed leaves that to the
// caller.
func TestSeedRule(t *testing.T) {
	st := &memStore{ops: map[string]store.Operator{
		"https://gone.example/": {URL: "https://gone.example/", Removed: true},
		"https://mine.example/": {URL: "https://mine.example/", Added: true},
	}}
	px := &fakeProxy{}
	p := pool.New(pool.Config{})
	o := New(Config{Pool: p, Terms: px, Answers: px, Store: st})
	if err := o.Restore(); err != nil {
		t.Fatal(err)
	}
	list := directory.List{From: directory.FromFile, Entries: []directory.Entry{
		{URL: "https://a.example/", Prior: 300 * time.Millisecond, Failing: []string{"google"}},
		{URL: "https://gone.example/", Prior: time.Second},
		{URL: "http://127.0.0.1:8888/"},
		{URL: "https://b.example/"},
	}}
	s := o.Seed(list)
	if s.Instances != 2 || len(s.Refused) != 1 || s.Refused[0].URL != "http://127.0.0.1:8888/" || s.Refused[0].Err == nil {
		t.Fatalf("seeded %+v", s)
	}
	var urls []string
	for _, st := range p.Snapshot() {
		urls = append(urls, st.URL)
	}
	slices.Sort(urls)
	if want := []string{"https://a.example/", "https://b.example/", "https://mine.example/"}; !slices.Equal(urls, want) {
		t.Fatalf("pool %v, want %v", urls, want)
	}
	a := p.Stats("https://a.example/")
	if a.PriorMS != 300 || len(a.Quality.Suspended) != 1 || a.Quality.Suspended[0].Engine != "google" {
		t.Errorf("a: prior %v ms, suspended %+v", a.PriorMS, a.Quality.Suspended)
	}
	if p.Stats("https://mine.example/").Tier != pool.Own {
		t.Error("the operator's own instance lost its tier")
	}
	if len(px.read) != 0 {
		t.Errorf("Seed read terms of %v; at start the caller reads them", px.read)
	}

	o2 := New(Config{Pool: p, Terms: px, Answers: px, Store: st, AllowPrivate: true})
	if err := o2.Restore(); err != nil {
		t.Fatal(err)
	}
	if s := o2.Reseed(list); s.Instances != 3 || len(s.Refused) != 0 {
		t.Fatalf("with AllowPrivate: %+v", s)
	}
	slices.Sort(px.read)
	if want := []string{"http://127.0.0.1:8888/", "https://a.example/", "https://b.example/", "https://mine.example/"}; !slices.Equal(px.read, want) {
		t.Errorf("Reseed read the terms of %v, want %v", px.read, want)
	}
}
