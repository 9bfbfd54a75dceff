package cli_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rubicon-go/rubicon/recall/cli"
)

// TestLeaseOutlastsTheTimeout: a request must be over before the lease it
// is sent under runs out, so a --lease shorter than --timeout is refused
// before anything is sent, with what to give instead; by default the lease
// is --timeout plus 30 s.
func TestLeaseOutlastsTheTimeout(t *testing.T) {
	t.Parallel()
	env := map[string]string{"RECALL_DB": filepath.Join(t.TempDir(), "r.db")}
	run1 := func(args ...string) result {
		return run(t, env, append([]string{"run", "b", "--provider-url", "http://127.0.0.1:1"}, args...)...)
	}
	for _, args := range [][]string{{"--timeout", "5s", "--lease", "2s"}, {"--lease", "5m"}} {
		if r := run1(args...); r.code != cli.ExitUsage || !strings.Contains(r.stderr, "is shorter than --timeout") || !strings.Contains(r.stderr, "give a --lease of at least") {
			t.Errorf("%q: exit %d, %s; want a usage error about the lease", args, r.code, r.stderr)
		}
	}
	if r := run1("--timeout", "10m"); r.code == cli.ExitUsage {
		t.Errorf("the default lease with --timeout 10m was refused: %s", r.stderr)
	}
}
