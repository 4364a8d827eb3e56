package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy/cache"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/searxgate/searxgate/sim"
)

// startFleet starts a sim fleet on 127.0.0.1 and writes its directory file.
func startFleet(t *testing.T, seed int64, instances []sim.InstanceConfig) (*sim.Fleet, string) {
	t.Helper()
	return startFleetConfig(t, sim.Config{Instances: instances, Seed: seed})
}

// startFleetConfig is startFleet for a fleet configured in full.
func startFleetConfig(t *testing.T, cfg sim.Config) (*sim.Fleet, string) {
	t.Helper()
	f, err := sim.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	path := filepath.Join(t.TempDir(), "instances.json")
	if err := os.WriteFile(path, f.Directory(), 0o644); err != nil {
		t.Fatal(err)
	}
	return f, path
}

// gateway is a searxgate running in-process on a free port.
type gateway struct {
	addr string
	app  *App
	stop func() error
}

// startGateway runs searxgate with the given flags (and --listen on a free
// port, --allow-private, a temp data folder unless given) until stop.
func startGateway(t *testing.T, directory, data string, flags ...string) *gateway {
	t.Helper()
	return startGatewayWith(t, nil, directory, data, flags...)
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func (g *gateway) get(t *testing.T, path string, header map[string]string) answer {
	t.Helper()
	return g.do(t, http.MethodGet, path, nil, header)
}

// do sends one request to the gateway with header (a "Host" entry sets
// the request's host) and reads the whole answer.
func (g *gateway) do(t *testing.T, method, path string, body io.Reader, header map[string]string) answer {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+g.addr+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := loopbackClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header, b}
}

// loopbackClient follows redirects only on loopback: a bang's redirect to
// a public site is read, never followed (nothing a test does leaves the
// machine).
var loopbackClient = &http.Client{CheckRedirect: func(req *http.Request, via []*http.Request) error {
	if ip, err := netip.ParseAddr(req.URL.Hostname()); err != nil || !ip.IsLoopback() {
		return http.ErrUseLastResponse
	}
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	return nil
}}

// onTopic reports whether a SearXNG JSON answer has results that mention
// every word of q.
func onTopic(body []byte, q string) bool {
	var r struct {
		Query   string `json:"query"`
		Results []struct {
			Title, Content string
		} `json:"results"`
	}
	if json.Unmarshal(body, &r) != nil || len(r.Results) == 0 || r.Query != q {
		return false
	}
	for _, x := range r.Results {
		text := strings.ToLower(x.Title + " " + x.Content)
		for _, w := range strings.Fields(strings.ToLower(q)) {
			if !strings.Contains(text, w) {
				return false
			}
		}
	}
	return true
}

func totalSearches(f *sim.Fleet) uint64 {
	var n uint64
	for _, tr := range f.Truth() {
		n += tr.Searches
	}
	return n
}

func TestMixedFleetAnswersWithinBudget(t *testing.T) {
	mix, err := sim.Mix("mixed", 24, 7)
	if err != nil {
		t.Fatal(err)
	}
	fleet, dir := startFleet(t, 7, mix)
	// A client alone may spend half of the public pool's 10-minute budget
	// (the rest is kept for a newcomer: TestAClientAloneLeavesAReserve);
	// 12 a 10 minutes on 24 instances gives this one client 144, room for
	// its 80 searches and the retries the mixed fleet's bad instances
	// cost, while an instance's own budget is still checked below.
	const budget10m = 12
	// 80 searches in a few seconds from one address is a load test, not a
	// client: the client limit is off here (TestClientLimit tests it).
	g := startGateway(t, dir, "", "--budget-10m", fmt.Sprint(budget10m), "--client-rate", "0")

	const searches, workers = 80, 8
	var mu sync.Mutex
	good := 0
	var failures []string
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				q := fmt.Sprintf("mixed fleet query%d", i)
				a := g.get(t, "/search?format=json&q="+strings.ReplaceAll(q, " ", "+"), nil)
				mu.Lock()
				if a.status == 200 && onTopic(a.body, q) {
					good++
				} else {
					failures = append(failures, fmt.Sprintf("%d %s", a.status, a.body))
				}
				mu.Unlock()
			}
		}()
	}
	for i := range searches {
		next <- i
	}
	close(next)
	wg.Wait()
	if good*100 < searches*99 {
		t.Fatalf("%d of %d searches answered on topic, want ≥ 99%%; failures: %v", good, searches, failures)
	}
	for url, tr := range fleet.Truth() {
		if tr.InsideRetryAfter > 0 {
			t.Errorf("%s (%s) got %d searches inside an announced Retry-After", url, tr.Behaviour, tr.InsideRetryAfter)
		}
		if tr.Searches > budget10m {
			t.Errorf("%s (%s) got %d searches, over the budget of %d per 10 min", url, tr.Behaviour, tr.Searches, budget10m)
		}
		if tr.BotViolations > 0 || tr.ClientLeaks > 0 {
			t.Errorf("%s saw %d bot-check violations and %d client leaks", url, tr.BotViolations, tr.ClientLeaks)
		}
	}
}

