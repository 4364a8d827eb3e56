package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/searxgate/searxgate/mcp"
	"github.com/searxgate/searxgate/sim"
)

// faceCase is one cause a lone own instance gives, and what every face
// must say of it.
type faceCase struct {
	name   string
	start  func(t *testing.T, log *slog.Logger) (*gateway, string) // the gateway and its instance's URL
	reason string                                                  // the tried entry's reason
	says   []string                                                // what the first search's JSON says, besides the URL
	always []string                                                // what every face says, the instance cooling down or not
}

// ownInstanceGateway starts one own instance of behaviour b and a
// gateway logging to log with only it.
func ownInstanceGateway(ic sim.InstanceConfig, flags ...string) func(t *testing.T, log *slog.Logger) (*gateway, string) {
	return func(t *testing.T, log *slog.Logger) (*gateway, string) {
		ic.ID = "own"
		f, _ := startFleet(t, 5, []sim.InstanceConfig{ic})
		u := f.Instance("own").URL()
		return startGatewayLogged(t, log, "none", append([]string{"--instance", u, "--client-rate", "0"}, flags...)...), u
	}
}

// TestEveryFaceSaysWhy: a lone own instance that is not running, whose
// name does not resolve, that times out, answers 429 with Retry-After or
// a bot challenge: the JSON 503, the HTML page, the RSS feed, the CSV
// error header and MCP's error each name the instance as the operator's
// own, say what happened in words that fit and what to do; the log says
// it once for the instance and cause, not once a search.
func TestEveryFaceSaysWhy(t *testing.T) {
	t.Parallel() // it waits on real time: see parallelWaits
	cases := []faceCase{
		{"not running", func(t *testing.T, log *slog.Logger) (*gateway, string) {
			u := "http://127.0.0.1:" + freePort(t) + "/"
			return startGatewayLogged(t, log, "none", "--instance", u, "--client-rate", "0"), u
		}, "connection_refused", []string{"your own instance", "refuses connections", "is it running"}, []string{"refuses connections", "is it running"}},
		{"dns", func(t *testing.T, log *slog.Logger) (*gateway, string) {
			u := "http://searxng.invalid/"
			return startGatewayLogged(t, log, "none", "--instance", u, "--client-rate", "0"), u
		}, "dns", []string{"your own instance", "name that does not resolve", "check the host name", "searxgate's doing"}, []string{"name that does not resolve", "check the host name"}},
		{"timeout", ownInstanceGateway(sim.InstanceConfig{Behaviour: sim.Hang, JSON: true}, "--deadline", "2s"),
			"timeout", []string{"your own instance", "did not answer within 2 s", "overloaded"}, []string{"did not answer", "overloaded"}},
		{"429", ownInstanceGateway(sim.InstanceConfig{Behaviour: sim.RateLimitSeconds, RateBurst: 1, RetryAfter: 10 * time.Minute, Latency: -1, JSON: true}),
			"rate_limited", []string{"your own instance", "429 Too Many Requests", "not asked again until", "pass_ip"}, []string{"429 Too Many Requests", "pass_ip"}},
		{"bot challenge", ownInstanceGateway(sim.InstanceConfig{Behaviour: sim.CloudflareChallenge403, Latency: -1, JSON: true}),
			"bot_challenge", []string{"your own instance", "bot challenge", "let searxgate's address through"}, []string{"bot challenge", "let searxgate's address through"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each its own instance and gateway
			var logs syncBuffer
			g, inst := c.start(t, slog.New(slog.NewTextHandler(&logs, nil)))
			if c.reason == "rate_limited" {
				if a := g.get(t, "/search?format=json&q=within+the+burst", nil); a.status != 200 {
					t.Fatalf("the search within the burst: %d %s", a.status, a.body)
				}
			}
			says := append([]string{inst}, c.says...)
			a := g.get(t, "/search?format=json&q=first", nil)
			var body struct {
				Error string `json:"error"`
				Tried []struct {
					Reason, Owner string
					Own           bool
				} `json:"tried"`
			}
			if a.status != 503 || json.Unmarshal(a.body, &body) != nil || len(body.Tried) != 1 {
				t.Fatalf("JSON: %d %s", a.status, a.body)
			}
			if tr := body.Tried[0]; tr.Reason != c.reason || !tr.Own || tr.Owner == "" {
				t.Errorf("JSON tried %+v, want reason %s, own, an owner", tr, c.reason)
			}
			hasAll(t, "JSON error", body.Error, says)
			// The other faces, each on a search of its own (once its circuit
			// is open the instance is not asked, and is named as cooling
			// down).
			says = append([]string{inst, "your own instance"}, c.always...)
			page := g.get(t, "/search?q=second", nil)
			hasAll(t, "HTML page", string(page.body), says)
			if strings.Contains(string(page.body), "Public instances") {
				t.Errorf("the HTML page speaks of public instances to an own instance's operator")
			}
			rss := g.get(t, "/search?format=rss&q=third", nil)
			hasAll(t, "RSS", string(rss.body), says)
			csv := g.get(t, "/search?format=csv&q=fourth", nil)
			hasAll(t, "CSV error header", csv.header.Get("X-Searxgate-Error"), says)
			r := callTool(t, connectMCP(t, g, nil), mcp.ToolSearch, map[string]any{"query": "fifth"})
			if !r.IsError {
				t.Errorf("MCP: not an error: %s", resultText(r))
			}
			hasAll(t, "MCP", resultText(r), says)
			waitQuiet(t, g)
			lines := strings.Count(logs.String(), "own=true reason="+c.reason)
			if lines != 1 {
				t.Errorf("%d log lines of %s for %s over five searches, want 1:\n%s", lines, c.reason, inst, logs.String())
			}
		})
	}
}

