package testspecs

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rubicon-go/rubicon/internal/testkit"
)

// NodeModulesEnv names the environment variable that points at the npm
// packages .ci/run installs (the TypeScript MCP SDK, with ajv).
const NodeModulesEnv = "TOOLGATE_NODE_MODULES"

// NodeModulesDir returns the directory of the npm packages that .ci/run
// installs, or why node or the packages cannot be used.
func NodeModulesDir() (string, error) {
	dir := os.Getenv(NodeModulesEnv)
	if dir == "" {
		dir = filepath.Join(CorpusDir(), "..", "..", "..", ".cache", "npm", "node_modules")
	}
	if _, err := os.Stat(filepath.Join(dir, "ajv", "dist", "2020.js")); err != nil {
		return "", err
	}
	if _, err := exec.LookPath("node"); err != nil {
		return "", err
	}
	return dir, nil
}

// NodeModules returns NodeModulesDir. Node or the packages missing end
// the test by testkit's rule: a skip that says how to install them, or a
// failure under $RUBICON_TEST_REQUIRE.
func NodeModules(tb testing.TB) string {
	tb.Helper()
	dir, err := NodeModulesDir()
	if err != nil {
		testkit.Missing(tb, testkit.NPM("@modelcontextprotocol/sdk"), "node or ajv, which @modelcontextprotocol/sdk brings, is missing: "+err.Error())
	}
	return dir
}

// AjvFailure is a schema that ajv could not compile.
type AjvFailure struct {
	Name, Validator, Error string
}

// Ajv compiles every schema as MCP clients do, with ajv's draft-07 class
// set as the TypeScript SDK sets it and with its 2020-12 class, in one
// node process, and returns the failures. A schema that several names
// share is compiled once, and its failures name the first in order.
func Ajv(tb testing.TB, schemas map[string]json.RawMessage) []AjvFailure {
	tb.Helper()
	return StartAjv(tb, schemas)()
}

// StartAjv is Ajv that returns while node compiles: the function it
// returns waits for the failures, and must be called from the test's
// goroutine.
func StartAjv(tb testing.TB, schemas map[string]json.RawMessage) func() []AjvFailure {
	tb.Helper()
	names := slices.Sorted(maps.Keys(schemas))
	distinct, seen := map[string]json.RawMessage{}, map[string]bool{}
	for _, n := range names {
		if s := schemas[n]; !seen[string(s)] {
			seen[string(s)] = true
			distinct[n] = s
		}
	}
	modules := NodeModules(tb)
	dir := tb.TempDir()
	// Node resolves a module's imports from its own directory.
	script, err := os.ReadFile(filepath.Join(CorpusDir(), "..", "ajv-compile.mjs"))
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ajv-compile.mjs"), script, 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		tb.Fatal(err)
	}
	in, err := json.Marshal(distinct)
	if err != nil {
		tb.Fatal(err)
	}
	file := filepath.Join(dir, "schemas.json")
	if err := os.WriteFile(file, in, 0o600); err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command("node", "--max-old-space-size=4096", filepath.Join(dir, "ajv-compile.mjs"), file)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		tb.Fatalf("node ajv-compile.mjs: %v", err)
	}
	return func() []AjvFailure {
		tb.Helper()
		if err := cmd.Wait(); err != nil {
			tb.Fatalf("node ajv-compile.mjs: %v\n%s", err, stderr.Bytes())
		}
		var failures []AjvFailure
		if err := json.Unmarshal(stdout.Bytes(), &failures); err != nil {
			tb.Fatalf("node ajv-compile.mjs said %.300s: %v", stdout.Bytes(), err)
		}
		return failures
	}
}
