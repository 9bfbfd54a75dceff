package testspecs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rubicon-go/rubicon/internal/testkit"
)

// NodeEnv is where a test finds Node and the npm packages that .ci/run
// installs into .cache/npm.
type NodeEnv struct {
	Node    string // the node binary
	Modules string // a node_modules directory
}

// Node returns a Node of at least version minimum ("22.19") and the
// node_modules ($TOOLGATE_NODE_MODULES, else .cache/npm/node_modules)
// that hold pkgs. What is missing ends the test by testkit's rule: a
// skip that says how to install it, or a failure under
// $RUBICON_TEST_REQUIRE.
func Node(tb testing.TB, minimum string, pkgs ...string) NodeEnv {
	tb.Helper()
	testkit.Long(tb)
	modules := os.Getenv(NodeModulesEnv)
	if modules == "" {
		modules = filepath.Join(CorpusDir(), "..", "..", "..", ".cache", "npm", "node_modules")
	}
	for _, p := range pkgs {
		if _, err := os.Stat(filepath.Join(modules, filepath.FromSlash(p), "package.json")); err != nil {
			testkit.Missing(tb, testkit.NPM(pkgs...), "the npm package "+p+" is not installed in "+modules)
		}
	}
	node, version := findNode(modules)
	if node == "" {
		testkit.Missing(tb, testkit.Node, "node is not installed")
	}
	if older(version, minimum) {
		testkit.Missing(tb, testkit.Node, "node "+version+" is too old for "+strings.Join(pkgs, ", ")+", which need Node "+minimum)
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
