package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/searxgate/searxgate/internal/clock"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/sim"
)

func TestStatusPageAndJSON(t *testing.T) {
	lf := startLive(t, []sim.InstanceConfig{
		{ID: "good", Behaviour: sim.Fast, JSON: true, Latency: 5 * time.Millisecond},
		{ID: "challenge", Behaviour: sim.CloudflareChallenge403, Latency: -1},
	})
	lf.pool.Add("https://own.example/", pool.Own)
	lf.pool.Disable("https://own.example/")
	_, c := serve(t, Config{Proxy: lf.proxy, Pool: lf.pool, Version: "9.9"})
	for i := range 4 {
		if r := c.get(fmt.Sprintf("/search?q=status+%d&format=json", i)); r.status != 200 {
			t.Fatalf("search %d: %d %s", i, r.status, r.body)
		}
	}

	r := c.get("/status.json")
	var rep StatusReport
	if err := json.Unmarshal([]byte(r.body), &rep); err != nil {
		t.Fatalf("%v: %s", err, r.body)
	}
	if rep.Totals.Searches != 4 || rep.Totals.Instances != 3 || rep.Totals.Upstream == 0 || rep.Version != "9.9" {
		t.Errorf("totals %+v", rep.Totals)
	}
	byURL := map[string]InstanceStatus{}
	for _, is := range rep.Instances {
		byURL[is.URL] = is
	}
	good := byURL[lf.fleet.Instance("good").URL()]
	if good.Successes == 0 || good.OutcomesByKind["ok"] == 0 || len(good.RecentMS) == 0 || good.Format == "" || good.BudgetUsed10m == 0 {
		t.Errorf("the good instance: %+v", good)
	}
	if own := byURL["https://own.example/"]; !own.Disabled || own.Usable || own.Tier != pool.Own {
		t.Errorf("the disabled own instance: %+v", own)
	}
	var raw map[string][]map[string]any
	_ = json.Unmarshal([]byte(r.body), &raw)
	for _, k := range []string{"url", "circuit", "health", "latency_ms", "failure_rate", "refusals", "last_outcome", "format", "outcomes_by_kind"} {
		if _, ok := raw["instances"][0][k]; !ok {
			t.Errorf("status.json instance lacks %q", k)
		}
	}

	r = c.get("/status")
	if r.status != 200 {
		t.Fatalf("status %d", r.status)
	}
	assertSafePage(t, r.body)
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	rows := doc.Find("table#instances tbody tr")
	if rows.Length() != 3 {
		t.Fatalf("%d rows in the instance table, want 3", rows.Length())
	}
	// Best first: the order of the pool's Snapshot.
	for i, st := range lf.pool.Snapshot() {
		if got := strings.TrimSpace(rows.Eq(i).Find("th").First().Find("a").Text()); got != hostOf(st.URL) {
			t.Errorf("row %d is %q, want %q", i, got, hostOf(st.URL))
		}
	}
	goodRow := rows.FilterFunction(func(_ int, s *goquery.Selection) bool {
		return strings.Contains(s.Find("th").Text(), hostOf(lf.fleet.Instance("good").URL()))
	})
	if goodRow.Find("svg.spark polyline").Length() != 1 || goodRow.Find("svg.bar rect.ok").Length() != 1 {
		t.Errorf("the good instance has no sparkline or outcome bar: %s", must(goodRow.Html()))
	}
	if txt := totalsText(doc); !strings.Contains(txt, "Client searches: 4;") || !strings.Contains(txt, "Failed: no answer: 0;") {
		t.Errorf("totals: %q", txt)
	}
	if !strings.Contains(r.body, `<span class="pill disabled">disabled</span>`) {
		t.Error("the disabled instance is not shown as disabled")
	}
}

func must(s string, _ error) string { return s }

// TestStatusFailedSearches: searches that got no answer are counted under
// their own label, not among those served.
func TestStatusFailedSearches(t *testing.T) {
	lf := startLive(t, []sim.InstanceConfig{{ID: "challenge", Behaviour: sim.CloudflareChallenge403, Latency: -1}})
	_, c := serve(t, Config{Proxy: lf.proxy, Pool: lf.pool})
	for i := range 2 {
		if r := c.get(fmt.Sprintf("/search?q=nothing+%d&format=json", i)); r.status == 200 {
			t.Fatalf("search %d answered: %s", i, r.body)
		}
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(c.get("/status").body))
	if err != nil {
		t.Fatal(err)
	}
	txt := totalsText(doc)
	if !strings.Contains(txt, "Client searches: 2;") || !strings.Contains(txt, "Failed: no answer: 2;") || strings.Contains(txt, "served") {
		t.Errorf("totals: %q", txt)
	}
}

