package main

import (
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// deployDir is the repository's deploy/ folder, from this package's.
const deployDir = "../../deploy"

// composeFile is what the checks read of deploy/compose.yaml.
type composeFile struct {
	Services map[string]composeService `yaml:"services"`
	Networks map[string]*struct {
		IPAM struct {
			Config []struct {
				Subnet string `yaml:"subnet"`
			} `yaml:"config"`
		} `yaml:"ipam"`
	} `yaml:"networks"`
	Volumes map[string]any `yaml:"volumes"`
}

type composeService struct {
	Image       string            `yaml:"image"`
	Restart     string            `yaml:"restart"`
	DependsOn   map[string]any    `yaml:"depends_on"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []string          `yaml:"volumes"`
	// Networks is a list of names or a map of name to its settings.
	Networks    yaml.Node `yaml:"networks"`
	Healthcheck *struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
	StopGracePeriod string   `yaml:"stop_grace_period"`
	CapDrop         []string `yaml:"cap_drop"`
	SecurityOpt     []string `yaml:"security_opt"`
	ReadOnly        bool     `yaml:"read_only"`
}

// networks returns the networks s joins, with its fixed IPv4 address on
// each ("" when it has none).
func (s composeService) networks(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	switch s.Networks.Kind {
	case 0:
	case yaml.SequenceNode:
		var names []string
		if err := s.Networks.Decode(&names); err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			out[n] = ""
		}
	case yaml.MappingNode:
		var m map[string]*struct {
			IPv4 string `yaml:"ipv4_address"`
		}
		if err := s.Networks.Decode(&m); err != nil {
			t.Fatal(err)
		}
		for n, v := range m {
			out[n] = ""
			if v != nil {
				out[n] = v.IPv4
			}
		}
	default:
		t.Fatalf("networks is neither a list nor a map")
	}
	return out
}

// uncommentReplica returns compose.yaml's text with the commented replica
// example (the block from "# searxgate-2:" and its volume) uncommented.
func uncommentReplica(t *testing.T, text string) string {
	t.Helper()
	lines := strings.Split(text, "\n")
	in, found := false, false
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "  # searxgate-2:"), strings.HasPrefix(l, "  # searxgate-2-data:"):
			in, found = true, true
		case in && !strings.HasPrefix(l, "  #"):
			in = false
		}
		if in {
			lines[i] = "  " + strings.TrimPrefix(strings.TrimPrefix(l, "  #"), " ")
		}
	}
	if !found {
		t.Fatal("compose.yaml has no commented replica example (# searxgate-2:)")
	}
	return strings.Join(lines, "\n")
}

// composeVar matches a variable compose substitutes: ${NAME}, ${NAME:-x},
// ${NAME:?why}, ${NAME-x}, ${NAME?why}.
var composeVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?:[:]?[-?][^}]*)?\}`)

// readEnvExample returns the names .env.example sets, in order.
func readEnvExample(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		name, _, ok := strings.Cut(l, "=")
		if !ok {
			t.Errorf("%s: %q is not NAME=value", path, l)
			continue
		}
		names = append(names, name)
	}
	return names
}

// settingVars are the SEARXGATE_* variables serve reads.
func settingVars() map[string]bool {
	c := defaultConfig()
	vars := map[string]bool{}
	for _, o := range c.options() {
		vars[envName(o.name)] = true
	}
	return vars
}

// composeOnly are .env.example's SEARXGATE_* names that compose reads and
// searxgate does not.
var composeOnly = []string{"SEARXGATE_IMAGE", "SEARXGATE_BIND", "SEARXGATE_PORT"}

