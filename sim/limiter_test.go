package sim

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// limiterFleet is an in-memory fleet of one instance with behaviour b,
// on the returned clock.
func limiterFleet(t *testing.T, ic InstanceConfig) (*Fleet, *Instance, *fakeClock) {
	t.Helper()
	clock := newClock()
	ic.Latency, ic.JSON = -1, true
	f := startFleet(t, Config{InMemory: true, Now: clock.Now, Instances: []InstanceConfig{ic}})
	return f, f.Instances()[0], clock
}

// statuses runs n searches and returns their statuses, moving the clock
// by step before each but the first.
func statuses(t *testing.T, f *Fleet, in *Instance, clock *fakeClock, n int, step time.Duration, format string, over map[string]string) []int {
	t.Helper()
	c := memClient(f)
	out := make([]int, n)
	for i := range out {
		if i > 0 {
			clock.Advance(step)
		}
		out[i], _, _ = memGet(t, c, searchURL(in, fmt.Sprintf("burst %d", i), format), over)
	}
	return out
}

func countOf(ss []int, status int) int {
	n := 0
	for _, s := range ss {
		if s == status {
			n++
		}
	}
	return n
}

func TestLimiterBurstWindow(t *testing.T) {
	f, in, clock := limiterFleet(t, InstanceConfig{Behaviour: Limiter})
	// As captured from real SearXNG (c-limiter-burst-statuses.txt): 15
	// answered, then 429.
	got := statuses(t, f, in, clock, 17, 0, "", nil)
	for i, s := range got {
		want := 200
		if i >= 15 {
			want = 429
		}
		if s != want {
			t.Fatalf("search %d: status %d, want %d (all: %v)", i+1, s, want, got)
		}
	}
	tr := in.Truth()
	if tr.Refusals != 2 || tr.InsideRetryAfter != 1 {
		t.Errorf("refusals %d inside %d, want 2 and 1 (the 17th came inside the window that refused the 16th)", tr.Refusals, tr.InsideRetryAfter)
	}
	// The refused searches count too; 20 s after the last, the window is clear.
	clock.Advance(20*time.Second + time.Millisecond)
	if s := statuses(t, f, in, clock, 1, 0, "", nil); s[0] != 200 {
		t.Errorf("after the window: status %d", s[0])
	}
}

func TestLimiterLongWindow(t *testing.T) {
	f, in, clock := limiterFleet(t, InstanceConfig{Behaviour: Limiter})
	// One search every 2 s stays under 15 per 20 s; the 151st within 10
	// minutes is refused.
	got := statuses(t, f, in, clock, 151, 2*time.Second, "", nil)
	if countOf(got[:150], 200) != 150 || got[150] != 429 {
		t.Fatalf("want 150 answered then 429; got %d answered, last %d", countOf(got[:150], 200), got[150])
	}
	clock.Advance(10 * time.Minute)
	if s := statuses(t, f, in, clock, 1, 0, "", nil); s[0] != 200 {
		t.Errorf("after 10 minutes: status %d", s[0])
	}
}

func TestLimiterAPIWindow(t *testing.T) {
	f, in, clock := limiterFleet(t, InstanceConfig{Behaviour: Limiter})
	// As captured (c-limiter-api-window-statuses.txt): 4 JSON searches
	// answered, then 429.
	got := statuses(t, f, in, clock, 6, time.Minute, "json", nil)
	if fmt.Sprint(got) != "[200 200 200 200 429 429]" {
		t.Fatalf("json statuses %v", got)
	}
	// HTML is not in the API window.
	if s := statuses(t, f, in, clock, 1, 0, "html", nil); s[0] != 200 {
		t.Errorf("html after the API window filled: %d", s[0])
	}
	clock.Advance(time.Hour)
	if s := statuses(t, f, in, clock, 1, 0, "json", nil); s[0] != 200 {
		t.Errorf("json an hour later: %d", s[0])
	}
}

func TestLimiterOverrides(t *testing.T) {
	f, in, clock := limiterFleet(t, InstanceConfig{Behaviour: Limiter, LimiterHTML20s: 3, LimiterHTML10m: 5, LimiterAPIPerHour: 1})
	if got := statuses(t, f, in, clock, 4, 0, "", nil); fmt.Sprint(got) != "[200 200 200 429]" {
		t.Errorf("burst of 3: %v", got)
	}
	clock.Advance(21 * time.Second)
	// The long window holds the 3 answered (as in SearXNG, a search the
	// burst window refuses is not counted in the long one).
	if got := statuses(t, f, in, clock, 3, 0, "", nil); fmt.Sprint(got) != "[200 200 429]" {
		t.Errorf("long window of 5: %v", got)
	}
	clock.Advance(time.Hour)
	if got := statuses(t, f, in, clock, 2, 0, "json", nil); fmt.Sprint(got) != "[200 429]" {
		t.Errorf("API window of 1: %v", got)
	}
}

