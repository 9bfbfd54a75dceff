// Package testspecs finds the API descriptions that tests load but the
// repository does not keep.
package testspecs

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// GitHubEnv names the environment variable that points at GitHub's REST
// description; .ci/run sets it.
const GitHubEnv = "TOOLGATE_GITHUB_SPEC"

// GitHub returns the path of GitHub's REST description from the npm
// package @octokit/openapi, which .ci/run installs into .cache/npm. The
// test is skipped when it is not there.
func GitHub(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv(GitHubEnv); p != "" {
		return p
	}
	_, file, _, _ := runtime.Caller(0)
	p := filepath.Join(filepath.Dir(file), "..", "..", ".cache", "npm", "node_modules", "@octokit", "openapi", "generated", "api.github.com.json")
	if _, err := os.Stat(p); err != nil {
		tb.Skip("GitHub's description is not installed (.ci/run installs it: npm install @octokit/openapi)")
	}
	return p
}
