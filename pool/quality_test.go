package pool

import (
	"encoding/json"
	"slices"
	"testing"
	"time"
)

var suspendedBig = [][2]string{{"google", "Suspended: CAPTCHA"}, {"bing", "Suspended: too many requests"}, {"duckduckgo", "Suspended: access denied"}}

// thinAnswer is what a thin instance's answer says: 4 results of 10 from
// wikipedia, the big engines suspended.
func thinAnswer() Answer {
	return Answer{Hits: 4, Page: 10, Engines: []string{"wikipedia"}, Suspended: suspendedBig}
}

func fullAnswer() Answer {
	return Answer{Hits: 10, Page: 10, Engines: []string{"google", "bing", "wikipedia"}}
}

// measured gives each url n good answers of latency lat and the quality a.
func (f *fixture) measured(t *testing.T, url string, lat time.Duration, a Answer, n int) {
	t.Helper()
	for range n {
		f.record(t, url, Outcome{Kind: OK, Hits: a.Hits}, lat)
		f.Learn(url, a)
	}
}

func TestThinRanksAfterFull(t *testing.T) {
	const thin, full, slow = "https://thin.example/", "https://full.example/", "https://slow.example/"
	f := newFixture(t, Config{})
	f.Seed([]Prior{{URL: thin}, {URL: full}, {URL: slow}})
	f.measured(t, thin, 60*time.Millisecond, thinAnswer(), 5)
	f.measured(t, full, 450*time.Millisecond, fullAnswer(), 5)
	f.measured(t, slow, 5*time.Second, fullAnswer(), 5)
	// Expected time to a good answer: 60 + 3000*(1-f) for the thin one
	// (f = 0.4), 450 for the full one; the full one
	// 5 s away is slower than a thin answer costs.
	if got := f.Rank(0, nil); !slices.Equal(got, []string{full, thin, slow}) {
		t.Fatalf("rank %v, want full, thin, slow", got)
	}
	st := f.Stats(thin)
	if !st.Thin || st.Quality.Fullness != 0.4 || st.Circuit != Closed {
		t.Fatalf("thin stats: thin %v fullness %.2f circuit %v; want thin, 0.4, closed", st.Thin, st.Quality.Fullness, st.Circuit)
	}
	if got := f.Thin(); !got[thin] || got[full] || got[slow] {
		t.Fatalf("Thin() = %v, want only %s", got, thin)
	}
}

func TestAllFullRanksAsLatency(t *testing.T) {
	// Every instance full: the ranking is the seeds' one, by latency.
	const a, b, c = "https://a.example/", "https://b.example/", "https://c.example/"
	f := newFixture(t, Config{})
	f.Seed([]Prior{{URL: a}, {URL: b}, {URL: c}})
	f.measured(t, a, 300*time.Millisecond, fullAnswer(), 2)
	f.measured(t, b, 100*time.Millisecond, fullAnswer(), 2)
	f.record(t, c, Outcome{Kind: OK}, 200*time.Millisecond) // never learned
	if got := f.Rank(0, nil); !slices.Equal(got, []string{b, c, a}) {
		t.Fatalf("rank %v, want b, c, a (by latency)", got)
	}
}

func TestSuspendedEngineNeverOpensCircuit(t *testing.T) {
	const u = "https://thin.example/"
	f := newFixture(t, Config{SoftStrikes: 1, FailStrikes: 1})
	f.Seed([]Prior{{URL: u}})
	f.ev.take()
	f.measured(t, u, 50*time.Millisecond, thinAnswer(), 20)
	st := f.Stats(u)
	if st.Circuit != Closed || st.FailureRate != 0 || st.Health < 90 {
		t.Fatalf("circuit %v failure %.2f health %d: a suspended engine is state, not a failure", st.Circuit, st.FailureRate, st.Health)
	}
	var names []string
	for _, s := range st.Quality.Suspended {
		names = append(names, s.Engine+": "+s.Reason)
	}
	want := []string{"bing: Suspended: too many requests", "duckduckgo: Suspended: access denied", "google: Suspended: CAPTCHA"}
	if !slices.Equal(names, want) {
		t.Fatalf("suspended %v, want %v", names, want)
	}
	if ev := f.ev.take(); len(ev) != 0 {
		t.Fatalf("events %+v, want none", ev)
	}
}

func TestQueryOwnedEmptinessKeepsQuality(t *testing.T) {
	const u = "https://full.example/"
	f := newFixture(t, Config{})
	f.Seed([]Prior{{URL: u}})
	f.measured(t, u, 50*time.Millisecond, fullAnswer(), 3)
	// Few results with every engine answering are the query's; an answer
	// the proxy found the query's own is learned with Page 0.
	f.Learn(u, Answer{Hits: 2, Page: 10, Engines: []string{"google"}})
	f.Learn(u, Answer{Hits: 0, Page: 0, Suspended: suspendedBig[:1]})
	// Engines failing with a timeout say nothing of the instance.
	f.Learn(u, Answer{Hits: 1, Page: 10, Suspended: [][2]string{{"bing", "timeout"}}})
	st := f.Stats(u)
	if st.Quality.Fullness != 1 || st.Thin {
		t.Fatalf("fullness %.2f thin %v, want 1, false", st.Quality.Fullness, st.Thin)
	}
}