// totalsText is the status page's totals as "label: value; ...".
func totalsText(doc *goquery.Document) string {
	var b strings.Builder
	doc.Find("dl.totals div").Each(func(_ int, d *goquery.Selection) {
		b.WriteString(strings.TrimSpace(d.Find("dt").Text()) + ": " + strings.Join(strings.Fields(d.Find("dd").Text()), " ") + "; ")
	})
	return b.String()
}

func TestBreakAfter(t *testing.T) {
	for in, want := range map[string]string{
		"":                             "",
		"sx.example.dev":               "sx.|example.|dev",
		"example.com/searxng/":         "example.|com/|searxng/",
		"127.0.0.1:8888":               "127.|0.|0.|1:8888",
		"search.privacy.example.org.":  "search.|privacy.|example.|org.",
		"no-separators-in-this-string": "no-separators-in-this-string",
	} {
		if got := strings.Join(breakAfter(in, "./"), "|"); got != want {
			t.Errorf("breakAfter(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSparkline(t *testing.T) {
	if sp := sparklineOf(nil, nil, 120, 24); sp.Points != "" {
		t.Fatalf("empty: %+v", sp)
	}
	sp := sparklineOf([]float32{100, 200, 50, 200}, []string{"ok", "refused", "ok", "failed"}, 120, 24)
	pts := strings.Fields(sp.Points)
	if len(pts) != 4 {
		t.Fatalf("points %q", sp.Points)
	}
	var xs, ys []float64
	for _, p := range pts {
		var x, y float64
		if _, err := fmt.Sscanf(p, "%g,%g", &x, &y); err != nil {
			t.Fatal(err)
		}
		if x < 0 || x > 120 || y < 0 || y > 24 {
			t.Errorf("point %s outside the box", p)
		}
		xs, ys = append(xs, x), append(ys, y)
	}
	if !(xs[0] < xs[1] && xs[1] < xs[2] && xs[2] < xs[3]) {
		t.Errorf("x not increasing: %v", xs)
	}
	// The slowest is at the top (smallest y), the fastest lowest.
	if !(ys[1] < ys[0] && ys[0] < ys[2]) || ys[1] != ys[3] {
		t.Errorf("y does not follow latency: %v", ys)
	}
	if len(sp.Markers) != 2 || sp.Markers[0].Class != "refused" || sp.Markers[1].Class != "failed" || sp.Max != "200 ms" {
		t.Errorf("markers %+v, max %q", sp.Markers, sp.Max)
	}
	if one := sparklineOf([]float32{5}, []string{"ok"}, 120, 24); len(strings.Fields(one.Points)) != 2 {
		t.Errorf("one latency draws %q, want a flat line", one.Points)
	}
}

func TestOutcomeBar(t *testing.T) {
	segs, title := outcomeBar(map[string]uint64{"ok": 3, "refused": 1}, 120)
	if len(segs) != 2 || segs[0].Class != "ok" || segs[0].W != "90.00" || segs[1].X != "90.00" || segs[1].W != "30.00" {
		t.Fatalf("%+v", segs)
	}
	if title != "ok 3, refused 1" {
		t.Errorf("title %q", title)
	}
	if segs, _ := outcomeBar(nil, 120); segs != nil {
		t.Errorf("no outcomes drew %+v", segs)
	}
}

// fakeAutocomplete suggests "<q> one", "<q> two", or fails.
type fakeAutocomplete struct {
	err      error
	lastLang string
}

func (f *fakeAutocomplete) Autocomplete(_ context.Context, q, lang string) ([]string, error) {
	f.lastLang = lang
	if f.err != nil {
		return nil, f.err
	}
	return []string{q + " one", "", q + " two\x00"}, nil
}

func TestAutocompleter(t *testing.T) {
	ac := &fakeAutocomplete{}
	_, c := serve(t, Config{Search: &fakeSearch{}, Autocomplete: ac})
	tests := []struct {
		uri     string
		headers []string
		ctype   string
		body    string
	}{
		{"/autocompleter?q=go", nil, "application/x-suggestions+json", `["go",["go one","go two"]]`},
		{"/autocompleter?q=go", []string{"X-Requested-With", "XMLHttpRequest"}, "application/json", `["go one","go two"]`},
		{"/autocompleter?q=", nil, "application/x-suggestions+json", `["",[]]`},
		{"/autocompleter", []string{"X-Requested-With", "XMLHttpRequest"}, "application/json", `[]`},
	}
	for _, tt := range tests {
		r := c.get(tt.uri, tt.headers...)
		if r.status != 200 || r.header["Content-Type"] != tt.ctype || r.body != tt.body {
			t.Errorf("%s %v: %d %q %s; want %q %s", tt.uri, tt.headers, r.status, r.header["Content-Type"], r.body, tt.ctype, tt.body)
		}
	}
	if r := c.do("POST", "/autocompleter", "q=po&language=de-CH"); r.body != `["po",["po one","po two"]]` || ac.lastLang != "de-CH" {
		t.Errorf("POST: %s, language %q", r.body, ac.lastLang)
	}
	c.get("/autocompleter?q=x&language=../../etc")
	if ac.lastLang != "" {
		t.Errorf("a bad language was passed on: %q", ac.lastLang)
	}
	ac.err = errors.New("no instance offers autocompletion now")
	if r := c.get("/autocompleter?q=go"); r.status != 200 || r.body != `["go",[]]` {
		t.Errorf("when no instance suggests: %d %s", r.status, r.body)
	}
}

func TestConfigShape(t *testing.T) {
	p := pool.New(pool.Config{})
	p.Add("https://a.example/", pool.Public)
	_, c := serve(t, Config{Search: &fakeSearch{}, Pool: p, Version: "1.0", InstanceName: "home"})
	r := c.get("/config")
	var v map[string]any
	if err := json.Unmarshal([]byte(r.body), &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"autocomplete", "categories", "engines", "instance_name", "limiter", "locales", "plugins", "public_instance", "safe_search", "version", "default_locale", "brand"} {
		if _, ok := v[k]; !ok {
			t.Errorf("/config lacks %q", k)
		}
	}
	cats, _ := v["categories"].([]any)
	if v["instance_name"] != "home" || v["version"] != "1.0" || len(cats) != len(searxngCategories) || cats[0] != "general" {
		t.Errorf("/config: %s", r.body)
	}
	if _, ok := v["engines"].([]any); !ok {
		t.Errorf("engines is not a list: %v", v["engines"])
	}
}

// TestConfigListsThePoolsEngines: once searxgate has read its instances'
// /config, its own /config lists the engines they run.
func TestConfigListsThePoolsEngines(t *testing.T) {
	live := startLive(t, []sim.InstanceConfig{{Behaviour: sim.Fast, Latency: -1, JSON: true}})
	// A search makes the proxy read the instance's /config in the background.
	if _, err := live.proxy.Search(context.Background(), proxy.Request{Query: "engines", PageNo: 1, Format: proxy.FormatJSON}); err != nil {
		t.Fatal(err)
	}
	if err := live.proxy.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, c := serve(t, Config{Proxy: live.proxy, Pool: live.pool})
	var v struct {
		Categories []string `json:"categories"`
		Engines    []struct {
			Name       string   `json:"name"`
			Categories []string `json:"categories"`
			Enabled    bool     `json:"enabled"`
			Instances  int      `json:"instances"`
		} `json:"engines"`
	}
	r := c.get("/config")
	if err := json.Unmarshal([]byte(r.body), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Engines) == 0 {
		t.Fatalf("/config lists no engines after the instance's /config was read: %s", r.body)
	}
	for _, e := range v.Engines {
		if e.Name == "" || !e.Enabled || e.Instances != 1 || len(e.Categories) == 0 {
			t.Errorf("engine %+v: want a name, enabled, 1 instance, its categories", e)
		}
	}
	// Only the categories the pool's engines have, as SearXNG lists its
	// engines' categories.
	have := map[string]bool{}
	for _, e := range v.Engines {
		for _, c := range e.Categories {
			have[c] = true
		}
	}
	if len(v.Categories) == 0 || v.Categories[0] != "general" || len(v.Categories) != len(have) {
		t.Errorf("categories %v, the engines' %v", v.Categories, have)
	}
	for _, c := range v.Categories {
		if !have[c] {
			t.Errorf("category %q listed, no engine of the pool has it", c)
		}
	}
}

// TestStatusProblemAndQueue: the problem that stops every search is a
// banner on /status and a field of /status.json; the queue and admission
// counters are among the totals.
func TestStatusProblemAndQueue(t *testing.T) {
	p, px := publicPool(t)
	tests := []struct {
		name    string
		problem func() string
		want    string
	}{
		{"no problem", nil, ""},
		{"nothing wrong", func() string { return "" }, ""},
		{"private addresses", func() string {
			return "no usable instance: 30 refused as private addresses: add --allow-private"
		}, "no usable instance: 30 refused as private addresses: add --allow-private"},
		{"hostile text", func() string { return "<script>alert(1)</script>\u202e" }, "<script>alert(1)</script>\u202e"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c := serve(t, Config{Proxy: px, Pool: p, Problem: tt.problem})
			var raw map[string]any
			if err := json.Unmarshal([]byte(c.get("/status.json").body), &raw); err != nil {
				t.Fatal(err)
			}
			if got, ok := raw["problem"]; !ok || got != tt.want {
				t.Errorf("status.json problem = %v (present %v), want %q", got, ok, tt.want)
			}
			totals, _ := raw["totals"].(map[string]any)
			for _, k := range []string{"queue_depth", "queue_wait_avg_ms", "queue_refused", "client_limited"} {
				if v, ok := totals[k]; !ok || v != 0.0 {
					t.Errorf("totals.%s = %v (present %v), want 0", k, v, ok)
				}
			}
			page := c.get("/status").body
			assertSafePage(t, page)
			doc, err := goquery.NewDocumentFromReader(strings.NewReader(page))
			if err != nil {
				t.Fatal(err)
			}
			banner := doc.Find(`p.problem[role="alert"]`)
			if tt.want == "" {
				if banner.Length() != 0 {
					t.Errorf("a banner with nothing wrong: %q", banner.Text())
				}
			} else if banner.Length() != 1 || !strings.Contains(banner.Text(), clean(tt.want, maxContent)) {
				t.Errorf("banner %q, want it to say %q", banner.Text(), tt.want)
			}
			for _, label := range []string{"Waiting for a slot", "Refused: no slot in time", "Refused: client over its share"} {
				if !strings.Contains(page, label) {
					t.Errorf("the totals lack %q", label)
				}
			}
		})
	}
}

// TestUsableAgreesEverywhere: /status (in words too), /status.json,
// /metrics and /about count as usable exactly what instance.Registry.Usable says, for
// every kind of instance: usable, own, out of budget within its circuit,
// disabled, an open circuit, half open with its trial out, as many
// searches in flight as it may have, and barred by its link-token check.
func TestUsableAgreesEverywhere(t *testing.T) {
	clk := clock.NewFake(fixedNow)
	p := pool.New(pool.Config{Clock: clk, MaxInFlight: 1})
	const good, own, spent, off, open, trial, full, barred = "https://good.example/", "https://own.example/", "https://spent.example/",
		"https://off.example/", "https://open.example/", "https://trial.example/", "https://full.example/", "https://barred.example/"
	want := map[string]proxy.Why{good: proxy.Ready, own: proxy.Ready, spent: proxy.WhyBudget, off: proxy.WhyDisabled,
		open: proxy.WhyCircuitOpen, trial: proxy.WhyTrialOut, full: proxy.WhyInFlight, barred: proxy.WhyLinkToken}
	for u := range want {
		p.Add(u, pool.Public)
	}
	p.Add(own, pool.Own)
	px, err := proxy.New(proxy.Config{Pool: p, Clock: clk, Budget: []proxy.Window{{Max: 1, Per: 20 * time.Second}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(px.Close)
	lease := func(u string) {
		ls, err := p.Checkout(t.Context(), 1, func(x string) bool { return x != u })
		if err != nil || len(ls) != 1 {
			t.Fatalf("%s: no lease: %v", u, err)
		}
		t.Cleanup(func() { p.Record(ls[0], pool.Outcome{Kind: pool.Cancelled}, 0) })
	}
	p.OpenUntil(trial, clk.Now().Add(time.Second), "test")
	clk.Advance(2 * time.Second)
	lease(trial)
	lease(full)
	now := clk.Now()
	read := proxy.Caps{ConfigAt: now, ConfigOK: true}
	barredTerms := read
	barredTerms.LinkToken = true
	terms := map[string]proxy.Caps{barred: barredTerms}
	for u := range want {
		if u != barred {
			terms[u] = read
		}
	}
	px.Instances().ImportCaps(terms)
	if !px.Instances().Budget().TakeAs(spent, false, now) {
		t.Fatal("the one search of the budget was refused")
	}
	p.Disable(off)
	p.OpenUntil(open, now.Add(time.Hour), "test")
	// Quality is state, not usability: a thin instance stays usable, and
	// every face says it is thin and why.
	p.Learn(good, pool.Answer{Hits: 4, Page: 10, Engines: []string{"wikipedia"},
		Suspended: [][2]string{{"google", "Suspended: CAPTCHA"}, {"bing", "Suspended: too many requests"}}})
	_, c := serve(t, Config{Proxy: px, Pool: p, Clock: clk})

	usable := 0
	for u, why := range want {
		if ok, w := px.Instances().Usable(p.Stats(u), now); w != why || ok != (why == proxy.Ready) {
			t.Fatalf("%s: Usable %v %q, want %q", u, ok, w, why)
		}
		if why == proxy.Ready {
			usable++
		}
	}
	var report StatusReport
	body := c.get("/status.json").body
	if err := json.Unmarshal([]byte(body), &report); err != nil {
		t.Fatal(err)
	}
	for _, is := range report.Instances {
		if why := want[is.URL]; is.Usable != (why == proxy.Ready) || is.WhyNot != why {
			t.Errorf("/status.json: %s usable %v why %q, want why %q", is.URL, is.Usable, is.WhyNot, why)
		}
		if thin := is.URL == good; is.Thin != thin || is.Thin != p.Stats(is.URL).Thin || (thin && len(is.Quality.Suspended) != 2) {
			t.Errorf("/status.json: %s thin %v suspended %v, want thin %v as the pool says", is.URL, is.Thin, is.Quality.Suspended, thin)
		}
		if why := want[is.URL]; !strings.Contains(body, `"url":"`+is.URL+`"`) || (why != proxy.Ready && !strings.Contains(body, `"why_not":"`+why.String()+`"`)) {
			t.Errorf("/status.json does not label %s %q", is.URL, why)
		}
	}
	if report.Totals.Usable != usable || len(report.Instances) != len(want) {
		t.Errorf("/status.json: %d usable of %d, want %d of %d", report.Totals.Usable, len(report.Instances), usable, len(want))
	}
	fams := parseProm(t, c.get("/metrics").body)
	if v, _ := value(fams["searxgate_instances_usable"]); v != float64(usable) {
		t.Errorf("/metrics: %v usable, want %d", v, usable)
	}
	for u := range want {
		if v, ok := value(fams["searxgate_instance_fullness_ratio"], "instance", u); !ok || v != p.Stats(u).Quality.Fullness {
			t.Errorf("/metrics: %s fullness %v (%v), want %v as the pool says", u, v, ok, p.Stats(u).Quality.Fullness)
		}
	}
	if body := c.get("/about").body; !strings.Contains(body, fmt.Sprintf("The pool has %d instances; %d can be searched now.", len(want), usable)) {
		t.Errorf("/about does not count %d usable of %d", usable, len(want))
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(c.get("/status").body))
	if err != nil {
		t.Fatal(err)
	}
	if n := doc.Find("tbody tr.unusable").Length(); n != len(want)-usable {
		t.Errorf("/status marks %d rows unusable, want %d", n, len(want)-usable)
	}
	doc.Find("tbody tr").Each(func(_ int, row *goquery.Selection) {
		u, _ := row.Find("th a").Attr("href")
		why, ok := want[u]
		if words := row.Find("small.why").Text(); !ok || words != whyWords[why] {
			t.Errorf("/status says of %s %q, want %q", u, words, whyWords[why])
		}
		cell := row.Find("td.quality")
		thin := strings.HasPrefix(cell.Text(), "thin (40 %)") && cell.HasClass("thin") &&
			cell.Find("small.suspended").Text() == "suspended: bing (Suspended: too many requests), google (Suspended: CAPTCHA)"
		if thin != (u == good) || (u == good && cell.Find("small.answering").Text() != "answering: wikipedia") {
			t.Errorf("/status says of %s's answers %q, want thin %v", u, cell.Text(), u == good)
		}
	})
	if got := doc.Find("dt:contains('Usable now') + dd").Text(); !strings.HasPrefix(got, fmt.Sprintf("%d of %d", usable, len(want))) {
		t.Errorf("/status: usable now %q, want %d of %d", got, usable, len(want))
	}
}

// TestWhyWords: every reason the proxy gives for an instance not taking a
// search now (proxy.Whys) has its words in web's one table, and reads as
// a sentence, never as the proxy's label; the table words nothing else.
func TestWhyWords(t *testing.T) {
	for _, why := range proxy.Whys {
		if got, ok := whyWords[why]; !ok || got == why.String() || !strings.Contains(got, " ") {
			t.Errorf("%s reads %q", why, got)
		}
	}
	if len(whyWords) != len(proxy.Whys) {
		t.Errorf("web words %d reasons, the proxy has %d", len(whyWords), len(proxy.Whys))
	}
}
