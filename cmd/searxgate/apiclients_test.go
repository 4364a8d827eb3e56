package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/searxgate/searxgate/sim"
)

// apiClientsDir is where npm installs the search APIs' real clients
// (testdata/apiclients/package.json; .ci/run runs npm ci there). Without
// node or the clients the test is skipped, and fails under CI=true.
func apiClientsDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join("testdata", "apiclients")
	_, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "node_modules", "@tavily", "core", "package.json"))
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node or the API clients are missing, and CI=true requires them (.ci/run runs npm ci in cmd/searxgate/testdata/apiclients): %v", err)
		}
		t.Skipf("node or the API clients are missing (cd cmd/searxgate/testdata/apiclients && npm ci): %v", err)
	}
	return dir
}

// runNode runs one of the client scripts with env and decodes what it
// printed.
func runNode(t *testing.T, dir, script string, env map[string]string, out any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_NO_WARNINGS=1")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("node %s printed %q: %v", script, stdout.String(), err)
	}
}

const testAPIKey = "key-of-the-test-0123456789"

// startAPIGateway runs searxgate with an API key on a fleet whose results
// link to pages the instances serve on loopback.
func startAPIGateway(t *testing.T, flags ...string) *gateway {
	t.Helper()
	_, dir := startFleetConfig(t, sim.Config{Seed: 45, LocalLinks: true,
		Instances: []sim.InstanceConfig{{ID: "api-a", Behaviour: sim.Fast, Latency: -1, JSON: true}, {ID: "api-b", Behaviour: sim.Fast, Latency: -1, JSON: true}}})
	return startGateway(t, dir, "", append([]string{"--reader-allow-private", "--api-key", testAPIKey}, flags...)...)
}

// TestAPIClients: the real clients from npm, pointed at searxgate by
// their base-URL setting and nothing else, get what they expect:
// @tavily/core's search (5 results, raw content) and extract,
// @langchain/tavily's search and extract tools, brave-search's web
// search; a wrong key is each client's own authentication error. Open
// WebUI's External request is reproduced as its source sends it.
func TestAPIClients(t *testing.T) {
	dir := apiClientsDir(t)
	g := startAPIGateway(t)
	base := "http://" + g.addr
	env := map[string]string{"SEARXGATE_KEY": testAPIKey, "SEARXGATE_BASE": base + "/tavily", "SEARXGATE_BAD_URL": "http://127.0.0.1:1/none"}

	t.Run("tavily-core", func(t *testing.T) {
		var out struct {
			Search struct {
				Query   string
				Results []struct{ Title, URL, Content, RawContent string }
			}
			Extract struct {
				Results       []struct{ URL, RawContent string }
				FailedResults []struct{ URL, Error string }
			}
			Refused string
		}
		runNode(t, dir, "tavily-core.mjs", env, &out)
		if out.Search.Query != "tidal locking" || len(out.Search.Results) != 5 {
			t.Fatalf("search: %+v", out.Search)
		}
		for _, r := range out.Search.Results {
			if !strings.Contains(r.Title, "tidal locking") || !strings.Contains(r.RawContent, "Paragraph 1 of") || !strings.HasPrefix(r.URL, "http://127.0.0.1:") {
				t.Errorf("result %+v", r)
			}
		}
		if len(out.Extract.Results) != 2 || out.Extract.Results[0].URL != out.Search.Results[0].URL || strings.Contains(out.Extract.Results[0].RawContent, "# ") ||
			!strings.Contains(out.Extract.Results[0].RawContent, "Paragraph 1 of") || len(out.Extract.FailedResults) != 1 || out.Extract.FailedResults[0].Error == "" {
			t.Errorf("extract: %+v", out.Extract)
		}
		if !strings.Contains(out.Refused, "not one searxgate's operator issued") {
			t.Errorf("a wrong key: %q", out.Refused)
		}
	})
	t.Run("langchain-tavily", func(t *testing.T) {
		var out struct {
			Search struct {
				Query   string
				Results []struct{ Title, URL string }
			}
			Extract struct {
				Results []struct {
					URL        string `json:"url"`
					RawContent string `json:"raw_content"`
				}
			}
		}
		runNode(t, dir, "langchain-tavily.mjs", env, &out)
		if out.Search.Query != "tidal locking" || len(out.Search.Results) != 5 || len(out.Extract.Results) != 1 ||
			!strings.Contains(out.Extract.Results[0].RawContent, "Paragraph 1 of") {
			t.Errorf("%+v", out)
		}
	})
	t.Run("brave-search", func(t *testing.T) {
		var out struct {
			Web struct {
				Type  string
				Query struct{ Original string }
				Web   struct {
					Results []struct {
						Title, URL, Description string
						MetaURL                 struct{ Hostname string } `json:"meta_url"`
					}
				}
			}
			Refused string
		}
		env := map[string]string{"SEARXGATE_KEY": testAPIKey, "SEARXGATE_BASE": base + "/res/v1"}
		runNode(t, dir, "brave-search.mjs", env, &out)
		w := out.Web
		if w.Type != "search" || w.Query.Original != "tidal locking" || len(w.Web.Results) != 5 || !strings.Contains(w.Web.Results[0].Title, "result 6") ||
			w.Web.Results[0].MetaURL.Hostname != "127.0.0.1" {
			t.Errorf("%+v", w)
		}
		if !strings.Contains(out.Refused, "Authentication error") {
			t.Errorf("a wrong key: %q", out.Refused)
		}
	})
}

