package cli_test

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rubicon-go/rubicon/internal/schematest"
	"github.com/rubicon-go/rubicon/recall/cli"
	"github.com/rubicon-go/rubicon/recall/sandbox"
)

// TestExitCodesAndJSONAsDocumented runs each command whose exit code or
// JSON once differed from what the help says: status with ambiguous
// requests (it exited 0), export of an unknown batch (it succeeded), an
// unknown format (exit 1, not 2), an unknown provider (it spoke of a
// missing price), a bare number of seconds for --timeout (a parse error),
// a search without matches (null), and the times in JSON (nanoseconds
// with no unit in their names).
func TestExitCodesAndJSONAsDocumented(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	recording(t, filepath.Join(dir, "a.mp3"))
	recording(t, filepath.Join(dir, "sub", "b.wav"))
	sb := sandbox.New(sandbox.Options{Plan: sandbox.Plan{ByRequest: map[int]sandbox.Fault{1: sandbox.ChargeDrop}}})
	srv := httptest.NewServer(sb)
	defer srv.Close()
	defer sb.Close()
	env := map[string]string{cli.DBEnv: filepath.Join(t.TempDir(), "r.db"), "XDG_CACHE_HOME": t.TempDir()}
	if r := run(t, env, "add", "b", dir); r.code != cli.ExitOK {
		t.Fatalf("add: %d %s", r.code, r.stderr)
	}

	if r := run(t, env, "run", "b", "--provider", "whisper"); r.code != cli.ExitUsage ||
		!strings.Contains(r.stderr, `--provider "whisper": give one of sandbox, openai, groq, whispercpp, localai, speaches, deepgram, assemblyai`) {
		t.Errorf("run --provider whisper: exit %d, %q", r.code, r.stderr)
	}
	if r := run(t, env, "run", "b", "--provider-url", srv.URL, "--timeout", "5", "--workers", "1"); r.code != cli.ExitAmbiguous {
		t.Fatalf("run --timeout 5 with a dropped answer: exit %d %s%s", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{{"status", "b"}, {"status", "b", "--json"}} {
		if r := run(t, env, args...); r.code != cli.ExitAmbiguous {
			t.Errorf("%q with an ambiguous request: exit %d, want %d", args, r.code, cli.ExitAmbiguous)
		}
	}
	r := run(t, env, "status", "b", "--json")
	var st struct {
		Status map[string]any `json:"status"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || st.Status["duration_seconds"] == nil || st.Status["duration_ns"] != nil {
		t.Errorf("status --json: %v\n%s", err, r.stdout)
	}
	r = run(t, env, "estimate", "b", "--json")
	var est map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &est); err != nil || est["duration_seconds"] == nil || est["remaining_seconds"] == nil || strings.Contains(r.stdout, "_ns") {
		t.Errorf("estimate --json: %v\n%s", err, r.stdout)
	}

	if r := run(t, env, "export", "nosuchbatch", "--out", t.TempDir()); r.code != cli.ExitFailure || !strings.Contains(r.stderr, `"nosuchbatch"`) {
		t.Errorf("export of an unknown batch: exit %d, %q", r.code, r.stderr)
	}
	if r := run(t, env, "export", "b", "--out", t.TempDir(), "--format", "txt,docx"); r.code != cli.ExitUsage || !strings.Contains(r.stderr, `"docx"`) {
		t.Errorf("export --format docx: exit %d, %q", r.code, r.stderr)
	}
	out := t.TempDir()
	if r := run(t, env, "export", "b", "--out", out, "--format", "json", "--include-sandbox"); r.code != cli.ExitOK {
		t.Fatalf("export: exit %d, %q", r.code, r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(out, "*.json"))
	if len(files) != 1 {
		t.Fatalf("export wrote %v; want the one recording transcribed", files)
	}
	data, _ := os.ReadFile(files[0])
	var doc struct {
		Duration *float64 `json:"duration_seconds"`
		Segments []struct {
			Start *float64 `json:"start_seconds"`
			End   *float64 `json:"end_seconds"`
		} `json:"segments"`
	}
	if err := json.Unmarshal(data, &doc); err != nil || doc.Duration == nil || *doc.Duration < 0.9 || *doc.Duration > 1.5 ||
		len(doc.Segments) == 0 || doc.Segments[0].End == nil || *doc.Segments[0].End <= *doc.Segments[0].Start || strings.Contains(string(data), "_ns") {
		t.Errorf("the exported JSON, times in seconds for a recording of 1 s: %v\n%s", err, data)
	}

	r = run(t, env, "--json", "search", "nowhere-to-be-found")
	schematest.Check(t, "recall-archive/search.json", []byte(r.stdout))
	if r.code != cli.ExitOK || !strings.Contains(r.stdout, `"hits": []`) || !strings.Contains(r.stdout, `"total": 0`) {
		t.Errorf("--json search without matches: exit %d, %q", r.code, r.stdout)
	}
	r = run(t, env, "--json", "search", "sandbox", "--include-sandbox")
	schematest.Check(t, "recall-archive/search.json", []byte(r.stdout))
	var res struct {
		Total int              `json:"total"`
		Hits  []map[string]any `json:"hits"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || len(res.Hits) == 0 || res.Total != len(res.Hits) || res.Hits[0]["start_seconds"] == nil {
		t.Errorf("--json search: %v\n%s", err, r.stdout)
	}
}

// TestCompletionOfRecallArchive prints the completion script of each
// shell, and completes run's flags.
func TestCompletionOfRecallArchive(t *testing.T) {
	t.Parallel()
	for shell, want := range map[string]string{"bash": "__start_recall-archive", "zsh": "#compdef recall-archive", "fish": "complete -c recall-archive"} {
		if r := run(t, nil, "completion", shell); r.code != cli.ExitOK || !strings.Contains(r.stdout, want) {
			t.Errorf("completion %s: exit %d, no %q", shell, r.code, want)
		}
	}
	if r := run(t, nil, "__complete", "run", "b", "--bud"); !strings.Contains(r.stdout, "--budget\t") {
		t.Errorf("run's flags are not completed: %q", r.stdout)
	}
	if r := run(t, nil, "completion", "powershell"); r.code != cli.ExitUsage {
		t.Errorf("completion powershell: exit %d", r.code)
	}
}
