package sim

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestMix(t *testing.T) {
	tests := []struct {
		name string
		n    int
		// check judges the fleet's behaviours.
		check func(t *testing.T, cfgs []InstanceConfig)
	}{
		{"healthy", 40, func(t *testing.T, cfgs []InstanceConfig) {
			kinds := map[Behaviour]int{}
			for _, c := range cfgs {
				if c.Behaviour != Fast && c.Behaviour != Medium && c.Behaviour != Slow {
					t.Errorf("%s is %s in a healthy fleet", c.ID, c.Behaviour)
				}
				if !c.JSON {
					t.Errorf("%s has JSON off in a healthy fleet", c.ID)
				}
				kinds[c.Behaviour]++
			}
			if len(kinds) < 2 {
				t.Errorf("latencies not varied: %v", kinds)
			}
		}},
		{"mixed", 40, func(t *testing.T, cfgs []InstanceConfig) {
			has := map[Behaviour]int{}
			jsonOff, answering := 0, 0
			for _, c := range cfgs {
				has[c.Behaviour]++
				if !c.JSON {
					jsonOff++
				}
				if c.Behaviour == Fast || c.Behaviour == Medium {
					answering++
				}
			}
			for _, b := range []Behaviour{RateLimitSeconds, JSONDisabled, Dead, Limiter, OffTopic, CloudflareChallenge403, EmptyEnginesDown, Slow, LinkToken, Flapping} {
				if has[b] == 0 {
					t.Errorf("mixed fleet of 40 has no %s", b)
				}
			}
			if answering < 20 || answering > 28 {
				t.Errorf("%d of 40 fast or medium, want about 60%%", answering)
			}
			if jsonOff < 3 {
				t.Errorf("only %d with JSON off", jsonOff)
			}
		}},
		{"mixed", 3, func(t *testing.T, cfgs []InstanceConfig) {
			bad := 0
			for _, c := range cfgs {
				if c.Behaviour != Fast && c.Behaviour != Medium {
					bad++
				}
			}
			if bad != 1 {
				t.Errorf("%d misbehaving of 3, want 1", bad)
			}
		}},
		{"hostile", 40, func(t *testing.T, cfgs []InstanceConfig) {
			bad := 0
			for _, c := range cfgs {
				if !c.Behaviour.answers() {
					bad++
				}
			}
			if bad < 26 {
				t.Errorf("%d of 40 misbehave, want most", bad)
			}
		}},
		{"HOSTILE", 1, func(t *testing.T, cfgs []InstanceConfig) {
			if len(cfgs) != 1 {
				t.Errorf("%d instances", len(cfgs))
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfgs, err := Mix(tc.name, tc.n, 1)
			if err != nil {
				t.Fatal(err)
			}
			if len(cfgs) != tc.n {
				t.Fatalf("%d instances, want %d", len(cfgs), tc.n)
			}
			ids := map[string]bool{}
			for _, c := range cfgs {
				if ids[c.ID] || !strings.HasPrefix(c.ID, "sim-") || !c.Behaviour.Valid() || c.Latency <= 0 {
					t.Errorf("bad instance %+v", c)
				}
				ids[c.ID] = true
			}
			tc.check(t, cfgs)
			again, _ := Mix(tc.name, tc.n, 1)
			if !reflect.DeepEqual(cfgs, again) {
				t.Error("the same seed gave another fleet")
			}
		})
	}
	a, _ := Mix("mixed", 40, 1)
	b, _ := Mix("mixed", 40, 2)
	if reflect.DeepEqual(a, b) {
		t.Error("seeds 1 and 2 gave the same fleet")
	}
	if cfgs, _ := Mix("healthy", 120, 1); cfgs[0].ID != "sim-001" {
		t.Errorf("IDs of a fleet of 120 start at %s", cfgs[0].ID)
	}
}

func TestMixErrors(t *testing.T) {
	_, err := Mix("chaos", 3, 1)
	if !errors.Is(err, ErrUnknownMix) || !strings.Contains(err.Error(), "healthy, hostile, mixed") {
		t.Errorf("unknown mix: %v", err)
	}
	if _, err := Mix("mixed", 0, 1); !errors.Is(err, ErrConfig) {
		t.Errorf("n=0: %v", err)
	}
}

// TestMixRuns starts a realistic fleet, scaled down, and checks that its
// good instances answer.
func TestMixRuns(t *testing.T) {
	cfgs, err := Mix("mixed", 12, 3)
	if err != nil {
		t.Fatal(err)
	}
	f := startFleet(t, Config{Instances: cfgs, InMemory: true, Seed: 3, LatencyScale: 0.01})
	c := memClient(f)
	answered := 0
	for _, in := range f.Instances() {
		if in.Behaviour() != Fast && in.Behaviour() != Medium {
			continue
		}
		if s, _, body := memGet(t, c, searchURL(in, "golang", ""), nil); s == 200 && strings.Contains(string(body), "/"+in.ID()+"/") {
			answered++
		} else {
			t.Errorf("%s (%s): status %d", in.ID(), in.Behaviour(), s)
		}
	}
	if answered == 0 {
		t.Error("no good instance in the fleet")
	}
}

func TestParseBehaviour(t *testing.T) {
	for _, b := range Behaviours() {
		got, err := ParseBehaviour(strings.ToUpper(string(b)))
		if err != nil || got != b {
			t.Errorf("ParseBehaviour(%q) = %q, %v", b, got, err)
		}
	}
	if _, err := ParseBehaviour("melting"); !errors.Is(err, ErrUnknownBehaviour) || !strings.Contains(err.Error(), "slow-loris") {
		t.Errorf("unknown behaviour: %v", err)
	}
}

func TestStartErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"no instances", Config{}},
		{"public host", Config{Host: "0.0.0.0", Instances: []InstanceConfig{{}}}},
		{"lan host", Config{Host: "192.168.1.2", Instances: []InstanceConfig{{}}}},
		{"unknown behaviour", Config{Instances: []InstanceConfig{{Behaviour: "melting"}}}},
		{"negative jitter", Config{Instances: []InstanceConfig{{Jitter: -1}}}},
		{"duplicate id", Config{Instances: []InstanceConfig{{ID: "a"}, {ID: "a"}}}},
		{"id clashes with a default", Config{Instances: []InstanceConfig{{}, {ID: "sim-01"}}}},
		{"id with a slash", Config{Instances: []InstanceConfig{{ID: "a/b"}}}},
		{"ports overflow", Config{BasePort: 65535, Instances: []InstanceConfig{{}, {}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Start(tc.cfg)
			if err == nil {
				f.Close()
				t.Fatal("started")
			}
			if !errors.Is(err, ErrConfig) {
				t.Errorf("err %v does not wrap ErrConfig", err)
			}
		})
	}
}
