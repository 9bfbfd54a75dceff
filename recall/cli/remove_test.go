package cli_test

import (
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rubicon-go/rubicon/internal/schematest"
	"github.com/rubicon-go/rubicon/recall/cli"
	"github.com/rubicon-go/rubicon/recall/sandbox"
)

// TestRemoveKeepsWhatWasPaid removes a file and adds it again without
// paying twice, keeps a file whose request may have been charged, and
// removes the batch's files once it is resolved, the money kept.
func TestRemoveKeepsWhatWasPaid(t *testing.T) {
	dir := t.TempDir()
	recording(t, filepath.Join(dir, "a.mp3"))
	sb := sandbox.New(sandbox.Options{})
	srv := httptest.NewServer(sb)
	defer srv.Close()
	defer sb.Close()
	env := map[string]string{cli.DBEnv: filepath.Join(t.TempDir(), "r.db"), "XDG_CACHE_HOME": t.TempDir()}
	for _, args := range [][]string{{"add", "b", dir}, {"run", "b", "--provider-url", srv.URL}} {
		if r := run(t, env, args...); r.code != cli.ExitOK {
			t.Fatalf("%q: %d %s", args, r.code, r.stderr)
		}
	}
	file := filepath.Join(dir, "a.mp3")
	r := run(t, env, "remove", "--batch", "b", file, "--json")
	schematest.Check(t, "recall-archive/remove.json", []byte(r.stdout))
	if r.code != cli.ExitOK || !strings.Contains(r.stdout, `"removed": [`) || !strings.Contains(r.stdout, `"sandbox_play_money_spent_micro_usd": 2`) {
		t.Fatalf("remove: %d %s%s", r.code, r.stdout, r.stderr)
	}
	if st := run(t, env, "status", "b").stdout; !strings.Contains(st, "0 added") || !strings.Contains(st, "spent") {
		t.Errorf("status after remove:\n%s", st)
	}
	if r := run(t, env, "remove", "--batch", "b", file); r.code != cli.ExitFailure || !strings.Contains(r.stderr, "no file") {
		t.Errorf("removing it twice: %d %q", r.code, r.stderr)
	}
	if r := run(t, env, "remove", file); r.code != cli.ExitUsage || !strings.Contains(r.stderr, "--batch") {
		t.Errorf("remove without --batch: %d %q", r.code, r.stderr)
	}
	// Added again, it is transcribed already: nothing is paid.
	charges := len(sb.Charges())
	for _, args := range [][]string{{"add", "b", dir}, {"run", "b", "--provider-url", srv.URL}} {
		if r := run(t, env, args...); r.code != cli.ExitOK {
			t.Fatalf("%q: %d %s", args, r.code, r.stderr)
		}
	}
	if len(sb.Charges()) != charges {
		t.Errorf("adding a removed file again paid again: %d charges, then %d", charges, len(sb.Charges()))
	}

	env, _ = ambiguousArchive(t)
	r = run(t, env, "remove", "--batch", "b")
	if r.code != cli.ExitFailure || !strings.Contains(r.stderr, "may have been charged") {
		t.Fatalf("remove of a batch with an ambiguous request: %d %q", r.code, r.stderr)
	}
	key := regexp.MustCompile(`transcribe/\S+`).FindString(run(t, env, "ambiguous").stdout)
	if r := run(t, env, "resolve", key, "--applied", "--note", "charged on the usage page"); r.code != cli.ExitOK {
		t.Fatalf("resolve: %d %s", r.code, r.stderr)
	}
	r = run(t, env, "remove", "--batch", "b")
	if r.code != cli.ExitOK || !strings.Contains(r.stdout, "removed all its files (1 file); what it paid stays in the ledger") {
		t.Fatalf("remove --batch: %d %s%s", r.code, r.stdout, r.stderr)
	}
	if bs := run(t, env, "batches").stdout; !strings.Contains(bs, "(play $0.000") {
		t.Errorf("the batch's money after removing its files:\n%s", bs)
	}
}
