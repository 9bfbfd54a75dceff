package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/rubicon-go/rubicon/internal/schematest"
	"github.com/rubicon-go/rubicon/recall/cli"
)

// TestLanguageEndToEnd runs a recording through the sandbox, which
// detects English as whisper-1 names it ("english"), and again asking for
// German: each JSON export says the transcript's language as a tag, and
// whether the provider detected it or it was asked for.
func TestLanguageEndToEnd(t *testing.T) {
	t.Parallel()
	db, env, _ := addedTalk(t)
	for _, c := range []struct {
		args     []string
		language string
		detected bool
	}{
		{[]string{"run", "talks"}, "en", true},
		{[]string{"retranscribe", "talks", "--provider", "sandbox", "--language", "de", "--yes"}, "de", false},
	} {
		if r := run(t, env, append([]string{"--db", db}, c.args...)...); r.code != cli.ExitOK {
			t.Fatalf("%q: exit %d\n%s%s", c.args, r.code, r.stdout, r.stderr)
		}
		out := t.TempDir()
		if r := run(t, env, "--db", db, "export", "talks", "--out", out, "--format", "json", "--include-sandbox"); r.code != cli.ExitOK {
			t.Fatalf("export: exit %d\n%s", r.code, r.stderr)
		}
		data, err := os.ReadFile(filepath.Join(out, "talk.json"))
		if err != nil {
			t.Fatal(err)
		}
		schematest.Check(t, "recall-archive/transcript.json", data)
		var doc struct {
			Language string `json:"language"`
			Detected *bool  `json:"language_detected"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Language != c.language || (doc.Detected != nil && *doc.Detected) != c.detected || (doc.Detected == nil) == c.detected {
			t.Errorf("after %q: language %q, detected %v; want %q, %v\n%s", c.args, doc.Language, doc.Detected, c.language, c.detected, data)
		}
	}
}
