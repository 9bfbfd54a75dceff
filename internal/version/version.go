// Package version says which build of rubicon's programs is running: the
// module version, the commit, when it was made and whether the tree had
// changes, and the Go version, as the Go toolchain records them in the
// binary. A release build stamps its version with the linker
// (make release: -X github.com/rubicon-go/rubicon/internal/version.stamped=v1.2.3);
// `go install ...@v1.2.3` records it by itself.
package version

import (
	"runtime/debug"
	"strings"
)

// stamped is the version a release build sets with -ldflags -X.
var stamped string

// Info describes a build.
type Info struct {
	// Version is the module's version: a release tag (v1.2.3), a
	// pseudo-version of a commit, or "(devel)" for a build from a checkout
	// that the toolchain could not name.
	Version string `json:"version"`
	// Commit is the full hash of the commit built, when the build recorded
	// it.
	Commit string `json:"commit,omitempty"`
	// Time is when that commit was made, in RFC 3339, when recorded.
	Time string `json:"commit_time,omitempty"`
	// Modified says the tree built had changes that no commit holds.
	Modified bool `json:"modified"`
	// GoVersion is the Go release that built the binary.
	GoVersion string `json:"go_version"`
}

// Get returns the running binary's build information.
func Get() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: orDevel(stamped)}
	}
	return fromBuildInfo(bi, stamped)
}

func fromBuildInfo(bi *debug.BuildInfo, stamp string) Info {
	i := Info{Version: bi.Main.Version, GoVersion: bi.GoVersion}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			i.Commit = s.Value
		case "vcs.time":
			i.Time = s.Value
		case "vcs.modified":
			i.Modified = s.Value == "true"
		}
	}
	if stamp != "" {
		i.Version = stamp
	}
	i.Version = orDevel(i.Version)
	if strings.HasSuffix(i.Version, "+dirty") {
		i.Modified = true
	}
	return i
}

func orDevel(v string) string {
	if v == "" {
		return "(devel)"
	}
	return v
}

// String describes the build in one line:
// "v1.2.3 (commit 0123456789ab, 2026-12-02T10:00:00Z, go1.26.8)", with
// ", modified" when the tree had changes.
func (i Info) String() string {
	var b strings.Builder
	b.WriteString(i.Version)
	var parts []string
	if i.Commit != "" {
		parts = append(parts, "commit "+short(i.Commit))
	}
	if i.Time != "" {
		parts = append(parts, i.Time)
	}
	if i.Modified {
		parts = append(parts, "modified")
	}
	if i.GoVersion != "" {
		parts = append(parts, i.GoVersion)
	}
	if len(parts) > 0 {
		b.WriteString(" (" + strings.Join(parts, ", ") + ")")
	}
	return b.String()
}

// Short is the version alone, for a protocol's version field: the
// module version, or for a build the toolchain could not name, "devel"
// and the commit ("devel+0123456789ab").
func (i Info) Short() string {
	if i.Version != "(devel)" {
		return i.Version
	}
	if i.Commit != "" {
		return "devel+" + short(i.Commit)
	}
	return "devel"
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