func TestLimiterBotChecks(t *testing.T) {
	f, in, _ := limiterFleet(t, InstanceConfig{Behaviour: Limiter})
	c := memClient(f)
	tests := []struct {
		name       string
		path       string
		over       map[string]string
		want       int
		violation  bool
		wantSearch bool
	}{
		{"honest", "search?q=a", nil, 200, false, true},
		{"honest json", "search?q=a&format=json", nil, 200, false, true},
		{"no user agent", "search?q=a", map[string]string{"User-Agent": ""}, 429, true, true},
		{"curl", "search?q=a", map[string]string{"User-Agent": "curl/8.5.0"}, 429, true, true},
		{"CURL any case", "search?q=a", map[string]string{"User-Agent": "cUrL/8"}, 429, true, true},
		{"Go-http-client", "search?q=a", map[string]string{"User-Agent": "Go-http-client/1.1"}, 429, true, true},
		{"python-requests", "search?q=a", map[string]string{"User-Agent": "python-requests/2.32"}, 429, true, true},
		{"HeadlessChrome", "search?q=a", map[string]string{"User-Agent": "HeadlessChrome/120"}, 429, true, true},
		{"bot token not at start", "search?q=a", map[string]string{"User-Agent": "searxgate/1 (uses Go-http-client)"}, 200, false, true},
		{"PetalBot anywhere", "search?q=a", map[string]string{"User-Agent": "Mozilla/5.0 (compatible; PetalBot;+https://webmaster.petalsearch.com/)"}, 429, true, true},
		{"accept json only", "search?q=a&format=json", map[string]string{"Accept": "application/json"}, 429, true, true},
		{"accept star", "search?q=a", map[string]string{"Accept": "*/*"}, 200, false, true},
		{"no accept", "search?q=a", map[string]string{"Accept": ""}, 429, true, true},
		{"no accept-encoding", "search?q=a", map[string]string{"Accept-Encoding": ""}, 429, true, true},
		{"br only", "search?q=a", map[string]string{"Accept-Encoding": "br"}, 429, true, true},
		{"deflate", "search?q=a", map[string]string{"Accept-Encoding": "br, deflate"}, 200, false, true},
		{"no accept-language", "search?q=a", map[string]string{"Accept-Language": ""}, 429, true, true},
		{"curl on the front page", "", map[string]string{"User-Agent": "curl/8"}, 429, false, false},
		{"no accept-language on the front page", "", map[string]string{"Accept-Language": ""}, 200, false, false},
		{"curl on healthz", "healthz", map[string]string{"User-Agent": "curl/8"}, 200, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := in.Truth()
			status, _, body := memGet(t, c, in.URL()+tc.path, tc.over)
			if status != tc.want {
				t.Errorf("status %d, want %d", status, tc.want)
			}
			if status == 429 && string(body) != tooManyBody {
				t.Errorf("429 body %q", body)
			}
			after := in.Truth()
			if v := after.BotViolations - before.BotViolations; (v == 1) != tc.violation || v > 1 {
				t.Errorf("bot violations grew by %d, want violation=%v", v, tc.violation)
			}
			if s := after.Searches - before.Searches; (s == 1) != tc.wantSearch {
				t.Errorf("searches grew by %d", s)
			}
		})
	}
}

func TestLinkToken(t *testing.T) {
	t.Run("three searches then the redirect", func(t *testing.T) {
		f, in, clock := limiterFleet(t, InstanceConfig{Behaviour: LinkToken})
		got := statuses(t, f, in, clock, 5, 21*time.Second, "", nil)
		if fmt.Sprint(got) != "[200 200 200 302 302]" {
			t.Fatalf("statuses %v", got)
		}
		_, h, _ := memGet(t, memClient(f), searchURL(in, "x", ""), nil)
		if h.Get("Location") != "/" {
			t.Errorf("Location %q, want /", h.Get("Location"))
		}
		if tr := in.Truth(); tr.Refusals != 3 || tr.InsideRetryAfter != 2 {
			t.Errorf("refusals %d inside %d, want 3 and 2", tr.Refusals, tr.InsideRetryAfter)
		}
	})
	t.Run("a suspicious client gets 2 searches in 20 s", func(t *testing.T) {
		f, in, clock := limiterFleet(t, InstanceConfig{Behaviour: LinkToken})
		if got := statuses(t, f, in, clock, 3, 0, "", nil); fmt.Sprint(got) != "[200 200 429]" {
			t.Errorf("statuses %v", got)
		}
	})
	t.Run("loading the token stylesheet clears the client", func(t *testing.T) {
		f, in, clock := limiterFleet(t, InstanceConfig{Behaviour: LinkToken})
		c := memClient(f)
		_, _, page := memGet(t, c, searchURL(in, "x", ""), nil)
		css := in.site.TokenCSS
		if css == "" || !strings.Contains(string(page), `href="`+css+`"`) {
			t.Fatalf("page does not link the token stylesheet %q", css)
		}
		if s, _, _ := memGet(t, c, in.URL()+css[1:], nil); s != 200 {
			t.Fatalf("token stylesheet: %d", s)
		}
		if got := statuses(t, f, in, clock, 6, 2*time.Second, "", nil); countOf(got, 200) != 6 {
			t.Errorf("statuses after the token %v", got)
		}
	})
	t.Run("sec-fetch check", func(t *testing.T) {
		f, in, clock := limiterFleet(t, InstanceConfig{Behaviour: Limiter, SecFetch: true})
		firefox := map[string]string{"User-Agent": "Mozilla/5.0 (X11; Linux x86_64; rv:131.0) Gecko/20100101 Firefox/131.0"}
		if got := statuses(t, f, in, clock, 1, 0, "", firefox); got[0] != 302 {
			t.Errorf("browser without Sec-Fetch: %v", got)
		}
		firefox["Sec-Fetch-Mode"] = "navigate"
		if got := statuses(t, f, in, clock, 1, 0, "", firefox); got[0] != 200 {
			t.Errorf("browser with Sec-Fetch: %v", got)
		}
		if got := statuses(t, f, in, clock, 1, 0, "", nil); got[0] != 200 {
			t.Errorf("honest non-browser: %v", got)
		}
	})
}