// TestComposeFile checks deploy/compose.yaml without running compose (the
// SearXNG and Valkey images cannot be pulled here): it parses; every
// service, volume and network it names is defined; every variable it uses
// is in .env.example and every one there is used; every SEARXGATE_
// variable is a setting of serve; the files it mounts exist; every service
// restarts and has a health check; SearXNG's limiter passes searxgate's
// fixed address; searxgate gets the time to stop cleanly. The commented
// replica example is checked the same way, uncommented.
func TestComposeFile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(deployDir, "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	passIP := readPassIP(t, filepath.Join(deployDir, "searxng", "limiter.toml"))
	for _, variant := range []struct{ name, text, searxgates string }{
		{"compose.yaml", text, "searxgate"},
		{"compose.yaml with the replica uncommented", uncommentReplica(t, text), "searxgate,searxgate-2"},
	} {
		t.Run(variant.name, func(t *testing.T) {
			var f composeFile
			if err := yaml.Unmarshal([]byte(variant.text), &f); err != nil {
				t.Fatalf("does not parse: %v", err)
			}
			checkCompose(t, f, strings.Split(variant.searxgates, ","), passIP)
		})
	}

	// Variables: each used is in .env.example, each there is used.
	env := readEnvExample(t, filepath.Join(deployDir, ".env.example"))
	used := map[string]bool{}
	for _, m := range composeVar.FindAllStringSubmatch(text, -1) {
		if used[m[1]] {
			continue
		}
		used[m[1]] = true
		if !slices.Contains(env, m[1]) {
			t.Errorf("compose.yaml uses ${%s}, which .env.example does not set", m[1])
		}
	}
	settings := settingVars()
	for _, name := range env {
		if !used[name] {
			t.Errorf(".env.example sets %s, which compose.yaml does not use", name)
		}
		if strings.HasPrefix(name, "SEARXGATE_") && !settings[name] && !slices.Contains(composeOnly, name) {
			t.Errorf(".env.example sets %s, which is no setting of searxgate serve", name)
		}
	}
	for _, want := range []string{"SEARXGATE_CONTACT", "SEARXGATE_MCP_TOKEN", "SEARXGATE_ADMIN_TOKEN", "SEARXNG_SECRET"} {
		if !slices.Contains(env, want) {
			t.Errorf(".env.example does not set %s", want)
		}
	}
}

