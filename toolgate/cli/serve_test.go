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
