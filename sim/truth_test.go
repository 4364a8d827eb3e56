package sim

import (
	"encoding/json"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

func TestTruthCounters(t *testing.T) {
	clock := newClock()
	f := startFleet(t, Config{InMemory: true, Now: clock.Now, Instances: []InstanceConfig{
		{ID: "sim-good", Latency: -1, JSON: true},
		{ID: "sim-nojson", Behaviour: JSONDisabled, Latency: -1},
	}})
	good, nojson := f.Instance("sim-good"), f.Instance("sim-nojson")
	c := memClient(f)

	memGet(t, c, searchURL(good, "a", "json"), nil)
	memGet(t, c, searchURL(good, "a", ""), map[string]string{"User-Agent": "curl/8.5", "Accept-Language": "de"})
	memGet(t, c, searchURL(good, "a", "json"), map[string]string{"X-Forwarded-For": "10.0.0.1"})
	memGet(t, c, good.URL()+"config", map[string]string{"Cookie": "session=1"})
	memGet(t, c, good.URL()+"config", map[string]string{"Via": "1.1 proxy"})
	memGet(t, c, good.URL()+"healthz", map[string]string{"Forwarded": "for=10.0.0.1"})
	memGet(t, c, good.URL()+"healthz", map[string]string{"X-Real-IP": "10.0.0.1", "User-Agent": "searxgate/9", "Accept-Language": "fr"})
	memGet(t, c, searchURL(nojson, "a", "json"), nil)
	memGet(t, c, searchURL(nojson, "a", "rss"), nil)

	got := f.Truth()[good.URL()]
	want := Truth{
		ID: "sim-good", Behaviour: Fast,
		Requests: 7, Searches: 3, Refusals: 0, ConfigReads: 2, BotViolations: 1, ClientLeaks: 5,
		LastUserAgent: "searxgate/9", LastAcceptLanguage: "fr",
		Formats: map[string]uint64{"json": 2, "html": 1},
	}
	if !truthEqual(got, want) {
		t.Errorf("truth\n got %+v\nwant %+v", got, want)
	}
	if n := f.Truth()[nojson.URL()]; n.Refusals != 2 || n.Searches != 2 || n.Formats["rss"] != 1 {
		t.Errorf("json-disabled truth %+v, want 2 refusals of 2 searches", n)
	}

	// The truth handed out is a copy.
	got.Formats["json"] = 99
	if good.Truth().Formats["json"] != 2 {
		t.Error("Truth shares its Formats map")
	}

	f.ResetTruth()
	if r := good.Truth(); r.Requests != 0 || len(r.Formats) != 0 || r.ID != "sim-good" || r.LastUserAgent != "" {
		t.Errorf("after ResetTruth: %+v", r)
	}
}

func truthEqual(a, b Truth) bool {
	return reflect.DeepEqual(a, b)
}

// TestInsideRetryAfter checks the count of searches that came while an
// announced refusal still ran, for a client that waits and one that does
// not, for every kind of announcement.
func TestInsideRetryAfter(t *testing.T) {
	for _, b := range []Behaviour{RateLimitSeconds, RateLimitDate, RateLimitBare, Unavailable503} {
		t.Run(string(b), func(t *testing.T) {
			f, in, clock := limiterFleet(t, InstanceConfig{Behaviour: b, RateBurst: 2, RateWindow: time.Minute, RetryAfter: 30 * time.Second})
			c := memClient(f)
			search := func() int { s, _, _ := memGet(t, c, searchURL(in, "a", "json"), nil); return s }
			ok := 200
			if b == Unavailable503 {
				ok = 503
			} else {
				search()
				search()
			}
			refusal := search() // 3rd: refused, announcing 30 s
			if refusal != 429 && refusal != 503 {
				t.Fatalf("third search: status %d", refusal)
			}
			if in.Truth().InsideRetryAfter != 0 {
				t.Fatalf("inside before any early search: %d", in.Truth().InsideRetryAfter)
			}
			clock.Advance(29 * time.Second)
			if s := search(); s == 200 {
				t.Errorf("search inside the refusal answered")
			}
			clock.Advance(10 * time.Second)
			search()
			clock.Advance(30 * time.Second)
			if s := search(); s != ok {
				t.Errorf("search after the refusal: status %d, want %d", s, ok)
			}
			// The search 29 s after the refusal came inside it. A 503
			// announces a new Retry-After each time, so for it the search
			// 10 s later came inside the second announcement too.
			want := uint64(1)
			if b == Unavailable503 {
				want = 2
			}
			if got := in.Truth().InsideRetryAfter; got != want {
				t.Errorf("inside = %d, want %d", got, want)
			}
		})
	}
}

func TestControlHandler(t *testing.T) {
	f := startFleet(t, Config{InMemory: true, Instances: []InstanceConfig{{ID: "sim-x", Latency: -1, JSON: true}, {ID: "sim-y", Behaviour: Dead}}})
	memGet(t, memClient(f), searchURL(f.Instance("sim-x"), "a", "json"), nil)
	h := f.ControlHandler()
	call := func(method, path string) *fasthttp.RequestCtx {
		var ctx fasthttp.RequestCtx
		var req fasthttp.Request
		req.Header.SetMethod(method)
		req.SetRequestURI(path)
		ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
		h(&ctx)
		return &ctx
	}
	ctx := call("GET", "/truth")
	var truth map[string]Truth
	if err := json.Unmarshal(ctx.Response.Body(), &truth); err != nil {
		t.Fatalf("/truth: %v: %s", err, ctx.Response.Body())
	}
	x := truth[f.Instance("sim-x").URL()]
	if x.ID != "sim-x" || x.Searches != 1 || x.Formats["json"] != 1 || len(truth) != 2 {
		t.Errorf("/truth = %+v", truth)
	}
	if ctx := call("GET", "/instances.json"); string(ctx.Response.Body()) != string(f.Directory()) {
		t.Error("/instances.json is not the directory")
	}
	if ctx := call("GET", "/instances"); !strings.Contains(string(ctx.Response.Body()), `"behaviour": "dead"`) {
		t.Errorf("/instances = %s", ctx.Response.Body())
	}
	if ctx := call("GET", "/reset"); ctx.Response.StatusCode() != 405 {
		t.Errorf("GET /reset: %d", ctx.Response.StatusCode())
	}
	if ctx := call("POST", "/reset"); ctx.Response.StatusCode() != 204 || f.Instance("sim-x").Truth().Searches != 0 {
		t.Errorf("POST /reset: %d, searches %d", ctx.Response.StatusCode(), f.Instance("sim-x").Truth().Searches)
	}
	if ctx := call("GET", "/nope"); ctx.Response.StatusCode() != 404 {
		t.Errorf("/nope: %d", ctx.Response.StatusCode())
	}
}