// checkCompose checks one parsed compose file whose searxgate services are
// named searxgates.
func checkCompose(t *testing.T, f composeFile, searxgates []string, passIP []string) {
	t.Helper()
	for _, want := range append([]string{"searxng", "valkey"}, searxgates...) {
		if _, ok := f.Services[want]; !ok {
			t.Errorf("no service %s", want)
		}
	}
	settings := settingVars()
	usedVolumes := map[string]bool{}
	for name, s := range f.Services {
		if s.Image == "" {
			t.Errorf("service %s has no image", name)
		}
		if s.Restart == "" {
			t.Errorf("service %s has no restart policy", name)
		}
		if s.Healthcheck == nil || len(s.Healthcheck.Test) == 0 {
			t.Errorf("service %s has no healthcheck", name)
		}
		if s.StopGracePeriod == "" {
			t.Errorf("service %s has no stop_grace_period", name)
		}
		if !slices.Equal(s.CapDrop, []string{"ALL"}) || !slices.Contains(s.SecurityOpt, "no-new-privileges:true") {
			t.Errorf("service %s: cap_drop %q, security_opt %q; want [ALL] and no-new-privileges:true", name, s.CapDrop, s.SecurityOpt)
		}
		if !s.ReadOnly && name != "searxng" { // SearXNG's entrypoint writes its settings and its cache
			t.Errorf("service %s's root is not read_only", name)
		}
		for dep := range s.DependsOn {
			if _, ok := f.Services[dep]; !ok {
				t.Errorf("service %s depends on %s, which is not defined", name, dep)
			}
		}
		for _, v := range s.Volumes {
			src, _, _ := strings.Cut(v, ":")
			if strings.HasPrefix(src, ".") || strings.HasPrefix(src, "/") {
				if _, err := os.Stat(filepath.Join(deployDir, src)); err != nil {
					t.Errorf("service %s mounts %s, which does not exist: %v", name, src, err)
				}
				continue
			}
			usedVolumes[src] = true
			if _, ok := f.Volumes[src]; !ok {
				t.Errorf("service %s uses the volume %s, which is not defined", name, src)
			}
		}
		nets := s.networks(t)
		if len(nets) == 0 {
			t.Errorf("service %s joins no network of this file", name)
		}
		for n := range nets {
			if _, ok := f.Networks[n]; !ok {
				t.Errorf("service %s joins the network %s, which is not defined", name, n)
			}
		}
		if !slices.Contains(searxgates, name) {
			continue
		}
		for k := range s.Environment {
			if strings.HasPrefix(k, "SEARXGATE_") && !settings[k] {
				t.Errorf("service %s sets %s, which is no setting of searxgate serve", name, k)
			}
		}
		if !strings.HasPrefix(s.Environment["SEARXGATE_REDIS"], "redis://valkey:") {
			t.Errorf("service %s does not share state through valkey: SEARXGATE_REDIS=%q", name, s.Environment["SEARXGATE_REDIS"])
		}
		if !strings.HasPrefix(s.Environment["SEARXGATE_INSTANCE"], "http://searxng:") {
			t.Errorf("service %s does not ask the compose SearXNG first: SEARXGATE_INSTANCE=%q", name, s.Environment["SEARXGATE_INSTANCE"])
		}
		if !slices.Contains(s.Healthcheck.Test, "healthcheck") {
			t.Errorf("service %s's healthcheck is not searxgate healthcheck: %q", name, s.Healthcheck.Test)
		}
		for n, ip := range nets {
			checkFixedAddress(t, name, n, ip, f, passIP)
		}
		// The search deadline plus --shutdown-grace, as the file sets them.
		need := composeDefault(t, s.Environment["SEARXGATE_DEADLINE"], defaultConfig().Deadline) +
			composeDefault(t, s.Environment["SEARXGATE_SHUTDOWN_GRACE"], defaultConfig().Shutdown)
		if grace, err := time.ParseDuration(s.StopGracePeriod); err != nil || grace < need {
			t.Errorf("service %s: stop_grace_period %q is below the deadline plus the shutdown grace (%v)", name, s.StopGracePeriod, need)
		}
	}
	for v := range f.Volumes {
		if !usedVolumes[v] {
			t.Errorf("the volume %s is defined but no service uses it", v)
		}
	}
}

// checkFixedAddress: a searxgate service has a fixed address on its
// network, inside that network's subnet, and SearXNG's limiter passes it.
func checkFixedAddress(t *testing.T, service, network, ip string, f composeFile, passIP []string) {
	t.Helper()
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		t.Errorf("service %s has no fixed ipv4_address on %s (%q): SearXNG's pass_ip cannot name it", service, network, ip)
		return
	}
	in := false
	if nw := f.Networks[network]; nw != nil {
		for _, c := range nw.IPAM.Config {
			if p, err := netip.ParsePrefix(c.Subnet); err == nil && p.Contains(addr) {
				in = true
			}
		}
	}
	if !in {
		t.Errorf("service %s's address %s is outside the subnet of the network %s", service, ip, network)
	}
	if !slices.Contains(passIP, ip) {
		t.Errorf("service %s's address %s is not in searxng/limiter.toml's pass_ip %q", service, ip, passIP)
	}
}

// composeDefault is the duration a ${VAR:-default} value stands for: its
// default, or def when the value is empty.
func composeDefault(t *testing.T, v string, def time.Duration) time.Duration {
	t.Helper()
	if v == "" {
		return def
	}
	if m := composeVar.FindStringSubmatch(v); m != nil {
		_, v, _ = strings.Cut(m[0], ":-")
		v = strings.TrimSuffix(v, "}")
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("%q is not a duration", v)
	}
	return d
}