// hasAll fails the test unless text has every one of want.
func hasAll(t *testing.T, face, text string, want []string) {
	t.Helper()
	text = strings.ReplaceAll(text, "&#39;", "'")
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", face, w, text)
		}
	}
}

// TestRetryAfterIsTheCircuitsEnd: once the only instance's circuit is
// open, Retry-After is the circuit's real end, not a second; the same
// for an instance that said when (429 with Retry-After).
func TestRetryAfterIsTheCircuitsEnd(t *testing.T) {
	u := "http://127.0.0.1:" + freePort(t) + "/"
	g := startGateway(t, "none", "", "--instance", u, "--client-rate", "0")
	for i := range 5 {
		a := g.get(t, fmt.Sprintf("/search?format=json&q=down+%d", i), nil)
		ra, err := strconv.Atoi(a.header.Get("Retry-After"))
		st := g.app.pool.Stats(u)
		if a.status != 503 || err != nil {
			t.Fatalf("search %d: %d, Retry-After %q", i, a.status, a.header.Get("Retry-After"))
		}
		if st.Circuit.String() != "open" {
			continue // not open yet: FailStrikes failures in a row open it
		}
		left := time.Until(st.CooldownUntil).Seconds()
		if math.Abs(float64(ra)-left) > 2 {
			t.Errorf("search %d: Retry-After %d s while the circuit is open %.1f s more", i, ra, left)
		}
		if i == 4 && ra < 30 {
			t.Errorf("Retry-After %d s while the only instance cools down %.0f s", ra, left)
		}
	}
	_, g2 := ownFleet(t, sim.InstanceConfig{Behaviour: sim.RateLimitSeconds, RateBurst: 1, RetryAfter: 10 * time.Minute, Latency: -1, JSON: true})
	g2.get(t, "/search?format=json&q=within+the+burst", nil)
	for i := range 2 {
		a := g2.get(t, "/search?format=json&q="+url.QueryEscape(fmt.Sprintf("limited %d", i)), nil)
		if ra, _ := strconv.Atoi(a.header.Get("Retry-After")); a.status != 503 || ra < 600 || ra > 603 {
			t.Errorf("after a 429 asking 10 min: %d, Retry-After %q; want 600 s", a.status, a.header.Get("Retry-After"))
		}
	}
}

// TestEngineErrorsAndBangsInMCP: a query whose engines fail everywhere
// is answered over MCP with the engines named and the query said to be
// the cause; a bang is answered with its target; neither blames an
// instance.
func TestEngineErrorsAndBangsInMCP(t *testing.T) {
	_, g := healthyFleet(t, 3, sim.Config{})
	s := connectMCP(t, g, nil)
	r := callTool(t, s, mcp.ToolSearch, map[string]any{"query": sim.EngineErrorPrefix + " over mcp"})
	if text := resultText(r); r.IsError || !strings.Contains(text, "these engines failed on it") || !strings.Contains(text, "The query is the cause") {
		t.Errorf("engine errors over MCP: error %v:\n%s", r.IsError, text)
	}
	r = callTool(t, s, mcp.ToolSearch, map[string]any{"query": "!!g over mcp"})
	if text := resultText(r); r.IsError || !strings.Contains(text, "https://www.google.com/search?q=over+mcp") {
		t.Errorf("a bang over MCP: error %v:\n%s", r.IsError, text)
	}
	waitQuiet(t, g)
	allClosed(t, g, "after engine errors and a bang over MCP")
}
