package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rubicon-go/rubicon/internal/schematest"
	"github.com/rubicon-go/rubicon/recall/cli"
	"github.com/rubicon-go/rubicon/recall/provider"
)

// TestBatchesAndCompletion lists two batches, and completes their names
// and the providers' from the shell's words.
func TestBatchesAndCompletion(t *testing.T) {
	dir := t.TempDir()
	recording(t, filepath.Join(dir, "a.mp3"))
	recording(t, filepath.Join(dir, "sub", "b.mp3"))
	env := map[string]string{cli.DBEnv: filepath.Join(t.TempDir(), "r.db"), "XDG_CACHE_HOME": t.TempDir()}
	if r := run(t, env, "batches"); r.code != cli.ExitOK {
		t.Fatalf("batches of a new archive: %d %s", r.code, r.stderr)
	}
	for _, b := range []string{"talks", "interviews"} {
		if r := run(t, env, "add", b, dir); r.code != cli.ExitOK {
			t.Fatalf("add: %d %s", r.code, r.stderr)
		}
	}
	if r := run(t, env, "run", "talks", "--json"); r.code != cli.ExitOK {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	r := run(t, env, "batches", "--json")
	schematest.Check(t, "recall-archive/batches.json", []byte(r.stdout))
	if !strings.Contains(r.stdout, `"name": "interviews"`) || !strings.Contains(r.stdout, `"files": 2`) || !strings.Contains(r.stdout, `"done": 1`) {
		t.Errorf("batches --json:\n%s", r.stdout)
	}
	text := run(t, env, "batches").stdout
	if !strings.HasPrefix(text, "BATCH ") || !strings.Contains(text, "\n2 batches\n") || strings.Index(text, "interviews") > strings.Index(text, "talks") {
		t.Errorf("batches:\n%s", text)
	}

	words := func(args ...string) []string {
		t.Helper()
		r := run(t, env, append([]string{"__complete"}, args...)...)
		var out []string
		for _, line := range strings.Split(r.stdout, "\n") {
			if line != "" && !strings.HasPrefix(line, ":") {
				out = append(out, line)
			}
		}
		return out
	}
	if got := words("status", ""); strings.Join(got, " ") != "interviews talks" {
		t.Errorf("status completes %q", got)
	}
	if got := words("ambiguous", "--db", env[cli.DBEnv], "t"); !strings.Contains(strings.Join(got, " "), "talks") {
		t.Errorf("ambiguous --db completes %q", got)
	}
	if got := words("run", "talks", "--provider", ""); strings.Join(got, " ") != strings.Join(provider.Names(), " ") {
		t.Errorf("--provider completes %q, want %q", got, provider.Names())
	}
	for _, cmd := range []string{"search", "remove"} {
		if got := words(cmd, "--batch", ""); strings.Join(got, " ") != "interviews talks" {
			t.Errorf("%s --batch completes %q", cmd, got)
		}
	}
	missing := filepath.Join(t.TempDir(), "none.db")
	if got := words("status", "--db", missing, ""); len(got) != 0 {
		t.Errorf("a missing archive completes %q", got)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("completing a batch name made an archive")
	}
}

// TestSearchWithinABatch counts the matches of a batch, past --limit,
// with the documented syntax, and refuses a query it cannot read as a
// usage error.
func TestSearchWithinABatch(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	recording(t, filepath.Join(dir, "a.mp3"))
	env := map[string]string{cli.DBEnv: filepath.Join(t.TempDir(), "r.db"), "XDG_CACHE_HOME": t.TempDir()}
	for _, args := range [][]string{{"add", "talks", dir}, {"add", "empty", other}, {"run", "talks"}} {
		if r := run(t, env, args...); r.code != cli.ExitOK {
			t.Fatalf("%q: %d %s", args, r.code, r.stderr)
		}
	}
	r := run(t, env, "search", "--json", "--include-sandbox", "--batch", "talks", "--limit", "1", `"placeholder transcript" OR segm*`)
	schematest.Check(t, "recall-archive/search.json", []byte(r.stdout))
	var res struct {
		Batch string            `json:"batch"`
		Total int               `json:"total"`
		Hits  []json.RawMessage `json:"hits"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.Batch != "talks" || len(res.Hits) != 1 || res.Total < 1 {
		t.Fatalf("search --batch talks --limit 1: %v\n%s", err, r.stdout)
	}
	if text := run(t, env, "search", "--include-sandbox", "--batch", "empty", "segm*").stdout; text != "no matches in batch empty\n" {
		t.Errorf("search of a batch without the recording: %q", text)
	}
	if r := run(t, env, "search", "--batch", "nope", "x"); r.code != cli.ExitFailure || !strings.Contains(r.stderr, `"nope"`) {
		t.Errorf("search of an unknown batch: %d %q", r.code, r.stderr)
	}
	if r := run(t, env, "search", `"open`); r.code != cli.ExitUsage || !strings.Contains(r.stderr, "is not closed") {
		t.Errorf("search of an open phrase: %d %q", r.code, r.stderr)
	}
}
