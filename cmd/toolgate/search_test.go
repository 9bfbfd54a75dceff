package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/internal/testspecs"
)

// largeAPIs are the documents too large to serve as one tool per
// operation, with a task an agent searches for, the operation that does
// it, an operation without required arguments (whose call reaches the
// upstream) and one with (whose call without them is refused).
var largeAPIs = []struct {
	name, query, want, free, needs string
}{
	{"kubernetes", "list the pods in namespace default", "listCoreV1NamespacedPod", "listCoreV1Namespace", "listCoreV1NamespacedPod"},
	{"github", "create an issue in repo o/r", "issues_create", "meta_root", "issues_create"},
}

// largeAPI returns the document of a large API; GitHub's missing ends the
// test by testkit's rule.
func largeAPI(t *testing.T, name string, n nodeEnv) string {
	t.Helper()
	if name == "kubernetes" {
		return testspecs.Corpus(t, "k8s-swagger.json")
	}
	github := os.Getenv(testspecs.GitHubEnv)
	if github == "" {
		github = filepath.Join(n.modules, "@octokit", "openapi", "generated", "api.github.com.json")
	}
	if !fileExists(github) {
		testkit.Missing(t, testkit.NPM("@octokit/openapi"), "GitHub's description is not at "+github)
	}
	return github
}

// The TypeScript SDK's client lists the three tools of search mode on
// Kubernetes' and GitHub's documents, finds an operation, describes it,
// and calls operations through call_operation: one that reaches the
// upstream, and one without its required arguments, which sends nothing.
func TestTypeScriptClientInSearchMode(t *testing.T) {
	t.Parallel()
	n := nodeFor(t, "18", "@modelcontextprotocol/sdk")
	for _, api := range largeAPIs {
		t.Run(api.name, func(t *testing.T) {
			doc := largeAPI(t, api.name, n)
			up := newRecorder(t)
			out := runScript(t, n, "search.mjs", nil, api.query, api.free+","+api.needs,
				binary(t), "serve", doc, "--config", noCredentials, "--stdio", "--mode", "search", "--upstream", up.url, "--db", filepath.Join(t.TempDir(), "j.db"))
			var r struct {
				Listed           []string
				Search, Describe string
				Calls            map[string]struct {
					IsError             bool
					Text, ProtocolError string
				}
			}
			if err := json.Unmarshal(out, &r); err != nil {
				t.Fatalf("the client printed %q: %v", out, err)
			}
			if strings.Join(r.Listed, " ") != "search_operations describe_operation call_operation" {
				t.Errorf("listed %v", r.Listed)
			}
			if !strings.Contains(r.Search, "\n"+api.want+" (") {
				t.Errorf("searching %q did not find %s:\n%s", api.query, api.want, r.Search)
			}
			var d struct {
				Name, Risk  string
				InputSchema map[string]any `json:"input_schema"`
			}
			if err := json.Unmarshal([]byte(r.Describe), &d); err != nil || d.Name == "" || d.Risk == "" || d.InputSchema["type"] != "object" {
				t.Errorf("describe_operation: %v\n%.300s", err, r.Describe)
			}
			if c := r.Calls[api.free]; c.IsError != true || !strings.Contains(c.Text, "404") {
				t.Errorf("%s({}) should have reached the upstream, which answers 404: %+v", api.free, c)
			}
			if c := r.Calls[api.needs]; !c.IsError || !strings.Contains(c.Text, "Nothing was sent") {
				t.Errorf("%s({}) lacks required arguments, yet: %+v", api.needs, c)
			}
			if got := up.got(); len(got) != 1 {
				t.Errorf("the upstream got %v; want the one call without required arguments", got)
			}
		})
	}
}

// The MCP Inspector's command line lists the tools of search mode on
// Kubernetes' and GitHub's documents, and calls search_operations and,
// through call_operation, an operation that reaches the upstream, which
// answers it (the inspector fails on an error result).
func TestInspectorInSearchMode(t *testing.T) {
	t.Parallel()
	n := nodeFor(t, "22.19", "@modelcontextprotocol/inspector")
	inspector := filepath.Join(n.modules, "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
	for _, api := range largeAPIs {
		t.Run(api.name, func(t *testing.T) {
			doc := largeAPI(t, api.name, n)
			var requests atomic.Int32
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"answered":"`+r.Method+" "+r.URL.Path+`"}`)
			}))
			defer up.Close()
			serve := []string{"--", binary(t), "serve", doc, "--config", noCredentials, "--stdio", "--mode", "search", "--upstream", up.URL, "--db", filepath.Join(t.TempDir(), "j.db")}
			env := []string{"HOME=" + t.TempDir()}
			inspect := func(args ...string) []byte {
				return runNode(t, n, env, append(append([]string{inspector, "--cli"}, args...), serve...)...)
			}
			var list struct{ Tools []struct{ Name string } }
			if out := inspect("--method", "tools/list"); json.Unmarshal(out, &list) != nil {
				t.Fatalf("tools/list: the inspector printed %q", out)
			}
			var names []string
			for _, tl := range list.Tools {
				names = append(names, tl.Name)
			}
			if !slices.Equal(names, []string{"search_operations", "describe_operation", "call_operation"}) {
				t.Errorf("the inspector lists %v", names)
			}
			type result struct {
				Content []struct{ Text string }
				IsError bool
			}
			var found result
			query, _ := json.Marshal(map[string]any{"query": api.query})
			if out := inspect("--method", "tools/call", "--tool-name", "search_operations", "--tool-args-json", string(query)); json.Unmarshal(out, &found) != nil ||
				len(found.Content) == 0 || !strings.Contains(found.Content[0].Text, "\n"+api.want+" (") {
				t.Errorf("search_operations %q: %s", api.query, out)
			}
			var called result
			call, _ := json.Marshal(map[string]any{"name": api.free, "arguments": map[string]any{}})
			if out := inspect("--method", "tools/call", "--tool-name", "call_operation", "--tool-args-json", string(call)); json.Unmarshal(out, &called) != nil ||
				len(called.Content) == 0 || !strings.Contains(called.Content[0].Text, `"answered":"GET /`) {
				t.Errorf("call_operation %s: %s", api.free, out)
			}
			if n := requests.Load(); n != 1 {
				t.Errorf("the upstream got %d requests; want one", n)
			}
		})
	}
}

// toolgate serve --mode auto serves Kubernetes' document in search mode
// and the example API in tools mode, and says which on start, with the
// figures that decided.
func TestServeAutoMode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		spec, says string
		tools      int
	}{
		{testspecs.Corpus(t, "k8s-swagger.json"), "mode auto chose search: 821 tools are exposed, more than 128", 3},
		{shopSpec, "mode auto chose tools: 4 tools are exposed (search past 128) and tools/list is 1 KiB (search past 256 KiB)", 4},
	} {
		var stderr bytes.Buffer
		cmd := exec.Command(binary(t), "serve", c.spec, "--config", noCredentials, "--stdio", "--mode", "auto", "--upstream", "http://127.0.0.1:1", "--db", filepath.Join(t.TempDir(), "j.db"))
		cmd.Stderr = &stderr
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		list, err := cs.ListTools(ctx, nil)
		cs.Close()
		if err != nil || len(list.Tools) != c.tools {
			t.Errorf("%s: %v, %d tools listed; want %d", c.spec, err, len(list.Tools), c.tools)
		}
		if !strings.Contains(stderr.String(), "toolgate: "+c.says+"\n") {
			t.Errorf("%s: toolgate serve said %q; want %q", c.spec, stderr.String(), c.says)
		}
	}
}
