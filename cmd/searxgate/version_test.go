package main

import (
	"bytes"
	"context"
	"runtime/debug"
	"strings"
	"testing"
)

// TestResolveVersion: the version comes from -ldflags first, then from what
// the toolchain recorded (fake build info here).
func TestResolveVersion(t *testing.T) {
	vcs := func(main, rev, modified string) *debug.BuildInfo {
		info := &debug.BuildInfo{Main: debug.Module{Path: "searxgate", Version: main}}
		if rev != "" {
			info.Settings = append(info.Settings, debug.BuildSetting{Key: "vcs", Value: "git"},
				debug.BuildSetting{Key: "vcs.revision", Value: rev},
				debug.BuildSetting{Key: "vcs.time", Value: "2026-11-30T12:00:00Z"})
		}
		if modified != "" {
			info.Settings = append(info.Settings, debug.BuildSetting{Key: "vcs.modified", Value: modified})
		}
		return info
	}
	const rev = "abc1234def5678abc1234def5678abc1234def56"
	for _, c := range []struct {
		name string
		set  string
		info *debug.BuildInfo
		want string
	}{
		{"ldflags win over everything", "v1.2.3-4-gabcdef0-dirty", vcs("v9.9.9", rev, "true"), "v1.2.3-4-gabcdef0-dirty"},
		{"ldflags blank is not set", "  ", nil, devVersion},
		{"no build info", "", nil, devVersion},
		{"go install @v1.2.3", "", vcs("v1.2.3", "", ""), "v1.2.3"},
		{"built on a clean tag", "", vcs("v0.2.0", rev, "false"), "v0.2.0"},
		{"built from a checkout, clean", "", vcs("(devel)", rev, "false"), "0.1.0-dev+abc1234"},
		{"built from a checkout, changed", "", vcs("(devel)", rev, "true"), "0.1.0-dev+abc1234-dirty"},
		{"pseudo-version with VCS: the revision reads better", "", vcs("v0.0.0-20261130120000-abc1234def56+dirty", rev, "true"), "0.1.0-dev+abc1234-dirty"},
		{"go install @commit", "", vcs("v0.0.0-20261130120000-abc1234def56", "", ""), "v0.0.0-20261130120000-abc1234def56"},
		{"short revision", "", vcs("", "abc", ""), "0.1.0-dev+abc"},
		{"devel without VCS", "", vcs("(devel)", "", ""), devVersion},
	} {
		if got := resolveVersion(c.set, c.info); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestResolveRevision: the revision comes from -ldflags first, then from
// the toolchain's vcs.revision.
func TestResolveRevision(t *testing.T) {
	const rev = "abc1234def5678abc1234def5678abc1234def56"
	info := func(settings ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{}
		for i := 0; i+1 < len(settings); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return bi
	}
	for _, c := range []struct {
		name string
		set  string
		info *debug.BuildInfo
		want string
	}{
		{"ldflags win", "0123456", info("vcs.revision", rev), "0123456"},
		{"no build info", "", nil, ""},
		{"clean checkout", "", info("vcs.revision", rev, "vcs.modified", "false"), rev},
		{"changed checkout", "", info("vcs.revision", rev, "vcs.modified", "true"), rev + "-dirty"},
		{"no VCS", "", info(), ""},
	} {
		if got := resolveRevision(c.set, c.info); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	if got := versionLine("v1.2.3", "0123456"); got != "searxgate v1.2.3 revision 0123456" {
		t.Errorf("versionLine with a revision = %q", got)
	}
	if got := versionLine("v1.2.3", ""); got != "searxgate v1.2.3" {
		t.Errorf("versionLine without a revision = %q", got)
	}
}

// TestVersionCommand: searxgate version prints the resolved version, the
// one the User-Agent carries.
func TestVersionCommand(t *testing.T) {
	if Version == "" {
		t.Fatal("Version was not resolved at start")
	}
	var out bytes.Buffer
	if code := Main(context.Background(), []string{"version"}, &out, &out, env(nil)); code != 0 {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	if got := strings.TrimSpace(out.String()); got != versionLine(Version, Revision) || !strings.HasPrefix(got, "searxgate "+Version) {
		t.Errorf("searxgate version printed %q, want %q", got, versionLine(Version, Revision))
	}
	if ua := userAgent("ops@example.org"); ua != "searxgate/"+Version+" (+ops@example.org)" {
		t.Errorf("User-Agent %q does not carry the version %q", ua, Version)
	}
}