func TestCacheAndCoalescing(t *testing.T) {
	fleet, dir := startFleet(t, 1, []sim.InstanceConfig{
		{ID: "slowish", Behaviour: sim.Medium, Latency: 600 * time.Millisecond, JSON: true},
	})
	g := startGateway(t, dir, "")

	// Ten identical searches at once: one upstream search.
	var wg sync.WaitGroup
	answers := make([]answer, 10)
	start := make(chan struct{})
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			answers[i] = g.get(t, "/search?q=coalesce+me&format=json", nil)
		}()
	}
	close(start)
	wg.Wait()
	for i, a := range answers {
		if a.status != 200 || !onTopic(a.body, "coalesce me") {
			t.Fatalf("answer %d: %d %s", i, a.status, a.body)
		}
	}
	if n := totalSearches(fleet); n != 1 {
		t.Fatalf("10 identical concurrent searches made %d upstream searches, want 1", n)
	}

	// The same search again: from the cache, no upstream search.
	a := g.get(t, "/search?q=coalesce+me&format=json", nil)
	if a.status != 200 || a.header.Get("X-Searxgate-Cache") != "hit" {
		t.Fatalf("repeat: %d, cache header %q", a.status, a.header.Get("X-Searxgate-Cache"))
	}
	// In another format too: the cache holds the results, not the format.
	if a := g.get(t, "/search?q=coalesce+me&format=csv", nil); a.status != 200 || !strings.Contains(string(a.body), "coalesce me") {
		t.Fatalf("csv from cache: %d %s", a.status, a.body)
	}
	if n := totalSearches(fleet); n != 1 {
		t.Fatalf("cached searches reached the fleet: %d upstream searches", n)
	}
}

func TestEverythingRefuses(t *testing.T) {
	_, dir := startFleet(t, 3, []sim.InstanceConfig{
		{Behaviour: sim.DDoSGuard},
		{Behaviour: sim.CloudflareChallenge403},
		{Behaviour: sim.AnubisChallenge},
		{Behaviour: sim.Unavailable503},
	})
	deadline := 2 * time.Second
	g := startGateway(t, dir, "", "--deadline", deadline.String())
	start := time.Now()
	a := g.get(t, "/search?q=nobody+answers&format=json", nil)
	took := time.Since(start)
	body := decodeNoAnswer(t, a)
	if body.Error == "" || len(body.Tried) == 0 {
		t.Fatalf("503 body does not say what was tried: %s", a.body)
	}
	for _, tr := range body.Tried {
		if tr.Instance == "" || tr.Reason == "" {
			t.Errorf("attempt without instance or reason: %+v", tr)
		}
	}
	// Generous slack: the point is that it does not hang.
	if took > deadline+2*time.Second {
		t.Fatalf("the 503 took %v, deadline %v", took, deadline)
	}
}

func TestUpstreamSeesNothingOfTheClient(t *testing.T) {
	fleet, dir := startFleet(t, 4, []sim.InstanceConfig{{Behaviour: sim.Limiter, Latency: -1}})
	g := startGateway(t, dir, "", "--contact", "ops@example.org")
	// A first search also starts the background read of the instance's
	// /config; wait for it, so the last request the instance saw is the
	// search below.
	if a := g.get(t, "/search?q=warm+up&format=json", nil); a.status != 200 {
		t.Fatalf("warm-up: %d %s", a.status, a.body)
	}
	if err := g.app.proxy.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	a := g.get(t, "/search?q=privacy&format=json&language=de", map[string]string{
		"X-Forwarded-For": "203.0.113.9", "Cookie": "session=secret", "User-Agent": "Mozilla/5.0 client",
		"Accept-Language": "fr-FR", "X-Real-IP": "203.0.113.9", "Forwarded": "for=203.0.113.9",
	})
	if a.status != 200 {
		t.Fatalf("status %d: %s", a.status, a.body)
	}
	for _, tr := range fleet.Truth() {
		if tr.Searches == 0 {
			t.Fatal("the search did not reach the instance")
		}
		if tr.ClientLeaks != 0 || tr.BotViolations != 0 {
			t.Fatalf("client leaks %d, bot violations %d", tr.ClientLeaks, tr.BotViolations)
		}
		if want := "searxgate/" + Version + " (+ops@example.org)"; tr.LastUserAgent != want {
			t.Fatalf("User-Agent %q, want %q", tr.LastUserAgent, want)
		}
		if tr.LastAcceptLanguage != "de" {
			t.Fatalf("Accept-Language %q, want the search's language", tr.LastAcceptLanguage)
		}
	}
}

