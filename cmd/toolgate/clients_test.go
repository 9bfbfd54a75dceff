package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testspecs"
)

// The real MCP clients of these tests come from the npm registry, and
// .ci/run installs them into .cache/npm: the TypeScript SDK, the MCP
// Inspector, the official conformance suite, and Node 22, which the last
// two need. A missing one skips the test, or fails it under
// RUBICON_TEST_REQUIRE (testkit's rule).

// nodeEnv is where the tests find Node and the npm packages.
type nodeEnv struct {
	node    string // the node binary
	modules string // a node_modules directory
}

// nodeFor returns a Node of at least version minimum ("22.19") and the
// node_modules that hold pkgs; their absence ends the test by testkit's
// rule.
func nodeFor(t testing.TB, minimum string, pkgs ...string) nodeEnv {
	t.Helper()
	n := testspecs.Node(t, minimum, pkgs...)
	return nodeEnv{node: n.Node, modules: n.Modules}
}

// runScript runs testdata/script with Node and returns its standard
// output. Node resolves an ES module's imports from its own directory, so
// the script runs from a directory that links to the modules.
func runScript(t *testing.T, n nodeEnv, script string, env []string, args ...string) []byte {
	t.Helper()
	dir := t.TempDir()
	code, err := os.ReadFile(filepath.Join("testdata", script))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, script), code, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(n.modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return runNode(t, n, env, append([]string{filepath.Join(dir, script)}, args...)...)
}

// runNode runs node with args and returns its standard output.
func runNode(t *testing.T, n nodeEnv, env []string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, n.node, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\n%s\n%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return out
}

// The MCP Inspector's command line lists toolgate's tools, over stdio and
// over Streamable HTTP.
func TestInspectorListsTools(t *testing.T) {
	t.Parallel()
	n := nodeFor(t, "22.19", "@modelcontextprotocol/inspector")
	_, base := upstream(t)
	inspector := filepath.Join(n.modules, "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
	env := []string{"HOME=" + t.TempDir()} // where it would keep its catalog of servers
	overStdio := runNode(t, n, env, inspector, "--cli", "--method", "tools/list", "--",
		binary(t), "serve", shopSpec, "--config", noCredentials, "--stdio", "--upstream", base, "--db", filepath.Join(t.TempDir(), "j.db"))
	url := serveHTTP(t, nil, "--http", "127.0.0.1:0", "--upstream", base, "--db", filepath.Join(t.TempDir(), "j.db"))
	overHTTP := runNode(t, n, env, inspector, "--cli", "--method", "tools/list", "--transport", "http", url)
	for transport, out := range map[string][]byte{"stdio": overStdio, "http": overHTTP} {
		var list struct{ Tools []struct{ Name string } }
		if err := json.Unmarshal(out, &list); err != nil {
			t.Fatalf("%s: the inspector printed %q: %v", transport, out, err)
		}
		var names []string
		for _, tl := range list.Tools {
			names = append(names, tl.Name)
		}
		sort.Strings(names)
		if got := strings.Join(names, " "); got != "createOrder getCategory getOrder listOrders" {
			t.Errorf("over %s the inspector lists %q", transport, got)
		}
	}
}

// The MCP Inspector's command line lists every tool of Kubernetes'
// document, page by page, and calls them: a read reaches the upstream; a
// pod whose container has a name that is not a string is refused, by the
// whole schema, deeper than the listed one goes, and nothing is sent.
func TestInspectorOnKubernetes(t *testing.T) {
	t.Parallel()
	n := nodeFor(t, "22.19", "@modelcontextprotocol/inspector")
	doc := testspecs.Corpus(t, "k8s-swagger.json")
	up := newRecorder(t)
	inspector := filepath.Join(n.modules, "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
	env := []string{"HOME=" + t.TempDir()}
	db := filepath.Join(t.TempDir(), "j.db")
	// The inspector exits with 5 when a tool's result is an error, which
	// is every call here: the upstream answers 404.
	inspect := func(args ...string) []byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, n.node, append([]string{inspector, "--cli"}, append(args, "--", binary(t), "serve", doc, "--config", noCredentials, "--stdio", "--upstream", up.url, "--db", db)...)...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.Output()
		if err != nil && (cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 5) {
			t.Fatalf("the inspector %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	var list struct{ Tools []struct{ Name string } }
	if out := inspect("--method", "tools/list"); json.Unmarshal(out, &list) != nil {
		t.Fatalf("the inspector printed %.300q", out)
	}
	names := map[string]bool{}
	for _, tl := range list.Tools {
		names[tl.Name] = true
	}
	if want := exposedTools(t, doc); len(list.Tools) != want || len(names) != want || !names["createCoreV1NamespacedPod"] {
		t.Errorf("the inspector lists %d tools (%d names); want each of the %d exposed once", len(list.Tools), len(names), want)
	}
	var res struct {
		Content []struct{ Text string }
		IsError bool
	}
	out := inspect("--method", "tools/call", "--tool-name", "listCoreV1Namespace")
	if err := json.Unmarshal(out, &res); err != nil || !strings.Contains(res.Content[0].Text, "404") {
		t.Errorf("listCoreV1Namespace: %s (%v)", out, err)
	}
	if got := up.got(); len(got) != 1 || got[0] != "GET /api/v1/namespaces" {
		t.Errorf("the upstream got %v", got)
	}
	out = inspect("--method", "tools/call", "--tool-name", "createCoreV1NamespacedPod", "--tool-arg", "namespace=default",
		`body={"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":5,"image":"nginx"}]}}`)
	if err := json.Unmarshal(out, &res); err != nil || !res.IsError || !strings.Contains(res.Content[0].Text, "body.spec.containers[0].name is 5; it must be a string") {
		t.Errorf("createCoreV1NamespacedPod with a container named 5: %s (%v)", out, err)
	}
	if got := up.got(); len(got) != 1 {
		t.Errorf("the upstream got %v; the invalid pod must not be sent", got)
	}
}
