package directory

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"
)

var (
	update  = flag.Bool("update", false, "rebuild snapshot.json from the searx-instances list (-yml)")
	ymlPath = flag.String("yml", "../../shared/data/searx-instances.yml", "the searx-instances list the snapshot is built from")
)

// ymlInstance is one instance of searx-instances' instances.yml.
type ymlInstance struct {
	url        string
	additional map[string]string // additional_urls: URL → comment
}

// readInstancesYML reads the subset of YAML that instances.yml uses: one
// top-level key per instance URL, either "{}" or a mapping whose
// additional_urls block maps URLs to comments. Other nested keys are
// skipped; anything else is an error, so a change of shape is noticed.
func readInstancesYML(data []byte) ([]ymlInstance, error) {
	var out []ymlInstance
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), " \t\r")
		trimmed := strings.TrimLeft(line, " ")
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		indent := len(line) - len(trimmed)
		switch {
		case indent == 0:
			key, rest, ok := cutKey(trimmed)
			if !ok || (rest != "" && rest != "{}") {
				return nil, fmt.Errorf("line %d: want \"URL:\" or \"URL: {}\", got %q", n, line)
			}
			out = append(out, ymlInstance{url: key, additional: map[string]string{}})
			section = ""
		case len(out) == 0:
			return nil, fmt.Errorf("line %d: nested line before any instance", n)
		case indent == 2:
			key, _, ok := cutKey(trimmed)
			if !ok {
				return nil, fmt.Errorf("line %d: want a key, got %q", n, line)
			}
			section = key
		case indent >= 4 && section == "additional_urls":
			key, comment, ok := cutKey(trimmed)
			if !ok {
				return nil, fmt.Errorf("line %d: want \"URL: comment\", got %q", n, line)
			}
			out[len(out)-1].additional[key] = comment
		case indent >= 4:
			// another section's content (comments, …): not needed
		default:
			return nil, fmt.Errorf("line %d: unexpected indentation in %q", n, line)
		}
	}
	return out, sc.Err()
}

// cutKey splits "key: value" or "key:"; URLs hold ":" but never ": ".
func cutKey(s string) (key, value string, ok bool) {
	if k, v, found := strings.Cut(s, ": "); found {
		return k, strings.TrimSpace(v), k != ""
	}
	if k, found := strings.CutSuffix(s, ":"); found {
		return k, "", k != ""
	}
	return "", "", false
}

// networkOf names the network of a normalised URL as searx.space does.
func networkOf(u string) string {
	switch h := hostOf(u); {
	case strings.HasSuffix(h, ".onion"):
		return "tor"
	case strings.HasSuffix(h, ".i2p"):
		return "i2p"
	}
	return "normal"
}