func TestThinFadesAndEnginesRecover(t *testing.T) {
	const u = "https://thin.example/"
	f := newFixture(t, Config{QualityHalfLife: time.Hour})
	f.Seed([]Prior{{URL: u}})
	f.measured(t, u, 50*time.Millisecond, thinAnswer(), 10)
	before := f.Stats(u).Quality.Fullness
	f.clock.Advance(time.Hour)
	f.Sweep()
	after := f.Stats(u).Quality.Fullness
	if want := 1 - (1-before)/2; after < want-1e-9 || after > want+1e-9 {
		t.Fatalf("after one half-life fullness %.3f, want %.3f (from %.3f)", after, want, before)
	}
	if got := f.Lacking([]string{"google"}, ""); !got[u] {
		t.Fatalf("Lacking(google) = %v, want %s (google suspended there)", got, u)
	}
	f.Learn(u, fullAnswer()) // google answers again
	if got := f.Lacking([]string{"google"}, ""); got[u] {
		t.Fatalf("Lacking(google) = %v after google answered", got)
	}
	// The too-many-requests suspension ends after SearXNG's hour.
	f.clock.Advance(suspendTooMany)
	if got := f.Lacking([]string{"bing"}, ""); got[u] {
		t.Fatalf("Lacking(bing) = %v after its suspension ended", got)
	}
}

func TestCategoryKeptApart(t *testing.T) {
	const u, v = "https://a.example/", "https://b.example/"
	f := newFixture(t, Config{})
	f.Seed([]Prior{{URL: u}, {URL: v}})
	for range 5 {
		f.Learn(u, Answer{Category: "news", Hits: 0, Page: 10, Suspended: [][2]string{{"bing news", "Suspended: CAPTCHA"}}})
		f.Learn(u, fullAnswer())
		f.Learn(v, Answer{Category: "news", Hits: 10, Page: 10, Engines: []string{"bing news"}})
	}
	st := f.Stats(u)
	if st.Thin || st.Quality.Categories["news"] > 0.5 {
		t.Fatalf("general fullness %.2f, news %.2f: want general full, news thin", st.Quality.Fullness, st.Quality.Categories["news"])
	}
	if got := f.Lacking(nil, "news"); !got[u] || got[v] {
		t.Fatalf("Lacking(news) = %v, want %s only", got, u)
	}
	if got := f.Lacking(nil, "general"); got != nil {
		t.Fatalf("Lacking(general) = %v, want none", got)
	}
}

func TestQualitySurvivesRestart(t *testing.T) {
	const u, w = "https://thin.example/", "https://full.example/"
	f := newFixture(t, Config{})
	f.Seed([]Prior{{URL: u}, {URL: w}})
	f.measured(t, u, 60*time.Millisecond, thinAnswer(), 5)
	f.measured(t, w, 400*time.Millisecond, fullAnswer(), 5)
	js, err := json.Marshal(f.Export()) // as store keeps it
	if err != nil {
		t.Fatal(err)
	}
	var states []InstanceState
	if err := json.Unmarshal(js, &states); err != nil {
		t.Fatal(err)
	}
	g := newFixture(t, Config{})
	g.clock.Set(f.clock.Now())
	g.Import(states)
	a, b := f.Stats(u), g.Stats(u)
	if a.Quality.Fullness != b.Quality.Fullness || len(b.Quality.Suspended) != 3 || len(b.Quality.Answering) != 1 || !b.Thin {
		t.Fatalf("after a restart: %+v\nbefore: %+v", b.Quality, a.Quality)
	}
	if got := g.Rank(0, nil); !slices.Equal(got, []string{w, u}) {
		t.Fatalf("rank after a restart %v, want the full one first", got)
	}
}

func TestSeedFailingIsAPrior(t *testing.T) {
	const u, v = "https://a.example/", "https://b.example/"
	f := newFixture(t, Config{})
	f.Seed([]Prior{{URL: u}, {URL: v}})
	f.Learn(v, Answer{Hits: 10, Page: 10, Engines: []string{"google"}}) // v's answers already said
	before := f.Rank(0, nil)
	f.SeedFailing(map[string][]string{u: {"google"}, v: {"google"}, "https://unknown.example/": {"google"}})
	if got := f.Lacking([]string{"google"}, ""); !got[u] || got[v] {
		t.Fatalf("Lacking(google) = %v, want %s only (an answer beats the directory)", got, u)
	}
	st := f.Stats(u)
	if len(st.Quality.Suspended) != 1 || st.Quality.Suspended[0].Reason != ReasonDirectory || st.Thin || st.Quality.Samples != 0 {
		t.Fatalf("stats %+v: want google suspended by the directory, fullness unknown", st.Quality)
	}
	if after := f.Rank(0, nil); !slices.Equal(after, before) {
		t.Fatalf("rank %v, was %v: the directory says nothing of fullness", after, before)
	}
	f.Learn(u, Answer{Engines: []string{"google"}})
	if got := f.Lacking([]string{"google"}, ""); got[u] {
		t.Fatalf("Lacking(google) = %v after google answered there", got)
	}
}
