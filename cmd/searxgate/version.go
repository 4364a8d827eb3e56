package main

import (
	"regexp"
	"runtime/debug"
	"strings"
)

// Version is searxgate's version: what the build set with
// -ldflags "-X main.Version=..." (the Makefile does, from git describe),
// else what the Go toolchain recorded (see resolveVersion). The
// User-Agent sent to every instance, /status, /config and /metrics carry
// it.
var Version string

// Revision is the commit searxgate was built from: what the build set with
// -ldflags "-X main.Revision=..." (make build and make image do, from git),
// else the VCS revision the toolchain stamped ("-dirty" when the tree had
// changes), else "". searxgate version and the image's labels show it.
var Revision string

// devVersion is the version of a build that says nothing better.
const devVersion = "0.1.0-dev"

func init() {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = nil
	}
	Version = resolveVersion(Version, info)
	Revision = resolveRevision(Revision, info)
}

// versionLine is what searxgate version prints: the version, then the
// revision when it is known.
func versionLine(version, revision string) string {
	if revision == "" {
		return "searxgate " + version
	}
	return "searxgate " + version + " revision " + revision
}

// resolveRevision picks the revision to report: the one set at build time,
// else the toolchain's vcs.revision (with "-dirty"), else "".
func resolveRevision(set string, info *debug.BuildInfo) string {
	if set = strings.TrimSpace(set); set != "" || info == nil {
		return set
	}
	rev, dirty := vcsRevision(info)
	if rev != "" && dirty {
		rev += "-dirty"
	}
	return rev
}

// vcsRevision is the revision the toolchain stamped into info, and
// whether the tree had changes.
func vcsRevision(info *debug.BuildInfo) (rev string, dirty bool) {
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	return rev, dirty
}

// pseudoVersion matches the tail of a Go pseudo-version
// (v0.0.0-20260101120000-0123456789ab), which the toolchain makes up for a
// commit that has no tag.
var pseudoVersion = regexp.MustCompile(`\d{14}-[0-9a-f]{12}$`)

// resolveVersion picks the version to report. In order:
//   - the one set at build time with -ldflags (set);
//   - the main module's version when it is a release
//     (go install github.com/searxgate/searxgate/cmd/searxgate@v1.2.3);
//   - the VCS revision the toolchain stamped, with "-dirty" when the tree
//     had changes: 0.1.0-dev+abc1234-dirty;
//   - the main module's pseudo-version (go install ...@<commit>);
//   - 0.1.0-dev.
//
// info may be nil (a binary built without module support).
func resolveVersion(set string, info *debug.BuildInfo) string {
	if set = strings.TrimSpace(set); set != "" {
		return set
	}
	if info == nil {
		return devVersion
	}
	main := info.Main.Version
	known := main != "" && main != "(devel)"
	if known && !strings.HasSuffix(main, "+dirty") && !pseudoVersion.MatchString(main) {
		return main
	}
	rev, dirty := vcsRevision(info)
	if rev != "" {
		v := devVersion + "+" + rev[:min(len(rev), 7)]
		if dirty {
			v += "-dirty"
		}
		return v
	}
	if known {
		return main
	}
	return devVersion
}