// buildSnapshot turns instances.yml into a searx.space-shaped file with no
// measurements: each listed URL is a main entry, each additional URL an
// entry of its own (main false), as searx.space lists them.
// built is the day it says it was built (metadata.built, YYYY-MM-DD).
func buildSnapshot(yml []byte, built string) ([]byte, error) {
	list, err := readInstancesYML(yml)
	if err != nil {
		return nil, err
	}
	type entry struct {
		Main            bool              `json:"main"`
		NetworkType     string            `json:"network_type"`
		AlternativeUrls map[string]string `json:"alternativeUrls"`
		Comments        []string          `json:"comments"`
	}
	instances := map[string]entry{}
	for _, in := range list {
		u, err := Normalize(in.url)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in.url, err)
		}
		alts := map[string]string{}
		for raw, comment := range in.additional {
			a, err := Normalize(raw)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", raw, err)
			}
			alts[a] = comment
			if _, dup := instances[a]; !dup {
				instances[a] = entry{NetworkType: networkOf(a), AlternativeUrls: map[string]string{}, Comments: []string{}}
			}
		}
		instances[u] = entry{Main: true, NetworkType: networkOf(u), AlternativeUrls: alts, Comments: []string{}}
	}
	doc := map[string]any{
		"metadata": map[string]any{
			"built":  built,
			"source": "searx-instances.yml (github.com/searxng/searx-instances)",
			"note":   "listed instances without measurements: searxgate gives them its default prior",
		},
		"instances": instances,
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// TestSnapshotMatchesList rebuilds the snapshot from the searx-instances
// list when it is at hand (-yml) and checks the committed one is the same;
// with -update it rewrites snapshot.json instead.
func TestSnapshotMatchesList(t *testing.T) {
	yml, err := os.ReadFile(*ymlPath)
	if errors.Is(err, fs.ErrNotExist) && !*update {
		t.Skipf("%s not present: the committed snapshot.json stands", *ymlPath)
	}
	if err != nil {
		t.Fatal(err)
	}
	// Compared with the committed file, the day it was built is its own;
	// rebuilt, it is today.
	built := SnapshotDate().Format(time.DateOnly)
	if *update {
		built = time.Now().UTC().Format(time.DateOnly)
	}
	want, err := buildSnapshot(yml, built)
	if err != nil {
		t.Fatalf("building the snapshot: %v", err)
	}
	if *update {
		if err := os.WriteFile("snapshot.json", want, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote snapshot.json (%d bytes)", len(want))
		return
	}
	if !bytes.Equal(Embedded(), want) {
		t.Fatalf("snapshot.json is stale against %s: run go test ./directory -run TestSnapshot -update", *ymlPath)
	}
	// Every top-level instance of the list survives the default filter
	// (all are clearnet https), and no .onion does.
	list, err := readInstancesYML(yml)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := Parse(Embedded(), DefaultFilter())
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(list) {
		t.Errorf("embedded snapshot keeps %d instances, the list has %d", len(entries), len(list))
	}
}

func TestReadInstancesYML(t *testing.T) {
	yml := []byte(`# comment
https://a.example: {}
https://b.example:
  comments:
    - something
  additional_urls:
    http://abc.onion: Hidden Service
    https://alt.b.example:
https://c.example: {}
`)
	got, err := readInstancesYML(yml)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].url != "https://a.example" || got[2].url != "https://c.example" {
		t.Fatalf("instances = %+v", got)
	}
	if len(got[1].additional) != 2 || got[1].additional["http://abc.onion"] != "Hidden Service" {
		t.Fatalf("additional = %v", got[1].additional)
	}
	if _, ok := got[1].additional["https://alt.b.example"]; !ok {
		t.Fatalf("additional without comment missing: %v", got[1].additional)
	}
	for _, bad := range []string{"https://a.example: x\n", "  nested: {}\n", "https://a.example: {}\n bad\n"} {
		if _, err := readInstancesYML([]byte(bad)); err == nil {
			t.Errorf("readInstancesYML(%q) = nil error", bad)
		}
	}

	snap, err := buildSnapshot(yml, "2026-01-02")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := Parse(snap, DefaultFilter())
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, e := range entries {
		urls = append(urls, e.URL)
		if e.Prior != 0 || e.SuccessPct != -1 || e.UptimeDay != -1 {
			t.Errorf("%s: listed entry has measurements: %+v", e.URL, e)
		}
	}
	want := "https://a.example/ https://b.example/ https://c.example/"
	if strings.Join(urls, " ") != want {
		t.Fatalf("urls = %v, want %s", urls, want)
	}
	if alts := entries[1].Alternatives; len(alts) != 1 || alts[0] != "https://alt.b.example/" {
		t.Fatalf("alternatives of b = %v", alts)
	}
}

func TestEmbeddedIsACopy(t *testing.T) {
	a := Embedded()
	if len(a) == 0 {
		t.Fatal("empty snapshot")
	}
	a[0] = 'X'
	if Embedded()[0] == 'X' {
		t.Fatal("Embedded returned the compiled-in bytes themselves")
	}
	entries, err := Parse(Embedded(), DefaultFilter())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.URL, ".onion") || e.Prior != 0 {
			t.Errorf("snapshot entry %+v: onion or measured", e)
		}
	}
}