// readPassIP reads botdetection.ip_lists.pass_ip from a limiter.toml: the
// quoted strings of its array.
func readPassIP(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	_, after, ok := strings.Cut(text, "[botdetection.ip_lists]")
	if !ok {
		t.Fatalf("%s has no [botdetection.ip_lists]", path)
	}
	m := regexp.MustCompile(`(?s)\npass_ip\s*=\s*\[(.*?)\]`).FindStringSubmatch(after)
	if m == nil {
		t.Fatalf("%s has no pass_ip list under [botdetection.ip_lists]", path)
	}
	var ips []string
	for _, q := range regexp.MustCompile(`["']([^"']+)["']`).FindAllStringSubmatch(m[1], -1) {
		ips = append(ips, q[1])
	}
	return ips
}

// TestSystemdFiles: every SEARXGATE_ variable that the units and the
// environment file example name, set or commented out, is a setting of
// serve; both units keep the hardening lines and their data where
// StateDirectory puts it; the environment file sets no example contact.
// (deploy/systemd/check.sh runs systemd-analyze verify and security.)
func TestSystemdFiles(t *testing.T) {
	settings := settingVars()
	name := regexp.MustCompile(`SEARXGATE_[A-Z0-9_]+`)
	hardening := []string{"\nDynamicUser=yes\n", "\nNoNewPrivileges=yes\n", "\nProtectSystem=strict\n", "\nPrivateTmp=yes\n",
		"\nRestrictAddressFamilies=", "\nSystemCallFilter=@system-service\n", "\nMemoryMax="}
	for _, f := range []string{"searxgate.service", "searxgate@.service", "searxgate.env"} {
		b, err := os.ReadFile(filepath.Join(deployDir, "systemd", f))
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		for _, v := range name.FindAllString(string(b), -1) {
			seen++
			if !settings[v] {
				t.Errorf("%s names %s, which is no setting of searxgate serve", f, v)
			}
		}
		if seen == 0 {
			t.Errorf("%s names no setting", f)
		}
		var wants []string
		switch f {
		case "searxgate.service":
			wants = append(hardening, "\nStateDirectory=searxgate\n", "\nEnvironment=SEARXGATE_DATA=%S/searxgate\n")
		case "searxgate@.service":
			wants = append(hardening, "\nStateDirectory=searxgate-%i\n", " --data %S/searxgate-%i ", " --listen 127.0.0.1:888%i ",
				"\nLoadCredential=secret:/etc/searxgate/secret\n", " --secret-file %d/secret\n")
		}
		for _, want := range wants {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s lacks %q", f, strings.TrimSpace(want))
			}
		}
		if f == "searxgate.env" && regexp.MustCompile(`(?m)^SEARXGATE_CONTACT=`).Match(b) {
			t.Error("searxgate.env sets an example contact: operators would be sent to an address that is not the installer's")
		}
	}
}

// TestMakeTestTargets: every step make test runs (TEST_STEPS) has a rule
// (a phony target without one is silently "done", and CI would skip it),
// and make test runs TEST_STEPS (unit, the others beside it, then
// TEST_ALONE) and ends with the list of what was skipped.
func TestMakeTestTargets(t *testing.T) {
	b, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	m := regexp.MustCompile(`(?m)^TEST_STEPS = ([^#\n]*)`).FindStringSubmatch(text)
	if m == nil {
		t.Fatal("the Makefile sets no TEST_STEPS")
	}
	_, recipe, ok := strings.Cut(text, "\ntest:")
	recipe, _, _ = strings.Cut(recipe, "\n\n")
	for _, run := range []string{"quiet unit &", "for step in $(filter-out unit $(TEST_ALONE),$(TEST_STEPS))",
		"wait $$unit", "for step in $(filter $(TEST_ALONE),$(TEST_STEPS))", `grep -h "SKIP: "`} {
		if !ok || !strings.Contains(recipe, run) {
			t.Errorf("make test does not run $(TEST_STEPS) and list the SKIP lines: no %q in%s", run, recipe)
		}
	}
	deps := strings.Fields(m[1])
	for _, want := range []string{"unit", "systemd-check", "image-test"} {
		if !slices.Contains(deps, want) {
			t.Errorf("make test does not run %s", want)
		}
	}
	for _, d := range deps {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(d) + `:`).MatchString(text) {
			t.Errorf("make test depends on %s, which has no rule", d)
		}
	}
}