// openWebUIRequest is the request Open WebUI's search_external
// (backend/open_webui/retrieval/web/external.py) sends with requests:
// json={"query": ..., "count": ...}, its User-Agent and the Bearer key.
func openWebUIRequest(t *testing.T, url, key, query string, count int) *http.Request {
	t.Helper()
	// requests serialises json= with json.dumps: ", " and ": ".
	body := `{"query": "` + query + `", "count": ` + strconvItoa(count) + `}`
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", "Open WebUI (https://github.com/open-webui/open-webui) RAG Bot")
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "*/*")
	req.Header.Set("Accept-Encoding", "gzip, deflate")
	return req
}

func strconvItoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestOpenWebUIExternal: Open WebUI's External web search request gets
// [{link, title, snippet}], up to 50 across SearXNG's pages; a wrong key
// is refused, which Open WebUI reads as no results.
func TestOpenWebUIExternal(t *testing.T) {
	g := startAPIGateway(t)
	for _, count := range []int{5, 50} {
		resp, err := http.DefaultClient.Do(openWebUIRequest(t, "http://"+g.addr+"/openwebui", testAPIKey, "tidal locking", count))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var out []struct{ Link, Title, Snippet string }
		if err := json.Unmarshal(body, &out); err != nil || resp.StatusCode != 200 || len(out) != count {
			t.Fatalf("count %d: %d %v %.300s", count, resp.StatusCode, err, body)
		}
		seen := map[string]bool{}
		for _, r := range out {
			if seen[r.Link] || r.Title == "" || r.Snippet == "" {
				t.Errorf("result %+v (seen before: %v)", r, seen[r.Link])
			}
			seen[r.Link] = true
		}
	}
	resp, err := http.DefaultClient.Do(openWebUIRequest(t, "http://"+g.addr+"/openwebui", "wrong-key-0123456789", "tidal locking", 5))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("a wrong key: %d", resp.StatusCode)
	}
}

// TestAPIKeyFlags: a short key, or a key file that cannot be read, is a
// start-up error naming the flag and its variable; keys come from the
// flag, the variable (comma-separated) and the file together.
func TestAPIKeyFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--api-key", "short"}, nil, "--api-key (SEARXGATE_API_KEY)"},
		{nil, map[string]string{"SEARXGATE_API_KEY": "ok-key-0123456789abcdef,short"}, "--api-key (SEARXGATE_API_KEY)"},
		{[]string{"--api-key-file", filepath.Join(t.TempDir(), "none")}, nil, "--api-key-file (SEARXGATE_API_KEY_FILE)"},
	} {
		cfg, err := parseConfig(c.args, env(c.env), io.Discard)
		if err == nil {
			err = cfg.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %v: %v, want an error naming %s", c.args, c.env, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "ok-key-0123456789abcdef") {
			t.Errorf("the error repeats a key: %v", err)
		}
	}
	cfg, err := parseConfig([]string{"--api-key", "flag-key-0123456789abcdef"}, env(map[string]string{"SEARXGATE_API_KEY": "env-key-0123456789abcdef"}), io.Discard)
	if err != nil || cfg.Validate() != nil || strings.Join(cfg.APIKeys, " ") != "flag-key-0123456789abcdef" {
		t.Errorf("a flag over the variable: %v %v", cfg.APIKeys, err)
	}
}

// TestAPIsClosedWhenExposed: without keys, a searxgate that can be
// reached beyond this machine (here: it has a public URL) keeps the
// search APIs closed, each with a 403 in its own shape saying which
// setting opens them; on loopback alone they are open.
func TestAPIsClosedWhenExposed(t *testing.T) {
	_, dir := startFleet(t, 46, []sim.InstanceConfig{{ID: "api-exposed", Behaviour: sim.Fast, Latency: -1, JSON: true}})
	for _, c := range []struct {
		flags  []string
		status int
	}{
		{[]string{"--public-url", "https://search.example.org/"}, 403},
		{nil, 200},
	} {
		g := startGateway(t, dir, "", c.flags...)
		for _, door := range []struct{ method, path, body string }{
			{http.MethodPost, "/tavily/search", `{"query":"q"}`},
			{http.MethodGet, "/res/v1/web/search?q=q", ""},
			{http.MethodPost, "/openwebui", `{"query":"q"}`},
		} {
			a := g.do(t, door.method, door.path, strings.NewReader(door.body), map[string]string{"Content-Type": "application/json"})
			if a.status != c.status || (c.status == 403 && !strings.Contains(string(a.body), "--api-key")) || !json.Valid(a.body) {
				t.Errorf("%v %s: %d %.300s", c.flags, door.path, a.status, a.body)
			}
		}
	}
}
