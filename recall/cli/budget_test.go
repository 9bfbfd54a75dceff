package cli_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/recall/cli"
	"github.com/rubicon-go/rubicon/recall/sandbox"
)

// binary runs the recall-archive binary bin with env added to the
// environment.
func binary(t *testing.T, bin string, env []string, args ...string) result {
	t.Helper()
	return answering(t, bin, "", env, args...)
}

// TestBudgetCommandAndPlainRuns runs the binary: 'run --budget' sets the
// batch's budget, a plain 'run' keeps it, a run asking for another is
// refused and says how to change it, 'budget' changes it and lists who
// changed it; what the budget refused is reported as such, with what it
// lacks, retry-failed leaves it, and the next run after the budget is
// raised sends it.
func TestBudgetCommandAndPlainRuns(t *testing.T) {
	t.Parallel()
	bin := testkit.Binary(t, "cmd/recall-archive")
	rec := t.TempDir()
	for i := range 4 {
		testkit.Tone(t, filepath.Join(rec, fmt.Sprintf("r%d.mp3", i)), 200+50*i, time.Duration(30+i)*time.Second)
	}
	sb := sandbox.New(sandbox.Options{})
	srv := httptest.NewServer(sb)
	t.Cleanup(func() { sb.Close(); srv.Close() })
	env := []string{"RECALL_DB=" + filepath.Join(t.TempDir(), "r.db"), "XDG_CACHE_HOME=" + t.TempDir(), "USER=ann", "OPENAI_API_KEY=sk-test"}
	if r := binary(t, bin, env, "add", "bb", rec); r.code != 0 {
		t.Fatalf("add: %d %s", r.code, r.stderr)
	}
	// The sandbox's server as a provider of real money: the sandbox's own
	// play money meets no budget.
	runArgs := []string{"run", "bb", "--provider", "openai", "--provider-url", srv.URL, "--workers", "1"}

	// Each recording costs $0.0031 to $0.0034: $0.004 pays for one.
	r := binary(t, bin, env, append(runArgs, "--budget", "0.004")...)
	if r.code != cli.ExitItemProblems || !strings.Contains(r.stdout, "1 recording done") || !strings.Contains(r.stdout, "3 refused by budget") ||
		!strings.Contains(r.stdout, "needs $0.00") || !strings.Contains(r.stdout, "recall-archive budget bb") || strings.Contains(r.stdout, "retry-failed") {
		t.Fatalf("run --budget 0.004: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = binary(t, bin, env, runArgs...)
	if !strings.Contains(r.stdout, "budget $0.004000") || !strings.Contains(r.stdout, "1 recording done") || len(sb.Charges()) != 1 {
		t.Fatalf("a plain run after run --budget: exit %d, %d charges\n%s%s", r.code, len(sb.Charges()), r.stdout, r.stderr)
	}
	if r = binary(t, bin, env, "status", "bb"); !strings.Contains(r.stdout, "budget $0.004000") || !strings.Contains(r.stdout, "3 refused by budget") {
		t.Fatalf("status: %s%s", r.stdout, r.stderr)
	}
	if r = binary(t, bin, env, "retry-failed", "bb", "--safe-only", "--queue-only"); r.code != 0 || !strings.Contains(r.stdout, "0 files and 0 requests") {
		t.Fatalf("retry-failed after refusals: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = binary(t, bin, env, append(runArgs, "--budget", "0.05")...)
	if r.code != cli.ExitFailure || !strings.Contains(r.stderr, "budget of $0.004000") || !strings.Contains(r.stderr, "'recall-archive budget bb 0.050000'") || len(sb.Charges()) != 1 {
		t.Fatalf("run with another budget: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = binary(t, bin, env, "budget", "bb", "0.05", "--by", "bob"); r.code != 0 || !strings.Contains(r.stdout, "changed from $0.004000 to $0.050000") {
		t.Fatalf("budget bb 0.05: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = binary(t, bin, env, "budget", "bb", "0.05"); r.code != 0 || !strings.Contains(r.stdout, "stays $0.050000") {
		t.Fatalf("budget bb 0.05 again: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = binary(t, bin, env, "budget", "bb", "lots"); r.code != cli.ExitUsage || !strings.Contains(r.stderr, `"lots"`) {
		t.Fatalf("budget bb lots: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = binary(t, bin, env, runArgs...); r.code != 0 || !strings.Contains(r.stdout, "4 recordings done") || len(sb.Charges()) != 4 {
		t.Fatalf("run after raising the budget: exit %d, %d charges\n%s%s", r.code, len(sb.Charges()), r.stdout, r.stderr)
	}
	r = binary(t, bin, env, "budget", "bb")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 4 || !strings.Contains(lines[2], "none -> $0.004000  by ann (run --budget)") ||
		!strings.Contains(lines[3], "$0.004000 -> $0.050000  by bob (budget)") {
		t.Fatalf("budget bb: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = binary(t, bin, env, "__complete", "bu"); !strings.Contains(r.stdout, "budget\t") {
		t.Errorf("the shells' completion does not know the budget command:\n%s", r.stdout)
	}
}

// TestBudgetOfTheEstimate runs the binary: with a truncated MP3 (whose
// header claims five times its audio) and a 2 s file among the
// recordings, a budget equal to what 'estimate' says transcribes every
// one, and the provider charges exactly that.
func TestBudgetOfTheEstimate(t *testing.T) {
	t.Parallel()
	bin := testkit.Binary(t, "cmd/recall-archive")
	rec, tmp := t.TempDir(), t.TempDir()
	testkit.Tone(t, filepath.Join(rec, "two.wav"), 300, 2*time.Second)
	testkit.Tone(t, filepath.Join(rec, "seven.mp3"), 400, 7*time.Second)
	testkit.Tone(t, filepath.Join(tmp, "long.mp3"), 500, 68*time.Second, "-b:a", "128k")
	long, err := os.ReadFile(filepath.Join(tmp, "long.mp3"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(rec, "truncated.mp3"), long[:200_000], 0o644)
	sb := sandbox.New(sandbox.Options{})
	srv := httptest.NewServer(sb)
	t.Cleanup(func() { sb.Close(); srv.Close() })
	env := []string{"RECALL_DB=" + filepath.Join(t.TempDir(), "r.db"), "XDG_CACHE_HOME=" + t.TempDir()}
	if r := binary(t, bin, env, "add", "bb", rec); r.code != 0 {
		t.Fatalf("add: %d %s", r.code, r.stderr)
	}
	r := binary(t, bin, env, "--json", "estimate", "bb")
	var est struct {
		Cost int64 `json:"cost_micro_usd"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &est); err != nil || est.Cost == 0 {
		t.Fatalf("estimate: %v\n%s%s", err, r.stdout, r.stderr)
	}
	budget := fmt.Sprintf("%d.%06d", est.Cost/1_000_000, est.Cost%1_000_000)
	r = binary(t, bin, env, "run", "bb", "--provider-url", srv.URL, "--budget", budget)
	if r.code != 0 || !strings.Contains(r.stdout, "3 recordings done") || !strings.Contains(r.stdout, "0 refused by budget") {
		t.Fatalf("run --budget %s (the estimate): exit %d\n%s%s", budget, r.code, r.stdout, r.stderr)
	}
	var charged int64
	for _, c := range sb.Charges() {
		charged += int64(c.Amount)
	}
	if charged != est.Cost {
		t.Errorf("the provider charged %d micro-dollars for an estimate of %d", charged, est.Cost)
	}
}
