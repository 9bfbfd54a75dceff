package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// clientEntry is a server's entry in an MCP client's configuration, as
// every client format writes it.
type clientEntry struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

// placeholder matches what a client puts in place of a secret: VS Code's
// ${input:ID}, Cursor's ${env:NAME}, Claude Code's ${NAME}, and the
// <...> that Claude Desktop's user replaces.
var placeholder = regexp.MustCompile(`^(\$\{(input:|env:)?[A-Za-z0-9_-]+\}|<[^>]+>)$`)

// TestClientConfigStartsTheServerFromAnywhere prints each client's entry
// from one directory, with relative paths, then starts the server as the
// client would (its own working directory, only the entry's environment)
// and lists and calls its tools: the paths are absolute, the secret is
// asked for and never printed, and the journal is the one the shell that
// printed the entry uses.
func TestClientConfigStartsTheServerFromAnywhere(t *testing.T) {
	t.Parallel()
	api, base := upstream(t)
	here := t.TempDir()
	for _, f := range []string{"openapi.yaml"} {
		copyFile(t, filepath.Join("../../examples/shop", f), filepath.Join(here, f))
	}
	config := "upstream:\n  schemes:\n    oauth: {type: bearer, env: SHOP_TOKEN}\n"
	if err := os.WriteFile(filepath.Join(here, "toolgate.yaml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, client := range []string{"claude-desktop", "claude-code", "vscode", "cursor"} {
		t.Run(client, func(t *testing.T) {
			journal := "journal-" + client + ".db"
			cmd := exec.Command(binary(t), "client-config", "openapi.yaml", "--config", "toolgate.yaml", "--upstream", base, "--client", client, "--db", journal)
			cmd.Dir = here
			cmd.Env = append(os.Environ(), "SHOP_TOKEN=sk-live-do-not-print")
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("client-config: %v\n%s", err, stderrOf(err))
			}
			if strings.Contains(string(out), "sk-live-do-not-print") {
				t.Fatalf("the entry carries the secret:\n%s", out)
			}
			e := entryOf(t, client, out)
			if !filepath.IsAbs(e.Command) || !slices.Contains(e.Args, filepath.Join(here, "openapi.yaml")) || !slices.Contains(e.Args, filepath.Join(here, "toolgate.yaml")) {
				t.Fatalf("the entry does not name absolute paths: %+v", e)
			}
			if got := e.Env["TOOLGATE_DB"]; got != filepath.Join(here, journal) {
				t.Fatalf("TOOLGATE_DB = %q, want the journal this shell uses, %s", got, filepath.Join(here, journal))
			}
			if !placeholder.MatchString(e.Env["SHOP_TOKEN"]) {
				t.Fatalf("SHOP_TOKEN = %q in the entry, want the client's placeholder for it", e.Env["SHOP_TOKEN"])
			}

			// The client starts the server elsewhere, with the entry's
			// environment, the secret filled in as the client would.
			server := exec.Command(e.Command, e.Args...)
			server.Dir = t.TempDir()
			server.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
			for k, v := range e.Env {
				if placeholder.MatchString(v) {
					v = "sk-live-do-not-print"
				}
				server.Env = append(server.Env, k+"="+v)
			}
			ctx := context.Background()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: server}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range tools.Tools {
				names = append(names, tool.Name)
			}
			if !slices.Contains(names, "createOrder") || !slices.Contains(names, "listOrders") {
				t.Fatalf("the client's server lists %v", names)
			}
			effects := api.Effects()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "createOrder", Arguments: map[string]any{"body": map[string]any{"sku": "A" + client, "quantity": 1}}})
			if err != nil || res.IsError || api.Effects() != effects+1 {
				t.Fatalf("a call through the client's server: %v %+v", err, res)
			}
			if _, err := os.Stat(filepath.Join(here, journal)); err != nil {
				t.Fatalf("the call was journaled elsewhere than the entry says: %v", err)
			}
		})
	}
}

// entryOf finds the server's entry in a client's configuration.
func entryOf(t *testing.T, client string, out []byte) clientEntry {
	t.Helper()
	var doc struct {
		MCPServers map[string]clientEntry `json:"mcpServers"`
		Servers    map[string]clientEntry `json:"servers"`
		Inputs     []struct {
			ID       string `json:"id"`
			Password bool   `json:"password"`
		} `json:"inputs"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("%s: %v\n%s", client, err, out)
	}
	servers := doc.MCPServers
	if client == "vscode" {
		servers = doc.Servers
		if len(doc.Inputs) != 1 || !doc.Inputs[0].Password {
			t.Fatalf("vscode: inputs %+v, want one password prompt for the secret", doc.Inputs)
		}
	}
	e, ok := servers["shop"]
	if !ok || len(servers) != 1 {
		t.Fatalf("%s: no server named after the document (shop):\n%s", client, out)
	}
	return e
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
