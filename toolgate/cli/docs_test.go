package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rubicon-go/rubicon/internal/doccheck"
	"github.com/rubicon-go/rubicon/toolgate/cli"
)

// TestDocsInspect: docs/toolgate.md shows what inspect prints for the
// example shop, whole.
func TestDocsInspect(t *testing.T) {
	code, out, errOut := run("inspect", "../../examples/shop/openapi.yaml")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	doccheck.Transcript(t, "toolgate-inspect-shop", out)
}

// TestDocsServeRefusesMissingCredentials: docs/configuration.md shows how
// serve refuses a document whose exposed tools need a credential that the
// configuration does not give (Uber's example document).
func TestDocsServeRefusesMissingCredentials(t *testing.T) {
	code, _, errOut := run("serve", "../testdata/corpus/oai-examples/v2.0_yaml_uber.yaml", "--upstream", "http://127.0.0.1:9", "--stdio")
	if code == cli.ExitOK {
		t.Fatalf("serve started without the credential: %s", errOut)
	}
	doccheck.Transcript(t, "toolgate-serve-missing-credentials", errOut)
}

// TestDocsClientConfig: docs/mcp-clients.md shows the VS Code entry for
// the example shop as client-config prints it, for a user whose home is
// /home/ana, with the files in ~/shop and toolgate in ~/go/bin.
func TestDocsClientConfig(t *testing.T) {
	home := t.TempDir()
	shop := filepath.Join(home, "shop")
	if err := os.MkdirAll(shop, 0o755); err != nil {
		t.Fatal(err)
	}
	spec, err := os.ReadFile("../../examples/shop/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	config := "upstream:\n  url: http://127.0.0.1:8080\n  schemes:\n    oauth: {type: bearer, env: SHOP_TOKEN}\n"
	for name, data := range map[string][]byte{"openapi.yaml": spec, "toolgate.yaml": []byte(config)} {
		if err := os.WriteFile(filepath.Join(shop, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut bytes.Buffer
	env := map[string]string{"HOME": home, "XDG_DATA_HOME": filepath.Join(home, ".local", "share")}
	code := cli.Main(context.Background(), []string{"client-config", filepath.Join(shop, "openapi.yaml"), "--config", filepath.Join(shop, "toolgate.yaml"), "--client", "vscode"},
		cli.Env{Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return env[k] }})
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	got := strings.ReplaceAll(out.String(), exe, "/home/ana/go/bin/toolgate")
	got = strings.ReplaceAll(got, home, "/home/ana")
	doccheck.Transcript(t, "toolgate-client-config-vscode", got)
}
