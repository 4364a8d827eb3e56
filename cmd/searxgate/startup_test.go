package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/searxgate/searxgate/directory"
	"github.com/searxgate/searxgate/internal/clock"
	"github.com/searxgate/searxgate/mcp"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/sim"
	"github.com/searxgate/searxgate/web"
)

// logLines keeps what a gateway logged, one text line per record.
type logLines struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// lines returns the lines that contain every one of subs.
func (l *logLines) lines(subs ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
next:
	for _, line := range strings.Split(l.buf.String(), "\n") {
		for _, s := range subs {
			if !strings.Contains(line, s) {
				continue next
			}
		}
		out = append(out, line)
	}
	return out
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// startLogged runs searxgate in-process with exactly args (plus --listen on
// a free port and a temp data folder unless given), names resolved by
// failResolver only, and its log kept; it waits for the start-up check
// before it returns.
func startLogged(t *testing.T, data string, args ...string) (*gateway, *logLines, *failResolver) {
	t.Helper()
	if data == "" {
		data = t.TempDir()
	}
	cfg, err := parseConfig(append([]string{"--listen", "127.0.0.1:0", "--data", data}, args...), func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	resolver := &failResolver{}
	cfg.resolver = resolver
	logs := &logLines{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	g, err := runGateway(t, cfg, log)
	if err != nil {
		t.Fatalf("%v\n%s", err, logs)
	}
	select {
	case <-g.app.checked:
	case <-time.After(30 * time.Second):
		t.Fatalf("the start-up check did not end\n%s", logs)
	}
	return g, logs, resolver
}

// fleetRequests is every request the fleet's instances read.
func fleetRequests(f *sim.Fleet) uint64 {
	var n uint64
	for _, tr := range f.Truth() {
		n += tr.Requests
	}
	return n
}

// countingServer serves status and body on 127.0.0.1 and counts requests.
func countingServer(t *testing.T, status int, body string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestInstanceListIsHonest: what --directory names is what is searched.
// Each case first runs with the fleet's list, so that the store knows the
// fleet's instances; then it restarts on the same data with the list under
// test, and the fleet must not be contacted at all.
func TestInstanceListIsHonest(t *testing.T) {
	fleet, fleetDir := startFleet(t, 21, []sim.InstanceConfig{{Behaviour: sim.Fast, JSON: true, Latency: -1}, {Behaviour: sim.Fast, Latency: -1}})
	notFound, notFoundReqs := countingServer(t, http.StatusNotFound, "not here")
	tmp := t.TempDir()
	empty := filepath.Join(tmp, "empty.json")
	noInstances := filepath.Join(tmp, "no-instances.json")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(noInstances, []byte(`{"instances": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	snapshotDate := directory.SnapshotDate().Format(time.DateOnly)

	tests := []struct {
		name      string
		directory string
		wantFrom  string
		public    int    // public instances in the pool (-1: the snapshot's)
		wantWarn  string // a WARN line that must be logged once
		wantError string // the ERROR line of the start-up check
	}{
		{name: "none", directory: "none", wantFrom: directory.FromNone,
			wantError: "no instance can be searched: there is no instance: --directory is none and no --instance is given"},
		{name: "an empty file", directory: empty, wantFrom: directory.FromFile,
			wantWarn:  "the instance list file has no instance: only your own instances (--instance) will be searched",
			wantError: "there is no instance: the list file " + empty + " has none"},
		{name: "a file with no instances", directory: noInstances, wantFrom: directory.FromFile,
			wantWarn: "only your own instances (--instance) will be searched"},
		{name: "a URL that answers 404", directory: notFound.URL + "/instances.json", wantFrom: directory.FromEmbedded, public: -1,
			wantWarn:  `using the snapshot compiled into searxgate" snapshot_date=` + snapshotDate,
			wantError: "unreachable: DNS lookups fail, no network?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := t.TempDir()
			first, _, _ := startLogged(t, data, "--allow-private", "--directory", fleetDir)
			if n := len(first.app.instances(0 /* pool.Public */)); n != 2 {
				t.Fatalf("the fleet's list gave %d public instances, want 2", n)
			}
			if err := first.stop(); err != nil {
				t.Fatal(err)
			}
			fleet.ResetTruth()
			notFoundReqs.Store(0)

			g, logs, _ := startLogged(t, data, "--allow-private", "--directory", tt.directory)
			if n := fleetRequests(fleet); n != 0 {
				t.Errorf("the fleet, no longer listed, got %d requests", n)
			}
			if got := logs.lines("instance list loaded", "from="+tt.wantFrom); len(got) != 1 {
				t.Errorf("no single 'instance list loaded from=%s' line:\n%s", tt.wantFrom, logs)
			}
			if lines := logs.lines("0001-01-01"); len(lines) != 0 {
				t.Errorf("a zero date was logged: %q", lines)
			}
			public := g.app.instances(0)
			switch {
			case tt.public == -1 && len(public) == 0:
				t.Errorf("the snapshot gave no public instance")
			case tt.public >= 0 && len(public) != tt.public:
				t.Errorf("%d public instances, want %d: %v", len(public), tt.public, public)
			}
			if tt.wantWarn != "" {
				if got := logs.lines("level=WARN", tt.wantWarn); len(got) != 1 {
					t.Errorf("want one WARN line with %q:\n%s", tt.wantWarn, logs)
				}
			}
			if tt.wantError != "" {
				got := logs.lines("level=ERROR")
				if len(got) != 1 || !strings.Contains(got[0], tt.wantError) {
					t.Errorf("want one ERROR line with %q, got %q", tt.wantError, got)
				}
				if p := g.app.Problem(); !strings.Contains(p, tt.wantError[strings.LastIndex(tt.wantError, ": ")+2:]) {
					t.Errorf("Problem() = %q, want the ERROR's text", p)
				}
			}
			if tt.wantFrom == directory.FromEmbedded && notFoundReqs.Load() != 1 {
				t.Errorf("the list server got %d requests, want 1", notFoundReqs.Load())
			}
			if tt.wantFrom != directory.FromEmbedded && notFoundReqs.Load() != 0 {
				t.Errorf("the list server got %d requests, want none", notFoundReqs.Load())
			}
			// A search has nowhere to go, and still no public instance of
			// the fleet is asked.
			if a := g.get(t, "/search?q=honest&format=json", nil); a.status == 200 {
				t.Errorf("a search with no usable instance answered 200: %s", a.body)
			}
			if n := fleetRequests(fleet); n != 0 {
				t.Errorf("the fleet got %d requests", n)
			}
		})
	}
}

// TestMissingOrBrokenListFileStopsStart: a list file that does not exist or
// does not parse is an error at start that names it (exit 1), and nothing
// is contacted.
func TestMissingOrBrokenListFileStopsStart(t *testing.T) {
	fleet, _ := startFleet(t, 22, []sim.InstanceConfig{{Behaviour: sim.Fast, Latency: -1}})
	tmp := t.TempDir()
	broken := filepath.Join(tmp, "broken.json")
	if err := os.WriteFile(broken, []byte(`{"instances": {"`+fleet.URLs()[0]+`": `), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(tmp, "missing.json"), broken} {
		var stderr bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		code := Main(ctx, []string{"serve", "--listen", "127.0.0.1:0", "--allow-private", "--data", t.TempDir(), "--directory", path}, io.Discard, &stderr, func(string) string { return "" })
		cancel()
		if code != 1 {
			t.Errorf("%s: exit %d, want 1\n%s", path, code, &stderr)
		}
		if !strings.Contains(stderr.String(), path) || !strings.Contains(stderr.String(), "SEARXGATE_DIRECTORY") {
			t.Errorf("%s: the error does not name the file and the setting:\n%s", path, &stderr)
		}
	}
	if n := fleetRequests(fleet); n != 0 {
		t.Errorf("the fleet got %d requests", n)
	}
}

// TestAllRefusedAsPrivate: a list whose instances are all on private
// addresses, without --allow-private: one ERROR line counts them and says
// what to do; none of them is contacted.
func TestAllRefusedAsPrivate(t *testing.T) {
	fleet, dir := startFleet(t, 23, []sim.InstanceConfig{{Behaviour: sim.Fast, Latency: -1}, {Behaviour: sim.Fast, Latency: -1}, {Behaviour: sim.Fast, Latency: -1}})
	g, logs, _ := startLogged(t, "", "--directory", dir)
	const want = "no instance can be searched: 3 refused as private addresses: add --allow-private"
	if got := logs.lines("level=ERROR"); len(got) != 1 || !strings.Contains(got[0], want) {
		t.Fatalf("want one ERROR line with %q, got %q\n%s", want, got, logs)
	}
	if p := g.app.Problem(); p != strings.TrimPrefix(want, "no instance can be searched: ") {
		t.Errorf("Problem() = %q", p)
	}
	if n := fleetRequests(fleet); n != 0 {
		t.Errorf("the fleet got %d requests", n)
	}
}

// TestUnreachableCounted: instances whose names do not resolve are counted
// as a DNS problem; instances that refuse connections as such.
func TestUnreachableCounted(t *testing.T) {
	// Port 1 (tcpmux), where nothing listens: connections are refused. A
	// port a listener of this test had freed could be taken by another
	// test running beside it before searxgate dialled it.
	deadURL := "http://127.0.0.1:1/"
	if c, err := net.DialTimeout("tcp", "127.0.0.1:1", time.Second); err == nil {
		c.Close()
		t.Skip("something listens on 127.0.0.1:1: no port here is sure to refuse")
	}
	dir := writeDirectory(t, dirEntry{"https://a.invalid/", 0.1}, dirEntry{"https://b.invalid/", 0.1}, dirEntry{deadURL, 0.1})
	g, logs, resolver := startLogged(t, "", "--allow-private", "--directory", dir)
	got := logs.lines("level=ERROR")
	for _, want := range []string{"2 unreachable: DNS lookups fail, no network?", "1 refused the connection"} {
		if len(got) != 1 || !strings.Contains(got[0], want) {
			t.Errorf("want one ERROR line with %q, got %q", want, got)
		}
	}
	if resolver.lookups.Load() == 0 {
		t.Error("no name was looked up (through the test's resolver)")
	}
	if g.app.Problem() == "" {
		t.Error("Problem() is empty")
	}
}

// TestProblemClearsWhenAnOwnInstanceIsAdded: the status banner goes once an
// instance can be searched.
func TestProblemClearsWhenAnOwnInstanceIsAdded(t *testing.T) {
	fleet, _ := startFleet(t, 24, []sim.InstanceConfig{{ID: "own", Behaviour: sim.Fast, JSON: true, Latency: -1}})
	g, _, _ := startLogged(t, "", "--allow-private", "--directory", "none")
	if g.app.Problem() == "" {
		t.Fatal("no problem with no instance at all")
	}
	if _, err := g.app.ops.Add(context.Background(), fleet.Instance("own").URL()); err != nil {
		t.Fatal(err)
	}
	if p := g.app.Problem(); p != "" {
		t.Fatalf("Problem() = %q after an own instance was added", p)
	}
	if a := g.get(t, "/search?q=own+only&format=json", nil); a.status != 200 {
		t.Fatalf("a search on the own instance: %d %s", a.status, a.body)
	}
}

// TestOwnTermsReadBeforeServing: the own instances' /config is read before
// the first request is answered; one that cannot be read is a WARN, and
// searxgate serves anyway.
func TestOwnTermsReadBeforeServing(t *testing.T) {
	fleet, _ := startFleet(t, 25, []sim.InstanceConfig{{ID: "own", Behaviour: sim.Fast, JSON: true, Latency: -1}})
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + closed.Addr().String() + "/"
	closed.Close()
	own := fleet.Instance("own").URL()
	g, logs, _ := startLogged(t, "", "--allow-private", "--directory", "none", "--instance", own, "--instance", deadURL)
	if a := g.get(t, "/healthz", nil); a.status != 200 {
		t.Fatalf("/healthz: %d", a.status)
	}
	if c := g.app.proxy.Instances().Caps(own); !c.ConfigOK || fleet.Instance("own").Truth().ConfigReads != 1 {
		t.Errorf("own instance's terms: %+v, %d reads; want one good read before serving", c, fleet.Instance("own").Truth().ConfigReads)
	}
	if got := logs.lines("level=WARN", "cannot read your instance's /config", deadURL); len(got) != 1 {
		t.Errorf("want one WARN for the dead own instance:\n%s", logs)
	}
	if got := logs.lines("level=ERROR"); len(got) != 0 {
		t.Errorf("an ERROR with own instances: %q", got)
	}
	// The /config read came before searxgate said it serves.
	text := logs.String()
	if i, j := strings.Index(text, "cannot read your instance's /config"), strings.Index(text, "searxgate is serving"); i < 0 || j < 0 || i > j {
		t.Errorf("the own instances' terms were not read before serving:\n%s", text)
	}
}

// TestUsableAgreesWithStatusAndMetrics: the start-up check's "can this
// instance be searched now" is the search path's (instance.Registry.Usable), as
// /status.json, /metrics and the MCP status resource show it, for every
// kind of instance: out of budget within its circuit, disabled, an open
// circuit, half open with its trial out, as many searches in flight as it
// may have, and link-token ones are not; a good one and an own one are,
// until they are disabled too, and then the banner's question (App.usable)
// says no instance is. The clock is the test's.
func TestUsableAgreesWithStatusAndMetrics(t *testing.T) {
	fast := sim.InstanceConfig{Behaviour: sim.Fast, JSON: true, Latency: -1}
	ids := []string{"good", "own", "spent", "off", "open", "trial", "full", "barred"}
	cfgs := make([]sim.InstanceConfig, len(ids))
	for i, id := range ids {
		cfgs[i] = fast
		if id == "barred" {
			cfgs[i] = sim.InstanceConfig{Behaviour: sim.LinkToken, Latency: -1}
		}
		cfgs[i].ID = id
	}
	fleet, dir := startFleet(t, 26, cfgs)
	cfg, err := parseConfig([]string{"--listen", "127.0.0.1:0", "--data", t.TempDir(), "--allow-private", "--directory", dir},
		func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// Frozen at the real time: the /config reads' deadlines are taken
	// from it, and fasthttp's sockets keep real time.
	clk := clock.NewFake(time.Now())
	cfg.clock, cfg.resolver = clk, &failResolver{}
	g, err := runGateway(t, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	<-g.app.checked // the list's terms are read: the link-token one is known
	a := g.app
	url := func(id string) string { return fleet.Instance(id).URL() }
	lease := func(id string) {
		ls, err := a.pool.Checkout(t.Context(), 1, func(u string) bool { return u != url(id) })
		if err != nil || len(ls) != 1 {
			t.Fatalf("%s: no lease: %v", id, err)
		}
		t.Cleanup(func() { a.pool.Record(ls[0], pool.Outcome{Kind: pool.Cancelled}, 0) })
	}
	a.pool.OpenUntil(url("trial"), clk.Now().Add(time.Second), "test")
	clk.Advance(2 * time.Second)
	lease("trial")
	for range a.pool.Stats(url("full")).MaxInFlight {
		lease("full")
	}
	now := clk.Now()
	a.pool.Add(url("own"), pool.Own)
	for n := 0; a.proxy.Instances().Budget().TakeAs(url("spent"), false, now); n++ {
		if n > 1000 {
			t.Fatal("the budget never ran out")
		}
	}
	a.pool.Disable(url("off"))
	a.pool.OpenUntil(url("open"), now.Add(time.Hour), "test")
	// Quality is state, not usability: the good one answers thin, its big
	// engines suspended, and stays usable; every face says so.
	a.pool.Learn(url("good"), pool.Answer{Hits: 4, Page: 10, Engines: []string{"wikipedia"},
		Suspended: [][2]string{{"google", "Suspended: CAPTCHA"}}})
	agent := connectMCP(t, g, nil)

	check := func(step string, want map[string]proxy.Why) {
		t.Helper()
		var report web.StatusReport
		if err := json.Unmarshal([]byte(g.get(t, "/status.json", nil).body), &report); err != nil {
			t.Fatal(err)
		}
		usable := 0
		metricsText := string(g.get(t, "/metrics", nil).body)
		for _, is := range report.Instances {
			st := a.pool.Stats(is.URL)
			if is.Thin != st.Thin || is.Thin != (is.URL == url("good")) || len(is.Quality.Suspended) != len(st.Quality.Suspended) {
				t.Errorf("%s: /status.json says %s thin %v suspended %v; the pool %v %v", step, is.URL, is.Thin, is.Quality.Suspended, st.Thin, st.Quality.Suspended)
			}
			line := fmt.Sprintf("searxgate_instance_fullness_ratio{instance=%q} %s", is.URL, strconv.FormatFloat(st.Quality.Fullness, 'g', -1, 64))
			if !strings.Contains(metricsText, line) {
				t.Errorf("%s: /metrics lacks %q", step, line)
			}
			why, ok := want[is.URL]
			if !ok {
				t.Fatalf("%s: an instance not in the fleet: %s", step, is.URL)
			}
			if ok, w := a.proxy.Instances().Usable(a.pool.Stats(is.URL), now); ok != (why == proxy.Ready) || w != why {
				t.Errorf("%s: the search path says %s usable %v why %q, want why %q", step, is.URL, ok, w, why)
			}
			if is.Usable != (why == proxy.Ready) || is.WhyNot != why {
				t.Errorf("%s: /status.json says %s usable %v why %q, want why %q", step, is.URL, is.Usable, is.WhyNot, why)
			}
			if got := a.searchable(a.pool.Stats(is.URL), now); got != is.Usable { // the pool's own: JSON drops its part (PoolWhy)
				t.Errorf("%s: the start-up check says %s searchable %v, /status.json %v", step, is.URL, got, is.Usable)
			}
			if is.Usable {
				usable++
			}
		}
		if len(report.Instances) != len(want) || report.Totals.Usable != usable {
			t.Errorf("%s: %d instances, %d usable in the totals, %d by row", step, len(report.Instances), report.Totals.Usable, usable)
		}
		m := regexp.MustCompile(`(?m)^searxgate_instances_usable (\d+)$`).FindSubmatch(g.get(t, "/metrics", nil).body)
		if m == nil || string(m[1]) != strconv.Itoa(usable) {
			t.Errorf("%s: /metrics says %q usable, /status.json %d", step, m, usable)
		}
		if got := a.usable(now); got != (usable > 0) {
			t.Errorf("%s: App.usable %v with %d usable", step, got, usable)
		}
		res, err := agent.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: mcp.StatusURI})
		var brief mcp.StatusBrief
		if err != nil || len(res.Contents) != 1 || json.Unmarshal([]byte(res.Contents[0].Text), &brief) != nil {
			t.Fatalf("%s: the MCP status resource: %v", step, err)
		}
		if brief.Pool.UsableNow != usable || len(brief.Instances) != len(want) {
			t.Errorf("%s: MCP says %d usable of %d, /status.json %d of %d", step, brief.Pool.UsableNow, len(brief.Instances), usable, len(want))
		}
		for _, x := range brief.Instances {
			if why := want[x.URL]; x.UsableNow != (why == proxy.Ready) || x.WhyNot != why {
				t.Errorf("%s: MCP says %s usable %v why %q, want why %q", step, x.URL, x.UsableNow, x.WhyNot, why)
			}
			if st := a.pool.Stats(x.URL); x.Thin != st.Thin || len(x.Suspended) != len(st.Quality.Suspended) {
				t.Errorf("%s: MCP says %s thin %v suspended %v; the pool %v %v", step, x.URL, x.Thin, x.Suspended, st.Thin, st.Quality.Suspended)
			}
		}
	}
	want := map[string]proxy.Why{url("good"): proxy.Ready, url("own"): proxy.Ready, url("spent"): proxy.WhyBudget,
		url("off"): proxy.WhyDisabled, url("open"): proxy.WhyCircuitOpen, url("trial"): proxy.WhyTrialOut,
		url("full"): proxy.WhyInFlight, url("barred"): proxy.WhyLinkToken}
	check("two good", want)
	a.pool.Disable(url("good"))
	a.pool.Disable(url("own"))
	want[url("good")], want[url("own")] = proxy.WhyDisabled, proxy.WhyDisabled
	check("none good", want)
}

// TestWhyCauses: every reason the proxy gives for an instance not taking
// a search now (proxy.Whys) is a cause to the start-up check or none, and
// every cause it is has its words.
func TestWhyCauses(t *testing.T) {
	worded := map[string]bool{}
	for _, ct := range causeText {
		worded[ct.cause] = strings.Contains(ct.text, " ")
	}
	for _, why := range proxy.Whys {
		c, ok := whyCause[why]
		if !ok || (c != causeNone && !worded[c]) {
			t.Errorf("%s: cause %q (in the table: %v), without words", why, c, ok)
		}
	}
	if len(whyCause) != len(proxy.Whys) {
		t.Errorf("the start-up check has %d reasons, the proxy %d", len(whyCause), len(proxy.Whys))
	}
}

// TestContactWarning: searxgate warns once at start when public instances
// are in the pool and no contact is set, and not when one is set or only
// its own instances are searched.
func TestContactWarning(t *testing.T) {
	_, fleetDir := startFleet(t, 2, []sim.InstanceConfig{{Behaviour: sim.Fast, JSON: true, Latency: -1}})
	const warn = "no --contact (SEARXGATE_CONTACT) is set"
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"public, no contact", []string{"--allow-private", "--directory", fleetDir}, 1},
		{"public, a contact", []string{"--allow-private", "--directory", fleetDir, "--contact", "ops@searxgate.test"}, 0},
		{"only its own", []string{"--allow-private", "--directory", "none", "--instance", "http://127.0.0.1:9/"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, logs, _ := startLogged(t, "", tt.args...)
			// The warning comes before the serving line, in the same goroutine.
			waitFor(t, 30*time.Second, "the serving line", func() bool { return strings.Contains(logs.String(), "searxgate is serving") })
			if got := strings.Count(logs.String(), warn); got != tt.want {
				t.Errorf("the contact warning logged %d times, want %d:\n%s", got, tt.want, logs)
			}
			if tt.want > 0 && !strings.Contains(logs.String(), "level=WARN msg=\"no --contact") {
				t.Errorf("the contact warning is not at WARN:\n%s", logs)
			}
		})
	}
}
