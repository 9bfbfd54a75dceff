package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
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
		"TOOL", "RISK", "REVIEW", "EXPOSED", "RETRY", "DEADLINE",
		"deleteOrder", "destructive", "hidden: destructive tools are never exposed by default; enable this one with tools.deleteOrder.expose: true",
		"exposed by defaults.expose: read+write",
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

// TestInspectConfirm checks that inspect shows the tools a person
// confirms call by call.
func TestInspectConfirm(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "toolgate.yaml")
	os.WriteFile(cfg, []byte("tools:\n  refundOrder:\n    expose: confirm\n"), 0o644)
	code, out, errOut := run("inspect", "--config", cfg, "../../examples/shop/openapi.yaml")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	row := regexp.MustCompile(`(?m)^refundOrder .*$`).FindString(out)
	if !regexp.MustCompile(`destructive\s+confirm\s+only if not sent`).MatchString(row) ||
		!strings.Contains(row, "enabled by tools.refundOrder.expose: confirm: a person accepts each call") {
		t.Errorf("refundOrder's row: %q", row)
	}
	if want := "5 exposed (2 read, 2 write, 1 destructive, 0 privileged; 1 confirmed by a person call by call)"; !strings.Contains(out, want) {
		t.Errorf("inspect lacks %q:\n%s", want, out)
	}
	code, out, errOut = run("inspect", "--config", cfg, "--json", "../../examples/shop/openapi.yaml")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Summary struct{ Confirm int }
		Tools   []struct {
			Name             string
			Exposed, Confirm bool
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got.Summary.Confirm != 1 {
		t.Errorf("summary: %d confirmed, want 1", got.Summary.Confirm)
	}
	for _, tl := range got.Tools {
		if tl.Confirm != (tl.Name == "refundOrder") || tl.Name == "refundOrder" && !tl.Exposed {
			t.Errorf("%+v", tl)
		}
	}
}

// TestInspectReviewAndRules checks that inspect shows the tools to review
// first, why, and which rule decided each tool's exposure.
func TestInspectReviewAndRules(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "gists.json")
	os.WriteFile(doc, []byte(`{"openapi": "3.0.0", "paths": {
	  "/gists/{id}": {"parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
	    "get": {"operationId": "getGist", "summary": "Get a gist", "responses": {}},
	    "patch": {"operationId": "updateGist", "summary": "Update a gist",
	      "description": "Allows you to update a gist's description and to update, delete, or rename gist files.", "responses": {}}}}}`), 0o644)
	cfg := filepath.Join(dir, "toolgate.yaml")
	os.WriteFile(cfg, []byte("defaults: {expose: read}\n"), 0o644)
	code, out, errOut := run("inspect", "--config", cfg, doc)
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"REVIEW", "review", `REVIEW: its description speaks of "delete", its name does not: is it more than a write?`,
		"hidden by defaults.expose: read (a write tool)", "exposed by defaults.expose: read",
		"review first: 1 tools where the evidence about the class disagrees: updateGist",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect lacks %q:\n%s", want, out)
		}
	}
	code, out, errOut = run("inspect", "--config", cfg, "--json", doc)
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Summary struct{ Review []string }
		Tools   []struct {
			Name          string
			Review        bool
			ReviewReasons []string `json:"review_reasons"`
			ExposureRule  string   `json:"exposure_rule"`
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(got.Summary.Review) != 1 || got.Summary.Review[0] != "updateGist" {
		t.Errorf("summary review %v", got.Summary.Review)
	}
	for _, tl := range got.Tools {
		if tl.Review != (tl.Name == "updateGist") || tl.Review != (len(tl.ReviewReasons) > 0) || tl.ExposureRule != "defaults.expose" {
			t.Errorf("%+v", tl)
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
