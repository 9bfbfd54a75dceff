package cli_test

import (
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
	missing := filepath.Join(t.TempDir(), "none.db")
	if got := words("status", "--db", missing, ""); len(got) != 0 {
		t.Errorf("a missing archive completes %q", got)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("completing a batch name made an archive")
	}
}
