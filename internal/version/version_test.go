package version

import (
	"runtime/debug"
	"testing"
)

func TestInfoFromBuildInformation(t *testing.T) {
	settings := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i+1 < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	cases := []struct {
		name         string
		bi           debug.BuildInfo
		stamp        string
		str, shorter string
	}{
		{"go install at a tag", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}}, "",
			"v1.2.3 (go1.26.8)", "v1.2.3"},
		{"a checkout with changes", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
			Settings: settings("vcs.revision", "0123456789abcdef0123", "vcs.time", "2026-12-02T10:00:00Z", "vcs.modified", "true")}, "",
			"(devel) (commit 0123456789ab, 2026-12-02T10:00:00Z, modified, go1.26.8)", "devel+0123456789ab"},
		{"a release build stamped by the linker", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
			Settings: settings("vcs.revision", "abc", "vcs.modified", "false")}, "v0.5.0",
			"v0.5.0 (commit abc, go1.26.8)", "v0.5.0"},
		{"a pseudo-version of a dirty tree", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261202100000-0123456789ab+dirty"}}, "",
			"v0.0.0-20261202100000-0123456789ab+dirty (modified, go1.26.8)", "v0.0.0-20261202100000-0123456789ab+dirty"},
		{"nothing recorded", debug.BuildInfo{}, "", "(devel)", "devel"},
	}
	for _, c := range cases {
		i := fromBuildInfo(&c.bi, c.stamp)
		if got := i.String(); got != c.str {
			t.Errorf("%s: String() = %q, want %q", c.name, got, c.str)
		}
		if got := i.Short(); got != c.shorter {
			t.Errorf("%s: Short() = %q, want %q", c.name, got, c.shorter)
		}
	}
}

func TestGetReadsThisBinary(t *testing.T) {
	i := Get()
	if i.GoVersion == "" || i.Version == "" {
		t.Fatalf("Get() = %+v: a test binary records its Go version and a module version", i)
	}
}
