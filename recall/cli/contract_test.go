package cli_test

import (
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rubicon-go/rubicon/internal/schematest"
	"github.com/rubicon-go/rubicon/recall/cli"
	"github.com/rubicon-go/rubicon/recall/sandbox"
)

// ambiguousArchive returns the environment of an archive whose batch b
// holds one recording with an ambiguous request, and the URL of the
// sandbox that was sent it.
func ambiguousArchive(t *testing.T) (map[string]string, string) {
	t.Helper()
	dir := t.TempDir()
	recording(t, filepath.Join(dir, "a.mp3"))
	sb := sandbox.New(sandbox.Options{Plan: sandbox.Plan{ByRequest: map[int]sandbox.Fault{1: sandbox.ChargeDrop}}})
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	t.Cleanup(sb.Close)
	env := map[string]string{cli.DBEnv: filepath.Join(t.TempDir(), "r.db"), "XDG_CACHE_HOME": t.TempDir()}
	if r := run(t, env, "add", "b", dir); r.code != cli.ExitOK {
		t.Fatalf("add: %d %s", r.code, r.stderr)
	}
	if r := run(t, env, "run", "b", "--provider-url", srv.URL); r.code != cli.ExitAmbiguous {
		t.Fatalf("run with a dropped answer: exit %d %s%s", r.code, r.stdout, r.stderr)
	}
	return env, srv.URL
}

// TestAmbiguousAndResolveOutputs checks ambiguous --json and resolve
// --json against their schemas (snake_case, the batch named, no zero
// times, seconds named so), and runs the resolve line that ambiguous
// suggests as a person pastes it into a shell.
func TestAmbiguousAndResolveOutputs(t *testing.T) {
	env, _ := ambiguousArchive(t)
	r := run(t, env, "ambiguous", "--json")
	schematest.Check(t, "recall-archive/ambiguous.json", []byte(r.stdout))
	if !strings.Contains(r.stdout, `"batches": [`) || !strings.Contains(r.stdout, `"duration_seconds"`) {
		t.Errorf("ambiguous --json does not name the batch or the duration in seconds:\n%s", r.stdout)
	}
	r = run(t, env, "retry-failed", "b", "--safe-only", "--queue-only", "--json")
	schematest.Check(t, "recall-archive/retry-failed.json", []byte(r.stdout))
	if !strings.Contains(r.stdout, `"state": "ambiguous"`) {
		t.Errorf("retry-failed --json does not list the ambiguous request it left:\n%s", r.stdout)
	}
	text := run(t, env, "ambiguous").stdout
	pasted := regexp.MustCompile(`if charged: +(recall-archive resolve .*)`).FindStringSubmatch(text)
	if pasted == nil || !strings.Contains(text, "batch:     b\n") {
		t.Fatalf("ambiguous names no batch or suggests no resolve line:\n%s", text)
	}

	bin := filepath.Join(t.TempDir(), "recall-archive")
	if b, err := exec.Command("go", "build", "-o", bin, "../../cmd/recall-archive").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, b)
	}
	sh := exec.Command("sh", "-c", pasted[1]+" --json")
	sh.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"), cli.DBEnv+"="+env[cli.DBEnv])
	out, err := sh.Output()
	if err != nil {
		t.Fatalf("%s, as pasted: %v\n%s", pasted[1], err, out)
	}
	schematest.Check(t, "recall-archive/resolve.json", out)
	if strings.Contains(string(out), "0001-01-01") || !strings.Contains(string(out), `"state": "applied"`) {
		t.Errorf("resolve --json:\n%s", out)
	}
}

// TestEveryJSONOutputMatchesItsSchema runs the commands a script reads
// with --json, on a batch with a file that is not media, and checks each
// output against its schema in docs/schemas.
func TestEveryJSONOutputMatchesItsSchema(t *testing.T) {
	dir := t.TempDir()
	recording(t, filepath.Join(dir, "a.mp3"))
	os.WriteFile(filepath.Join(dir, "fake.wav"), []byte("text"), 0o644)
	env := map[string]string{cli.DBEnv: filepath.Join(t.TempDir(), "r.db"), "XDG_CACHE_HOME": t.TempDir()}
	for _, c := range []struct {
		schema string
		args   []string
	}{
		{"add", []string{"add", "b", dir}},
		{"estimate", []string{"estimate", "b"}},
		{"budget", []string{"budget", "b", "1"}},
		{"run", []string{"run", "b"}},
		{"status", []string{"status", "b"}},
		{"budget", []string{"budget", "b"}},
		{"retry-failed", []string{"retry-failed", "b", "--safe-only", "--queue-only"}},
		{"retry-failed", []string{"retry-failed", "b", "--safe-only"}},
		{"batches", []string{"batches"}},
		{"search", []string{"search", "--include-sandbox", "segment"}},
		{"ambiguous", []string{"ambiguous"}},
	} {
		r := run(t, env, append(c.args, "--json")...)
		if r.code != cli.ExitOK && r.code != cli.ExitItemProblems {
			t.Fatalf("%q: exit %d %s", c.args, r.code, r.stderr)
		}
		schematest.Check(t, "recall-archive/"+c.schema+".json", []byte(r.stdout))
	}
}

// TestVersionAndReconcileOutputs checks version --json and reconcile
// --json against their schemas.
func TestVersionAndReconcileOutputs(t *testing.T) {
	schematest.Check(t, "version.json", []byte(run(t, nil, "version", "--json").stdout))
	env, url := ambiguousArchive(t)
	r := run(t, env, "reconcile", "b", "--provider-url", url, "--json")
	schematest.Check(t, "recall-archive/reconcile.json", []byte(r.stdout))
	if r.code != cli.ExitOK || !strings.Contains(r.stdout, `"state": "`) {
		t.Errorf("reconcile: %d %s%s", r.code, r.stdout, r.stderr)
	}
}
