package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rubicon-go/rubicon/toolgate/cli"
)

func run(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := cli.Main(context.Background(), args, cli.Env{Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }})
	return code, out.String(), errOut.String()
}

func TestInspectTable(t *testing.T) {
	code, out, errOut := run("inspect", "../../examples/shop/openapi.yaml")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"TOOL", "RISK", "EXPOSED", "RETRY", "DEADLINE",
		"deleteOrder", "destructive", "hidden: destructive tools need expose: true",
		"listApiKeys", "privileged", `it reads credentials, which is privileged too ("api-keys" in the path)`,
		"createOrder", "only if not sent (ambiguous otherwise)",
		"7 tools: 2 read, 2 write, 2 destructive, 1 privileged; 4 exposed",
		"tools/list:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect lacks %q:\n%s", want, out)
		}
	}
}

func TestInspectJSONWithConfig(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "toolgate.yaml")
	os.WriteFile(cfg, []byte("tools:\n  refundOrder:\n    expose: true\n    retry: opted_in\n"), 0o644)
	code, out, errOut := run("inspect", "--config", cfg, "--json", "../../examples/shop/openapi.yaml")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Summary struct {
			Exposed  int      `json:"exposed"`
			Warnings []string `json:"warnings"`
		}
		Tools []struct {
			Name, Retry, Exposure string
			Exposed               bool
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got.Summary.Exposed != 5 || len(got.Summary.Warnings) != 1 || !strings.Contains(got.Summary.Warnings[0], "refundOrder") {
		t.Fatalf("summary %+v", got.Summary)
	}
	for _, tl := range got.Tools {
		if tl.Name == "refundOrder" && (!tl.Exposed || !strings.Contains(tl.Retry, "Idempotency-Key")) {
			t.Fatalf("refundOrder %+v", tl)
		}
	}
}

func TestInspectErrors(t *testing.T) {
	if code, _, _ := run(); code != cli.ExitUsage {
		t.Errorf("no command: exit %d", code)
	}
	if code, _, _ := run("inspect"); code != cli.ExitUsage {
		t.Errorf("no spec: exit %d", code)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte("{\"openapi\": \"3.0.0\",\n \"paths\": {,}}"), 0o644)
	code, _, errOut := run("inspect", bad)
	if code != cli.ExitFailure || !strings.Contains(errOut, "line 2") || !strings.Contains(errOut, bad) {
		t.Errorf("a malformed spec: exit %d, %q", code, errOut)
	}
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(cfg, []byte("tools:\n  nope:\n    expose: true\n"), 0o644)
	if code, _, errOut := run("inspect", "--config", cfg, "../../examples/shop/openapi.yaml"); code != cli.ExitFailure || !strings.Contains(errOut, "nope") {
		t.Errorf("a config naming no tool: exit %d, %q", code, errOut)
	}
}