func TestRestartKeepsWhatWasLearned(t *testing.T) {
	instances := []sim.InstanceConfig{
		{ID: "refuser", Behaviour: sim.RateLimitSeconds, RateBurst: 1, RetryAfter: time.Hour, Latency: -1},
		{ID: "good", Behaviour: sim.Fast, JSON: true, Latency: 20 * time.Millisecond},
	}
	fleet, _ := startFleet(t, 5, instances)
	dir := writeDirectory(t, dirEntry{fleet.Instance("refuser").URL(), 0.01}, dirEntry{fleet.Instance("good").URL(), 1.0})
	data := t.TempDir()
	// The refusing instance answers at once, so it is the fastest: it is
	// tried again after its first answer and then refuses for an hour.
	g := startGateway(t, dir, data)
	for i := range 6 {
		if a := g.get(t, fmt.Sprintf("/search?q=learn+%d&format=json", i), nil); a.status != 200 {
			t.Fatalf("search %d: %d %s", i, a.status, a.body)
		}
	}
	if refuser := fleet.Instance("refuser").Truth(); refuser.Refusals == 0 {
		t.Fatalf("the refusing instance never refused (%d searches): the test proves nothing", refuser.Searches)
	}
	if err := g.stop(); err != nil {
		t.Fatal(err)
	}
	fleet.ResetTruth()

	g = startGateway(t, dir, data)
	for i := range 4 {
		if a := g.get(t, fmt.Sprintf("/search?q=again+%d&format=json", i), nil); a.status != 200 {
			t.Fatalf("search %d after restart: %d %s", i, a.status, a.body)
		}
	}
	if n := fleet.Instance("refuser").Truth().Searches; n != 0 {
		t.Fatalf("after a restart the refusing instance got %d searches inside its hour-long Retry-After", n)
	}
}

// TestClientLimit: the per-client limit counts only searches that would
// reach an instance. Repeating a search costs nothing upstream, so it is
// never refused; new searches past the burst are, with Retry-After, and
// reach no instance.
func TestClientLimit(t *testing.T) {
	fleet, dir := startFleet(t, 6, []sim.InstanceConfig{{Behaviour: sim.Fast, Latency: -1}})
	g := startGateway(t, dir, "", "--client-rate", "1", "--client-burst", "3")
	for i := range 150 {
		if a := g.get(t, "/search?q=same+every+time&format=json", nil); a.status != 200 {
			t.Fatalf("identical search %d: %d %s", i+1, a.status, a.body)
		}
	}
	if n := totalSearches(fleet); n != 1 {
		t.Fatalf("150 identical searches made %d upstream searches, want 1", n)
	}
	// What follows needs the proxy to ask Config.Admit for the searches
	// that reach an instance.
	if g.app.limiter.Admits() == 0 {
		t.Skip("the proxy does not ask Config.Admit yet: the limit on upstream searches is not checked")
	}
	for i := range 2 {
		if a := g.get(t, fmt.Sprintf("/search?q=limit+%d&format=json", i), nil); a.status != 200 {
			t.Fatalf("search %d within the burst: %d %s", i+2, a.status, a.body)
		}
	}
	a := g.get(t, "/search?q=limit+past&format=json", nil)
	if a.status != 429 || a.header.Get("Retry-After") == "" {
		t.Fatalf("search past the burst: %d, Retry-After %q; want 429 with Retry-After", a.status, a.header.Get("Retry-After"))
	}
	if n := totalSearches(fleet); n != 3 {
		t.Fatalf("the fleet got %d searches, want the 3 allowed", n)
	}
	// Answered before: served from the cache, not refused.
	if a := g.get(t, "/search?q=same+every+time&format=json", nil); a.status != 200 {
		t.Fatalf("a repeated search past the burst: %d %s", a.status, a.body)
	}
	// Pages that cause no upstream search are not limited.
	if a := g.get(t, "/healthz", nil); a.status != 200 {
		t.Fatalf("/healthz limited: %d", a.status)
	}
}

