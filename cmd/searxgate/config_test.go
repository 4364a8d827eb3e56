package main

import (
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestConfigFlagsOverEnv(t *testing.T) {
	c, err := parseConfig([]string{"--deadline", "2s", "--instance", "https://own.example/"},
		env(map[string]string{
			"SEARXGATE_DEADLINE": "9s", "SEARXGATE_CACHE_TTL": "5m", "SEARXGATE_ALLOW_PRIVATE": "true",
			"SEARXGATE_INSTANCE": "https://a.example/, https://b.example/",
		}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Deadline != 2*time.Second {
		t.Errorf("deadline %v: the flag did not win over the environment", c.Deadline)
	}
	if c.CacheTTL != 5*time.Minute || !c.AllowPrivate {
		t.Errorf("cache-ttl %v, allow-private %v: the environment was not read", c.CacheTTL, c.AllowPrivate)
	}
	if !slices.Equal(c.Instances, []string{"https://own.example/"}) {
		t.Errorf("instances %v: --instance must replace SEARXGATE_INSTANCE", c.Instances)
	}

	c, err = parseConfig(nil, env(map[string]string{"SEARXGATE_INSTANCE": "https://a.example/, https://b.example/"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Instances, []string{"https://a.example/", "https://b.example/"}) {
		t.Errorf("instances from the environment: %v", c.Instances)
	}
	if d := defaultConfig(); c.Listen != d.Listen || c.Deadline != 4*time.Second || c.Budget20s != 10 || c.Budget10m != 100 {
		t.Errorf("defaults changed: %+v", c)
	}
}

func TestConfigErrorsNameFlagAndEnv(t *testing.T) {
	cases := []struct {
		args []string
		env  map[string]string
		want []string
	}{
		{[]string{"--deadline", "1h"}, nil, []string{"--deadline", "SEARXGATE_DEADLINE"}},
		{nil, map[string]string{"SEARXGATE_DEADLINE": "soon"}, []string{"SEARXGATE_DEADLINE", "duration"}},
		{[]string{"--listen", "nowhere"}, nil, []string{"--listen", "SEARXGATE_LISTEN"}},
		{[]string{"--instance", "ftp://x.example/"}, nil, []string{"--instance", "SEARXGATE_INSTANCE"}},
		{[]string{"--strategy", "fastest"}, nil, []string{"--strategy", "SEARXGATE_STRATEGY"}},
		{[]string{"--budget-20s", "-1"}, nil, []string{"--budget-20s", "SEARXGATE_BUDGET_20S"}},
		{[]string{"--log-format", "xml"}, nil, []string{"--log-format", "SEARXGATE_LOG_FORMAT"}},
		{[]string{"--public-url", "example.org"}, nil, []string{"--public-url", "SEARXGATE_PUBLIC_URL"}},
		{[]string{"stray"}, nil, []string{"unexpected argument"}},
	}
	for _, c := range cases {
		_, err := parseConfig(c.args, env(c.env), io.Discard)
		if err == nil {
			t.Errorf("%v %v: no error", c.args, c.env)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v %v: error %q does not say %q", c.args, c.env, err, w)
			}
		}
	}
	// Every problem is reported at once.
	_, err := parseConfig([]string{"--deadline", "1h", "--max-attempts", "99"}, env(nil), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--deadline") || !strings.Contains(err.Error(), "--max-attempts") {
		t.Errorf("two bad flags: %v", err)
	}
}
