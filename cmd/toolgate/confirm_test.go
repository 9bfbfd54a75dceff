package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// elicitReport is what testdata/elicit.mjs reports.
type elicitReport struct {
	Tool *struct {
		Annotations struct{ DestructiveHint, ReadOnlyHint *bool }
		Description string
	}
	Calls []struct {
		Answer string
		Asked  *struct {
			Mode, Message   string
			RequestedSchema map[string]any
		}
		IsError       bool
		Text          string
		ProtocolError string
	}
}

// elicitClient runs testdata/elicit.mjs with the TypeScript SDK.
func elicitClient(t *testing.T, mode string, args ...string) elicitReport {
	t.Helper()
	out := runScript(t, nodeFor(t, "18", "@modelcontextprotocol/sdk"), "elicit.mjs", modeEnv(mode, nil), args...)
	var r elicitReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("node client printed %q: %v", out, err)
	}
	return r
}

// confirmConfig enables refundOrder, a destructive tool, with a person's
// confirmation of each call.
func confirmConfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "toolgate.yaml")
	if err := os.WriteFile(path, []byte("upstream:\n  auth: {type: none}\ntools:\n  refundOrder:\n    expose: confirm\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTypeScriptClientConfirms has a person at the TypeScript SDK's
// client decline, dismiss, accept without ticking, and accept a refund, in
// that order: only the last reaches the upstream, and the journal keeps
// only that one.
func TestTypeScriptClientConfirms(t *testing.T) {
	t.Parallel()
	inModes(t, func(t *testing.T, mode string) {
		api, base := upstream(t)
		db := filepath.Join(t.TempDir(), "journal.db")
		r := elicitClient(t, mode, "decline,cancel,unticked,accept", "stdio", binary(t), "serve", shopSpec, "--config", noCredentials, "--stdio", "--mode", mode,
			"--config", confirmConfig(t), "--upstream", base, "--db", db)

		if r.Tool == nil || r.Tool.Annotations.DestructiveHint == nil || !*r.Tool.Annotations.DestructiveHint ||
			!strings.Contains(r.Tool.Description, "shown to a person first") {
			t.Errorf("refundOrder listed as %+v", r.Tool)
		}
		if len(r.Calls) != 4 {
			t.Fatalf("%d calls reported, want 4: %+v", len(r.Calls), r.Calls)
		}
		for i, want := range []string{
			"NOT SENT: the person declined this call to refundOrder. Nothing was sent. Do not call it again unless the person asks you to.",
			"NOT SENT: the person dismissed this call to refundOrder without accepting it. Nothing was sent.",
			"NOT SENT: the person declined this call to refundOrder.",
		} {
			if c := r.Calls[i]; !c.IsError || !strings.HasPrefix(c.Text, want) || c.Asked == nil {
				t.Errorf("%s: %+v", c.Answer, c)
			}
		}
		if c := r.Calls[3]; c.IsError || !strings.Contains(c.Text, `"refunded":"o1"`) {
			t.Errorf("accept: %+v", c)
		}
		if n := api.Effects(); n != 1 {
			t.Errorf("the upstream applied %d changes, want 1: the accepted refund only", n)
		}

		asked := r.Calls[0].Asked
		for _, want := range []string{"refundOrder, a destructive tool", "POST " + base + "/orders/o1/refund\n", "X-Reason: damaged\n"} {
			if !strings.Contains(asked.Message, want) {
				t.Errorf("the person was not shown %q:\n%s", want, asked.Message)
			}
		}
		if props, _ := asked.RequestedSchema["properties"].(map[string]any); asked.Mode != "form" || props["send"] == nil {
			t.Errorf("asked in mode %q for %v", asked.Mode, asked.RequestedSchema)
		}
		if calls := run(t, "calls", "--all", "--db", db); strings.Count(calls, "/orders/{id}/refund") != 1 || !strings.Contains(calls, "applied") {
			t.Errorf("the journal should hold the accepted refund only:\n%s", calls)
		}
	})
}

// TestTypeScriptClientWithoutElicitation checks that a client that does
// not declare elicitation is refused plainly, and nothing is sent.
func TestTypeScriptClientWithoutElicitation(t *testing.T) {
	t.Parallel()
	inModes(t, func(t *testing.T, mode string) {
		api, base := upstream(t)
		r := elicitClient(t, mode, "none", "stdio", binary(t), "serve", shopSpec, "--config", noCredentials, "--stdio", "--mode", mode,
			"--config", confirmConfig(t), "--upstream", base, "--db", filepath.Join(t.TempDir(), "journal.db"))
		want := "NOT SENT: refundOrder needs a person's confirmation through MCP elicitation (a form), which this client does not support. Nothing was sent."
		if len(r.Calls) != 1 || !r.Calls[0].IsError || !strings.HasPrefix(r.Calls[0].Text, want) || r.Calls[0].Asked != nil {
			t.Errorf("%+v", r.Calls)
		}
		if n := api.Effects(); n != 0 {
			t.Errorf("the upstream applied %d changes, want 0", n)
		}
	})
}

// TestTypeScriptClientConfirmsOverHTTP asks the person over Streamable
// HTTP, where the question travels on the call's own stream.
func TestTypeScriptClientConfirmsOverHTTP(t *testing.T) {
	t.Parallel()
	inModes(t, func(t *testing.T, mode string) {
		api, base := upstream(t)
		url := serveHTTP(t, nil, "--http", "127.0.0.1:0", "--mode", mode, "--config", confirmConfig(t), "--upstream", base,
			"--db", filepath.Join(t.TempDir(), "journal.db"))
		r := elicitClient(t, mode, "decline,accept", "http", url)
		if len(r.Calls) != 2 || !strings.HasPrefix(r.Calls[0].Text, "NOT SENT") || r.Calls[1].IsError || r.Calls[1].Asked == nil {
			t.Errorf("%+v", r.Calls)
		}
		if n := api.Effects(); n != 1 {
			t.Errorf("the upstream applied %d changes, want 1", n)
		}
	})
}
