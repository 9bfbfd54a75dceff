package testspecs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// NodeEnv is where a test finds Node and the npm packages that .ci/run
// installs into .cache/npm.
type NodeEnv struct {
	Node    string // the node binary
	Modules string // a node_modules directory
}

// Node returns a Node of at least version minimum ("22.19") and the
// node_modules ($TOOLGATE_NODE_MODULES, else .cache/npm/node_modules)
// that hold pkgs. The test is skipped, saying how to install what is
// missing, or fails when $TOOLGATE_E2E is "require".
func Node(tb testing.TB, minimum string, pkgs ...string) NodeEnv {
	tb.Helper()
	modules := os.Getenv(NodeModulesEnv)
	if modules == "" {
		modules = filepath.Join(CorpusDir(), "..", "..", "..", ".cache", "npm", "node_modules")
	}
	missing := func(what string) {
		tb.Helper()
		if os.Getenv("TOOLGATE_E2E") == "require" {
			tb.Fatalf("%s (TOOLGATE_E2E=require; .ci/run installs it into .cache/npm)", what)
		}
		tb.Skipf("%s; .ci/run installs it into .cache/npm (npm install --prefix .cache/npm %s)", what, strings.Join(pkgs, " "))
	}
	for _, p := range pkgs {
		if _, err := os.Stat(filepath.Join(modules, filepath.FromSlash(p), "package.json")); err != nil {
			missing("the npm package " + p + " is not installed in " + modules)
		}
	}
	node, version := findNode(modules)
	if node == "" {
		missing("node is not installed")
	}
	if older(version, minimum) {
		missing("node " + version + " is too old for " + strings.Join(pkgs, ", ") + ", which need Node " + minimum)
	}
	return NodeEnv{Node: node, Modules: modules}
}

// older reports whether version a comes before version b.
func older(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := range bs {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		y, _ = strconv.Atoi(bs[i])
		if x != y {
			return x < y
		}
	}
	return false
}

var nodeFound struct {
	once    sync.Once
	path    string
	version string
}

// findNode looks for $TOOLGATE_NODE, the node that .ci/run installs from
// the npm package node-linux-*, and node on the PATH, in that order.
func findNode(modules string) (path, version string) {
	nodeFound.once.Do(func() {
		for _, candidate := range []string{os.Getenv("TOOLGATE_NODE"), filepath.Join(modules, ".bin", "node"), "node"} {
			if candidate == "" {
				continue
			}
			path, err := exec.LookPath(candidate)
			if err != nil {
				continue
			}
			out, err := exec.Command(path, "--version").Output()
			if err != nil {
				continue
			}
			nodeFound.path, nodeFound.version = path, strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
			return
		}
	})
	return nodeFound.path, nodeFound.version
}