// TestRestartRestoresThePool: what the pool learned (circuits, averages,
// counters, the quality of answers) is the same after a restart on the
// same data folder.
func TestRestartRestoresThePool(t *testing.T) {
	fleet, _ := startFleet(t, 11, []sim.InstanceConfig{
		{ID: "challenged", Behaviour: sim.CloudflareChallenge403, Latency: -1},
		{ID: "fast", Behaviour: sim.Fast, JSON: true, Latency: 10 * time.Millisecond},
		{ID: "medium", Behaviour: sim.Medium, JSON: true, Latency: 60 * time.Millisecond},
		{ID: "thin", Behaviour: sim.Thin, JSON: true, Latency: 5 * time.Millisecond},
	})
	// The challenged instance claims to be the fastest, so it is tried
	// first and its circuit opens; the fleet's own directory lies at random.
	dir := writeDirectory(t, dirEntry{fleet.Instance("challenged").URL(), 0.01},
		dirEntry{fleet.Instance("fast").URL(), 0.5}, dirEntry{fleet.Instance("medium").URL(), 1.0},
		dirEntry{fleet.Instance("thin").URL(), 0.02})
	data := t.TempDir()
	g := startGateway(t, dir, data)
	for i := range 6 {
		if a := g.get(t, fmt.Sprintf("/search?q=restore+%d&format=json", i), nil); a.status != 200 {
			t.Fatalf("search %d: %d %s", i, a.status, a.body)
		}
	}
	before := map[string]pool.Stats{}
	for _, st := range g.app.pool.Snapshot() {
		before[st.URL] = st
	}
	if before[fleet.Instance("challenged").URL()].Circuit != pool.Open {
		t.Fatal("the challenged instance's circuit did not open: the test proves nothing")
	}
	if th := before[fleet.Instance("thin").URL()]; !th.Thin || len(th.Quality.Suspended) == 0 {
		t.Fatalf("the thin instance was not learned thin (%+v): the test proves nothing", th.Quality)
	}
	if err := g.stop(); err != nil {
		t.Fatal(err)
	}

	g = startGateway(t, dir, data)
	after := g.app.pool.Snapshot()
	if len(after) != len(before) {
		t.Fatalf("%d instances after the restart, %d before", len(after), len(before))
	}
	for _, st := range after {
		b := before[st.URL]
		if st.Circuit != b.Circuit || st.Successes != b.Successes || st.Refusals != b.Refusals ||
			st.Measured != b.Measured || math.Abs(st.LatencyMS-b.LatencyMS) > 1e-9 || math.Abs(st.FailureRate-b.FailureRate) > 1e-9 ||
			st.Thin != b.Thin || math.Abs(st.Quality.Fullness-b.Quality.Fullness) > 1e-3 || len(st.Quality.Suspended) != len(b.Quality.Suspended) ||
			len(st.Quality.Answering) != len(b.Quality.Answering) {
			t.Errorf("%s after the restart:\n%+v\nbefore:\n%+v", st.URL, st, b)
		}
	}
}

// TestFailedFlushLosesNothing: when the store refuses a batch, what the
// batch took (cached answers, changed terms) waits for the next one.
func TestFailedFlushLosesNothing(t *testing.T) {
	_, dir := startFleet(t, 12, []sim.InstanceConfig{{Behaviour: sim.Fast, Latency: -1}})
	cfg, err := parseConfig([]string{"--listen", "127.0.0.1:0", "--allow-private", "--directory", dir, "--data", t.TempDir()},
		func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	app, err := NewApp(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer app.ln.Close()
	app.cache.CachePut(app.cache.CacheKey("k"), cache.Entry{JSON: []byte(`{}`), Instance: "i", Expires: time.Now().Add(time.Hour)})
	inst := app.pool.Rank(1, nil)[0]
	app.proxy.Instances().RequeueCaps([]string{inst})
	if err := app.store.Close(); err != nil {
		t.Fatal(err)
	}
	if err := app.flush(); err == nil {
		t.Fatal("a flush to a closed store succeeded")
	}
	if n := app.cache.Pending(); n != 1 {
		t.Fatalf("%d cached answers wait for the next flush, want 1", n)
	}
	if changed, deleted := app.proxy.Instances().DirtyCaps(); len(changed)+len(deleted) != 1 {
		t.Fatalf("changed terms waiting: %d + %d, want 1", len(changed), len(deleted))
	}
}
