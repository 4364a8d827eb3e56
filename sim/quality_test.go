package sim

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// checkSuspended checks a thin or partial instance's answer to q: want
// results, none from a suspended engine, and the suspended engines
// listed in the JSON's unresponsive_engines and in the HTML page's
// engines table, as SearXNG 2026 writes them.
func checkSuspended(t *testing.T, in *Instance, q string, want int, down [][2]string) {
	t.Helper()
	m := get(t, searchURL(in, q, "json"), nil).json(t)
	onTopic(t, m, q, in.ID(), want)
	var got [][2]string
	for _, u := range m["unresponsive_engines"].([]any) {
		pair := u.([]any)
		got = append(got, [2]string{pair[0].(string), pair[1].(string)})
	}
	if !slices.Equal(got, down) {
		t.Errorf("unresponsive_engines = %v, want %v", got, down)
	}
	for i, r := range m["results"].([]any) {
		for _, e := range r.(map[string]any)["engines"].([]any) {
			for _, d := range down {
				if e == d[0] {
					t.Errorf("result %d comes from %s, which is suspended", i, e)
				}
			}
		}
	}
	html := string(get(t, searchURL(in, q, ""), nil).body)
	for _, d := range down {
		row := fmt.Sprintf(">%s</a>\n        </td>\n        <td class=\"response-error\">%s</td>", d[0], d[1])
		if !strings.Contains(html, row) {
			t.Errorf("the HTML page does not list %s as %q", d[0], d[1])
		}
	}
	// An honest "nothing found" stays clean: no suspended engine listed.
	nothing := get(t, searchURL(in, NoResultsPrefix+" x", "json"), nil).json(t)
	if res, un := nothing["results"].([]any), nothing["unresponsive_engines"].([]any); len(res) != 0 || len(un) != 0 {
		t.Errorf("a query that finds nothing: %d results, unresponsive %v; want none", len(res), un)
	}
}

func TestCategoriesAnInstanceLacks(t *testing.T) {
	f := startFleet(t, Config{Instances: []InstanceConfig{
		{ID: "sim-news", Latency: time.Millisecond, JSON: true, Categories: []string{"general", "news"}},
		{ID: "sim-plain", Latency: time.Millisecond, JSON: true},
	}, Seed: 3})
	news, plain := f.Instances()[0], f.Instances()[1]
	count := func(in *Instance, cats string) int {
		m := get(t, searchURL(in, "hello world", "json")+"&categories="+cats, nil).json(t)
		if un := m["unresponsive_engines"].([]any); len(un) != 0 {
			t.Errorf("%s, categories %s: unresponsive %v, want none", in.ID(), cats, un)
		}
		return len(m["results"].([]any))
	}
	if n := count(news, "news"); n != 10 {
		t.Errorf("an instance with news engines answered news with %d results, want 10", n)
	}
	if n := count(news, "images"); n != 0 {
		t.Errorf("an instance without images engines answered images with %d results, want 0", n)
	}
	if n := count(plain, "science"); n != 10 {
		t.Errorf("an instance that lists no categories answered with %d results, want 10 (it lacks nothing)", n)
	}
	cfg := string(get(t, news.URL()+"config", nil).body)
	if !strings.Contains(cfg, `"categories":["general","news"]`) {
		t.Errorf("/config does not list the instance's categories: %.300s", cfg)
	}
}

func TestMixedHasThinAndPartial(t *testing.T) {
	for _, tc := range []struct {
		n             int
		thin, partial int
	}{{5, 0, 0}, {10, 1, 0}, {30, 1, 1}} {
		mix, err := Mix("mixed", tc.n, 1)
		if err != nil {
			t.Fatal(err)
		}
		var thin, partial int
		for _, ic := range mix {
			switch ic.Behaviour {
			case Thin:
				thin++
			case Partial:
				partial++
			}
		}
		if thin != tc.thin || partial != tc.partial {
			t.Errorf("mixed of %d: %d thin, %d partial; want %d, %d", tc.n, thin, partial, tc.thin, tc.partial)
		}
	}
}
