package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rubicon-go/rubicon/toolgate/cli"
)

// With authentication configured, serve needs an upstream a person named:
// the document is untrusted, and so are the servers it names.
func TestServeKeepsTheSecretFromTheDocumentsServers(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "toolgate.yaml")
	os.WriteFile(cfg, []byte("upstream:\n  auth: {type: bearer, env: SHOP_TOKEN}\n"), 0o600)
	code, _, errOut := run("serve", "../../examples/shop/openapi.yaml", "--config", cfg, "--stdio", "--db", filepath.Join(dir, "j.db"))
	if code != cli.ExitFailure || !strings.Contains(errOut, "--upstream URL") || !strings.Contains(errOut, "upstream.url") || !strings.Contains(errOut, "$SHOP_TOKEN") {
		t.Errorf("serve with auth and only the document's server: exit %d, %q", code, errOut)
	}
	// Given an upstream, it goes on (and stops at the missing secret).
	code, _, errOut = run("serve", "../../examples/shop/openapi.yaml", "--config", cfg, "--stdio", "--db", filepath.Join(dir, "j.db"), "--upstream", "http://127.0.0.1:9")
	if code != cli.ExitFailure || !strings.Contains(errOut, "needs $SHOP_TOKEN") {
		t.Errorf("serve with auth and --upstream: exit %d, %q", code, errOut)
	}
}

// A scheme that forwards the MCP client's token needs Streamable HTTP,
// and cannot be served with toolgate's own token, which would take the
// same header.
func TestServeForwardsOnlyOverHTTPWithoutItsOwnToken(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "toolgate.yaml")
	os.WriteFile(cfg, []byte("upstream:\n  schemes:\n    oauth: {type: forward}\n"), 0o600)
	code, _, errOut := run("serve", "../../examples/shop/openapi.yaml", "--config", cfg, "--stdio", "--db", filepath.Join(dir, "j.db"), "--upstream", "http://127.0.0.1:9")
	if code != cli.ExitFailure || !strings.Contains(errOut, "upstream.schemes.oauth forwards the MCP client's bearer token, which only Streamable HTTP carries: serve with --http ADDR") {
		t.Errorf("forward over stdio: exit %d, %q", code, errOut)
	}
	var out, stderr strings.Builder
	code = cli.Main(t.Context(), []string{"serve", "../../examples/shop/openapi.yaml", "--config", cfg, "--http", "127.0.0.1:0", "--db", filepath.Join(dir, "j.db"),
		"--upstream", "http://127.0.0.1:9"}, cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &stderr,
		Getenv: func(k string) string {
			return map[string]string{"TOOLGATE_TOKEN": strings.Repeat("t", 20), "XDG_DATA_HOME": dir}[k]
		}})
	if code != cli.ExitFailure || !strings.Contains(stderr.String(), "unset $TOOLGATE_TOKEN") {
		t.Errorf("forward with a server token: exit %d, %q", code, stderr.String())
	}
}
