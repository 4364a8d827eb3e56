package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/searxgate/searxgate/internal/clock"
	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/sim"
	"github.com/searxgate/searxgate/web"
)

// TestOwnPassIPNotTrue: an own instance declared to pass searxgate
// (--own-pass-ip) whose limiter does not. searxgate asks it for JSON (one
// that passes searxgate does not count its searches), meets the limiter's
// 429 on the sixth search (its JSON window is 4 an hour), says so once in
// the log and on /status with the address it sends from, keeps its
// circuit closed and holds it for one limiter window while the public
// instance answers, then paces it below the limiter (12 in 20 s) and asks
// it for HTML: no search fails, no second refusal.
func TestOwnPassIPNotTrue(t *testing.T) {
	// One clock, frozen at the real time, for searxgate and the fleet's
	// limiter windows: the limiter window passes without waiting for it.
	clk := clock.NewFake(time.Now())
	fleet, _ := startFleetConfig(t, sim.Config{Seed: 61, Now: clk.Now, Instances: []sim.InstanceConfig{
		{ID: "home", Behaviour: sim.Limiter, Latency: -1, JSON: true},
		{ID: "public", Behaviour: sim.Fast, Latency: -1, JSON: true},
	}})
	home, public := fleet.Instance("home"), fleet.Instance("public")
	dir := writeDirectory(t, dirEntry{public.URL(), 0.2})
	cfg, err := parseConfig([]string{"--listen", "127.0.0.1:0", "--data", t.TempDir(), "--allow-private", "--directory", dir,
		"--instance", home.URL(), "--own-pass-ip", "--client-rate", "0"}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var logs logLines
	cfg.clock, cfg.resolver = clk, &failResolver{}
	g, err := runGateway(t, cfg, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo})))
	if err != nil {
		t.Fatal(err)
	}
	<-g.app.checked

	n := 0
	search := func() string {
		t.Helper()
		n++
		q := fmt.Sprintf("pass ip %d", n)
		a := g.get(t, "/search?format=json&q="+strings.ReplaceAll(q, " ", "+"), nil)
		if a.status != 200 || !onTopic(a.body, q) {
			t.Fatalf("search %d: %d %s\n%s", n, a.status, a.body, logs.String())
		}
		return a.header.Get("X-Searxgate-Instance")
	}
	status := func() web.InstanceStatus {
		t.Helper()
		var st web.StatusReport
		if err := json.Unmarshal(g.get(t, "/status.json", nil).body, &st); err != nil {
			t.Fatal(err)
		}
		for _, in := range st.Instances {
			if in.URL == home.URL() {
				return in
			}
		}
		t.Fatalf("/status.json does not list %s", home.URL())
		return web.InstanceStatus{}
	}

	for range 5 {
		if by := search(); by != home.URL() {
			t.Fatalf("search %d answered by %s before any refusal, want the own instance", n, by)
		}
	}
	if f := status().Format; f != "json" {
		t.Errorf("the own instance declared to pass searxgate is asked for %s, want json", f)
	}
	if by := search(); by != public.URL() || home.Truth().Refusals != 1 {
		t.Fatalf("the sixth search: answered by %s, the own instance refused %d; want public, 1", by, home.Truth().Refusals)
	}
	advice := "your SearXNG at " + strings.TrimSuffix(strings.TrimPrefix(home.URL(), "http://"), "/") +
		" does not pass searxgate's address 127.0.0.1 (botdetection.ip_lists.pass_ip)"
	in := status()
	if !strings.HasPrefix(in.Advice, advice) {
		t.Errorf("/status.json's advice: %q, want it to start %q", in.Advice, advice)
	}
	if in.Format != "html" || in.Circuit.String() != "closed" || in.WhyNot != proxy.WhyBudget {
		t.Errorf("/status.json: format %q, circuit %v, why not %q; want html, closed, budget (held one limiter window)", in.Format, in.Circuit, in.WhyNot)
	}
	if page := string(g.get(t, "/status", nil).body); !strings.Contains(page, "does not pass searxgate&#39;s address 127.0.0.1") &&
		!strings.Contains(page, "does not pass searxgate's address 127.0.0.1") {
		t.Errorf("the status page does not say the pass_ip is missing")
	}
	for range 3 {
		if by := search(); by != public.URL() {
			t.Errorf("search %d, within the limiter window, answered by %s", n, by)
		}
	}

	clk.Advance(21 * time.Second)
	byHome := 0
	for range 15 {
		if search() == home.URL() {
			byHome++
		}
	}
	if byHome != 12 {
		t.Errorf("the own instance answered %d of 15 searches in a limiter window, want 12 (the limiter budget)", byHome)
	}
	if r := home.Truth().Refusals; r != 1 {
		t.Errorf("the own instance refused %d searches, want 1 (the first)", r)
	}
	if c := strings.Count(logs.String(), advice); c != 1 {
		t.Errorf("the log says %d times %q, want once:\n%s", c, advice, logs.String())
	}
	if strings.Contains(logs.String(), "start searxgate with --own-pass-ip") {
		t.Errorf("the log advises --own-pass-ip, which is given:\n%s", logs.String())
	}
}
